"""The host user a sandbox runs as.

As root, every sandbox gets a dedicated unprivileged uid from a fixed range, held by an
``flock`` for the sandbox's lifetime. It matters for two reasons: the kernel never applies
``RLIMIT_NPROC`` to uid 0 (a fork bomb run as root-mapped-to-1000 is unbounded), and a uid
of its own lets :meth:`SandboxUser.kill_all` end every process of the sandbox, including
ones that escaped their process group. Without root the sandbox runs as the current user
and the process limit is counted on top of that user's existing processes.
"""

from __future__ import annotations

import fcntl
import os
import random
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from guiforge.envs.sandbox.procs import pids_of_user, stop_then_kill

UID_BASE = 61000
UID_COUNT = 1000
LOCK_DIR = Path(tempfile.gettempdir()) / "guiforge-sandbox-uids"


@dataclass
class SandboxUser:
    uid: int
    gid: int
    dedicated: bool  # a uid used by nothing else: safe to kill all of its processes
    _lock_fd: int | None = None

    @classmethod
    def acquire(cls) -> SandboxUser:
        if os.geteuid() != 0:
            return cls(os.getuid(), os.getgid(), dedicated=False)
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        start = random.randrange(UID_COUNT)  # spread concurrent callers over the range
        for i in range(UID_COUNT):
            uid = UID_BASE + (start + i) % UID_COUNT
            fd = os.open(LOCK_DIR / f"{uid}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            user = cls(uid, uid, dedicated=True, _lock_fd=fd)
            user.kill_all()  # a holder that died without cleaning up may have left processes
            return user
        raise RuntimeError(
            f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use; close idle sandboxes "
            f"or remove stale locks in {LOCK_DIR}"
        )

    def popen_kwargs(self) -> dict:
        """``subprocess.Popen`` arguments that drop to this user (no-op when not root)."""
        if os.geteuid() != 0:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def nproc_offset(self) -> int:
        """Processes the user already has: a shared uid's process limit must allow them."""
        return 0 if self.dedicated else len(pids_of_user(self.uid))

    def kill_all(self, keep: Callable[[], Iterable[int]] | None = None) -> int:
        """Kill every process of this uid but those ``keep`` names (asked afresh each round)."""
        if not self.dedicated or not UID_BASE <= self.uid < UID_BASE + UID_COUNT:
            return 0

        def find() -> list[int]:
            kept = set(keep()) if keep is not None else set()
            return [p for p in pids_of_user(self.uid) if p not in kept]

        return stop_then_kill(find)

    def release(self) -> None:
        self.kill_all()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def uid_in_use(uid: int) -> bool:
    """Whether a live sandbox holds ``uid`` (its lock cannot be taken)."""
    path = LOCK_DIR / f"{uid}.lock"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return False
