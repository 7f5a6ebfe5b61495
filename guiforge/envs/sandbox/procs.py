"""Finding and killing sandboxed processes from the host, by pid namespace or by uid.

Reading ``/proc`` from the host sees every process whatever namespace it lives in, so a
process that double-forks or calls ``setsid`` inside the sandbox is still found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable


def _host_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def pidns_of(pid: int) -> str | None:
    """The pid namespace id of ``pid`` (``pid:[4026532...]``), None if it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def is_live(pid: int) -> bool:
    """False for zombies (already dead, waiting to be reaped) and vanished processes."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def pids_in_pidns(namespace: str, exclude: Iterable[int] = ()) -> list[int]:
    if namespace == pidns_of(os.getpid()):
        # a sandbox's init that died and whose pid was reused would point here: never
        # treat the host's own namespace as a sandbox to be emptied
        return []
    skip = set(exclude)
    return [p for p in _host_pids() if p not in skip and pidns_of(p) == namespace and is_live(p)]


def pids_of_user(uid: int) -> list[int]:
    me = os.getpid()
    found = []
    for pid in _host_pids():
        try:
            if pid != me and os.stat(f"/proc/{pid}").st_uid == uid and is_live(pid):
                found.append(pid)
        except OSError:
            continue
    return found


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop_then_kill(find: Callable[[], list[int]], rounds: int = 50) -> int:
    """Kill everything ``find`` returns, even processes forking as fast as they can: stop
    them all first (a stopped process cannot fork), then kill the frozen set."""
    stopped: set[int] = set()
    for _ in range(rounds):
        fresh = [p for p in find() if p not in stopped]
        if not fresh:
            break
        signal_all(fresh, signal.SIGSTOP)
        stopped.update(fresh)
    signal_all(stopped, signal.SIGKILL)
    for _ in range(rounds):  # anything that slipped through the freeze
        rest = find()
        if not rest:
            break
        signal_all(rest, signal.SIGKILL)
        time.sleep(0.005)
    return len(stopped)
