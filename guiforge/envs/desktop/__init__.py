"""The desktop domain: LibreOffice (Calc, Impress, Writer) on Xvfb and a sandboxed shell
over a workspace of real files. See :mod:`guiforge.envs.desktop.env` for the variants and
the final state, :mod:`guiforge.envs.desktop.setup` for the task setup spec."""

from guiforge.envs.desktop.env import DesktopEnv
from guiforge.envs.desktop.setup import DesktopSetup

__all__ = ["DesktopEnv", "DesktopSetup"]
