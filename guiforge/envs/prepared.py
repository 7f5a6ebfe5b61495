"""Host files a task's setup may copy into a workspace: only from the run's prepared-files
root. A task file (imported, model-written, sent to an environment service) is data, and a
host path in it (``/etc/shadow``, an SSH key, the lake) must not reach the agent's
workspace, so a path is resolved (symlinks and ``..`` followed) and then checked to lie
under the root; with no root configured, no host file is read at all."""

from __future__ import annotations

from pathlib import Path


def read_prepared(root: Path | None, name: str, path: str) -> bytes:
    """The bytes of ``path`` (absolute, or relative to ``root``) for ``setup.files[name]``."""
    if root is None:
        raise ValueError(f"setup.files[{name!r}]: {path!r} is a host file, and this environment has no "
                         "prepared-files root to read it from; give the content inline (text or base64)")
    base = Path(root).resolve()
    given = Path(path)
    full = (given if given.is_absolute() else base / given).resolve()
    if not full.is_relative_to(base):
        raise ValueError(f"setup.files[{name!r}]: {path!r} is outside the prepared-files root {base}; "
                         "only files the run prepared there can be copied in")
    if not full.is_file():
        raise FileNotFoundError(f"setup.files[{name!r}]: no prepared file {full}")
    return full.read_bytes()
