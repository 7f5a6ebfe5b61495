"""Record real sites once, replay them offline and deterministically as a web environment.

``record(url, out, drive)`` (or ``python -m guiforge.envs.replay record URL --out FILE``)
captures a session; :class:`ReplayEnv` replays it for tasks whose ``setup`` says
``{"replay": FILE}``. The recording format is described in
:mod:`guiforge.envs.replay.recording` and README.md beside this file.
"""

from guiforge.envs.replay.env import ReplayEnv
from guiforge.envs.replay.normalize import Normalizer, NormalizerConfig
from guiforge.envs.replay.recorder import record
from guiforge.envs.replay.recording import Exchange, Recording, from_har, load_recording
from guiforge.envs.replay.router import ReplayRouter

__all__ = ["Exchange", "Normalizer", "NormalizerConfig", "Recording", "ReplayEnv", "ReplayRouter",
           "from_har", "load_recording", "record"]
