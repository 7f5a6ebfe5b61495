"""A stand-in for torchaudio in the LLaMA-Factory venv (.venv-lf, scripts/bootstrap-lf.sh).

LLaMA-Factory's ``data/mm_plugin.py`` imports torchaudio at module level, for audio inputs only;
torchaudio has no wheel for this machine's CPU torch, and guiforge's exports hold no audio. Any
audio use fails loudly here rather than quietly doing nothing.
"""


def load(*args, **kwargs):
    raise RuntimeError("torchaudio is a stub in .venv-lf (scripts/lf-stubs): guiforge exports hold no audio")


class functional:  # noqa: N801 - mirrors torchaudio.functional, the one other name mm_plugin uses
    @staticmethod
    def resample(*args, **kwargs):
        raise RuntimeError("torchaudio is a stub in .venv-lf (scripts/lf-stubs): guiforge exports hold no audio")
