"""The verifier worker starts isolated: a module planted in the caller's working directory
(``struct.py``, imported by the worker's own protocol code) no longer runs inside the
verifier, and the worker's directory is fixed whatever the caller's is."""

from __future__ import annotations

from guiforge.envs.base import Criterion, FinalState
from guiforge.verify.runner import VerifierPool

PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('planted module ran')\nraise SystemExit(3)\n"


def test_a_module_in_the_callers_directory_is_not_imported(tmp_path, monkeypatch):
    marker = tmp_path / "ran.txt"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for name in ("struct.py", "pickle.py", "guiforge.py"):
        (cwd / name).write_text(PLANTED.format(marker=str(marker)))
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PYTHONPATH", str(cwd))  # nor through PYTHONPATH
    pool = VerifierPool(deadline_s=60)
    try:
        verdict = pool.verify([Criterion(id="answered", check={"fn": "answer_matches", "value": "42"})],
                              FinalState(answer="42"))
    finally:
        pool.close()
    assert not marker.exists(), "a module from the caller's directory ran inside the verifier"
    assert verdict.success and verdict.errors == []
