"""Deadlines counted in the awaited work's own time, so that load never turns into a
different outcome.

A deadline in wall time fails work that a loaded machine merely kept waiting: on 2 cores
shared with 30 busy processes, a step that needs 2 s of a CPU takes 30 s of wall time. What
a deadline means is "this work stopped making progress", so it is counted in the work's own
time: wall time less the time the work spent waiting for a CPU (runnable, not running: the
run delay in ``/proc/<pid>/task/<tid>/schedstat``), summed over the threads the caller is
waiting on (its actor thread, the processes it talks to and their children).

A hang that sleeps (a deadlock, a lost reply) accrues no run delay and ends at the deadline
in wall time; a hang that spins ends once it has had the deadline's worth of a CPU; a loaded
machine stretches a deadline by the delay it causes. The sum counts every runnable thread, so
it can run ahead of the critical path's own wait; the own time is therefore never less than
the CPU time the work was given (nor than wall time over ``MAX_STRETCH``, a last bound), and
never more than wall time, so every deadline ends and none is shorter than in wall time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

MAX_STRETCH = 100.0


def _schedstat(path: str) -> tuple[int, int]:
    """(ns on a CPU, ns waiting for one) of a thread."""
    with open(path, "rb") as f:
        ran, waited = f.read().split()[:2]
    return int(ran), int(waited)


def _threads_of(pid: int) -> Iterable[tuple[int, tuple[int, int]]]:
    """(tid, (ran, waited) in ns) of every thread of ``pid``."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            yield int(tid), _schedstat(f"/proc/{pid}/task/{tid}/schedstat")
        except (OSError, ValueError):
            continue


def _own_thread(tid: int) -> tuple[int, int]:
    try:
        return _schedstat(f"/proc/self/task/{tid}/schedstat")
    except (OSError, ValueError):
        return 0, 0


def _with_descendants(roots: Iterable[int]) -> set[int]:
    """``roots`` and every process below them, from the kernel's children lists."""
    out: set[int] = set()
    todo = [r for r in roots if r]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


class WorkClock:
    """Own time of the awaited work since the clock was made: ``threads`` (native ids in this
    process, e.g. an actor thread) and ``processes()`` (pids read at each look, with every
    process below them)."""

    def __init__(self, processes: Callable[[], Iterable[int]] = tuple, threads: Iterable[int] = ()):
        self._processes = processes
        self._threads = [t for t in threads if t]
        self._started = time.monotonic()
        self._base: dict[tuple[int, int], tuple[int, int]] = {}
        self._last: dict[tuple[int, int], tuple[int, int]] = {}
        self._sample(self._base)

    def _sample(self, into: dict[tuple[int, int], tuple[int, int]]) -> None:
        for tid in self._threads:
            into[(0, tid)] = _own_thread(tid)
        for pid in _with_descendants(self._processes()):
            for tid, stat in _threads_of(pid):
                into[(pid, tid)] = stat

    def used_s(self) -> tuple[float, float]:
        """(seconds on a CPU, seconds waiting for one) of the work since the clock was made.
        A thread that ended keeps what it had; one that began since counts all of it."""
        self._sample(self._last)
        ran = waited = 0
        for key, (r, w) in self._last.items():
            r0, w0 = self._base.get(key, (0, 0))
            ran, waited = ran + r - r0, waited + w - w0
        return ran / 1e9, waited / 1e9

    def wall_s(self) -> float:
        return time.monotonic() - self._started

    def own_s(self) -> float:
        """Wall time less the wait for a CPU, bounded as the module says."""
        wall = self.wall_s()
        ran, waited = self.used_s()
        return min(wall, max(wall - waited, ran, wall / MAX_STRETCH))


def wait_own(done: Callable[[float], bool], deadline_s: float, clock: WorkClock) -> bool:
    """Wait until ``done(timeout)`` (a blocking wait of at most ``timeout`` wall seconds that
    says whether the work finished) returns True, or ``deadline_s`` of the work's own time has
    passed (False). The clock is read only once the wall time has passed the deadline, and
    again each time the rest of the deadline could have run out."""
    wait = deadline_s
    while True:
        if done(wait):
            return True
        left = deadline_s - clock.own_s()
        if left <= 0:
            return False
        wait = max(left, 0.05)
