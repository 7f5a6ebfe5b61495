"""Gates that reject a task before any rollout: the file gate (every referenced file exists,
opens with its own library and holds the facts the task relies on)."""

from guiforge.gates.file_gate import check_files

__all__ = ["check_files"]
