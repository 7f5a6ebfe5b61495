"""Watching a process's tree from outside, for the kill battery: its CPU time (a progress
clock that does not run while the machine is busy elsewhere), every descendant seen while it
ran, and whatever of them outlives a SIGKILL of its process group (a browser, LibreOffice, a
Prefect server that should have died with it)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Seen:
    pid: int
    started: str  # clock ticks since boot: a reused pid is another process
    name: str


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].decode().split()
    except OSError:
        return None


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of ``pid`` itself (its threads, not its children)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) * TICK_S if fields else 0.0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:120] \
            or Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def alive(seen: Seen) -> bool:
    fields = _stat(seen.pid)
    return bool(fields) and fields[0] not in ("Z", "X") and fields[19] == seen.started


def descendants(root: int) -> list[Seen]:
    """Every live process below ``root`` (from one pass over /proc)."""
    parents: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))):
            stats[int(entry)] = fields
            parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        if stats[pid][0] not in ("Z", "X"):
            out.append(Seen(pid, stats[pid][19], _name(pid)))
        todo += parents.get(pid, [])
    return out


def tagged(tag: str) -> list[Seen]:
    """Live processes whose environment carries ``tag`` (what a run's children inherit, even
    one that left its parent's tree); processes of other users cannot be read and are skipped."""
    out = []
    needle = tag.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if needle in Path(f"/proc/{entry}/environ").read_bytes() and (fields := _stat(int(entry))) \
                    and fields[0] not in ("Z", "X"):
                out.append(Seen(int(entry), fields[19], _name(int(entry))))
        except OSError:
            continue
    return out


class TreeWatch:
    """Records every descendant of ``root`` while the run lasts (a pass every ``every_s``),
    so a process that left the tree (reparented when its parent died) is still known."""

    def __init__(self, root: int, every_s: float = 0.5):
        self.root, self.every_s = root, every_s
        self.seen: set[Seen] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tree-watch", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.look()

    def look(self) -> None:
        self.seen.update(descendants(self.root))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def survivors(watched: set[Seen], tag: str, wait_s: float = 10.0) -> list[Seen]:
    """What of ``watched`` (and of the processes carrying ``tag``) is still alive after
    ``wait_s``; the kernel stops a child whose parent died (PDEATHSIG) within moments."""
    done = threading.Event()
    rest: list[Seen] = []
    for _ in range(int(wait_s / 0.1) + 1):
        rest = sorted({s for s in watched if alive(s)} | set(tagged(tag)), key=lambda s: s.pid)
        if not rest:
            break
        done.wait(0.1)
    return rest


def kill_all(processes: list[Seen]) -> None:
    """SIGKILL what a battery found left over, so its next run starts clean."""
    for s in processes:
        if alive(s):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(s.pid, signal.SIGKILL)
