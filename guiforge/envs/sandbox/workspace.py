"""The one writable directory a sandbox sees, owned by the sandbox user.

As root the workspace is a tmpfs mounted with ``size=quota``: a sandbox that writes until
the disk is full gets ``ENOSPC`` at the quota while the host disk is untouched. Without the
privilege to mount, it is a plain directory and only the per-file size limit applies
(``quota_enforced`` says which).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from guiforge.envs.sandbox.identity import UID_BASE, UID_COUNT, SandboxUser, uid_in_use
from guiforge.envs.sandbox.limits import GiB

S0_TIME = 1_704_099_600  # 2024-01-01 09:00 UTC


class Workspace:
    def __init__(self, path: Path, user: SandboxUser, quota_bytes: int | None = GiB):
        self.path = Path(path)
        self.user = user
        self.quota_bytes = quota_bytes
        self.quota_enforced = False
        self.initial: dict[str, bytes] | None = None  # the files of the last populate (s0)
        self.path.mkdir(parents=True, exist_ok=True)
        if quota_bytes and os.geteuid() == 0:
            self.quota_enforced = self._mount_tmpfs(quota_bytes)
        self._chown(self.path)

    def _mount_tmpfs(self, size: int) -> bool:
        _sweep_once()
        opts = f"size={size},mode=0755,uid={self.user.uid},gid={self.user.gid},nosuid,nodev"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(self.path)],
                              capture_output=True, timeout=10)
        return done.returncode == 0

    def _chown(self, path: Path) -> None:
        if os.geteuid() == 0:
            os.chown(path, self.user.uid, self.user.gid)

    def resolve(self, relative: str) -> Path:
        """``relative`` inside the workspace; anything that would leave it is an error."""
        rel = PurePosixPath(relative)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"workspace path {relative!r} must be relative and stay inside the workspace")
        return self.path.joinpath(*rel.parts)

    def clear(self) -> None:
        """Remove everything inside (the directory itself may be a mount point)."""
        for entry in self.path.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    def write(self, relative: str, content: bytes) -> Path:
        target = self.resolve(relative)
        parent = target.parent
        missing = [p for p in [parent, *parent.parents] if not p.exists()]
        parent.mkdir(parents=True, exist_ok=True)
        for made in missing:
            self._chown(made)
        target.write_bytes(content)
        self._chown(target)
        return target

    def populate(self, files: Mapping[str, bytes]) -> None:
        self.initial = dict(files)  # s0, for the side-damage check (guiforge.verify.side_effects)
        self.clear()
        for relative, content in files.items():
            self.write(relative, content)
        # one fixed time on every file and folder of s0: `ls -l` (and the terminal window that
        # shows it) reads the same in every run; what the agent writes gets the real time
        for entry in [*self.path.rglob("*"), self.path]:
            os.utime(entry, (S0_TIME, S0_TIME), follow_symlinks=False)

    def close(self) -> None:
        if self.quota_enforced:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, timeout=10)
            self.quota_enforced = False
        shutil.rmtree(self.path, ignore_errors=True)


_swept = False


def _sweep_once() -> None:
    global _swept
    if not _swept:
        _swept = True
        sweep_stale_mounts()


def sweep_stale_mounts() -> list[str]:
    """Unmount workspace tmpfs mounts whose sandbox died without closing them (a killed
    test run, a crashed worker): a mount is stale when no live sandbox holds its uid."""
    root = tempfile.gettempdir().rstrip("/") + "/guiforge-"
    swept = []
    with open("/proc/self/mounts") as mounts:
        entries = [line.split() for line in mounts]
    for _, point, fstype, options, *_ in entries:
        if fstype != "tmpfs" or not point.startswith(root):
            continue
        uid = next((int(o[4:]) for o in options.split(",") if o.startswith("uid=")), None)
        if uid is None or not UID_BASE <= uid < UID_BASE + UID_COUNT or uid_in_use(uid):
            continue
        if subprocess.run(["umount", "-l", point], capture_output=True, timeout=10).returncode == 0:
            swept.append(point)
            target = Path(point)
            shutil.rmtree(target.parent if target.parent.name.startswith("guiforge-desktop-")
                          else target, ignore_errors=True)
    return swept
