"""Timing helpers shared by the benchmarks: wall-clock medians and the CPU time a whole
process tree (this process, Playwright's driver, Chromium's processes, X servers) spends per
operation. CPU time is the figure to trust when other jobs load the machine: wall time then
includes waiting for a core, CPU time barely moves."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each of these processes that is still alive."""
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def samples(fn: Callable[[], object], n: int,
            before: Callable[[], object] | None = None) -> tuple[list[float], list[float]]:
    """Run ``fn`` n times (``before`` runs untimed ahead of each): the wall seconds and the
    CPU seconds of the process tree of each call (processes started during the call count
    in full; ones that exit during it lose their last slice)."""
    walls, cpus = [], []
    for _ in range(n):
        if before is not None:
            before()
        pids = _tree(os.getpid())
        c0 = cpu_by_pid(pids)
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        c1 = cpu_by_pid(pids)  # read before the next /proc scan, whose own CPU must not count
        born = [pid for pid in _tree(os.getpid()) if pid not in c0]
        cpus.append(sum(v - c0[pid] for pid, v in c1.items()) + sum(cpu_by_pid(born).values()))
    return walls, cpus


def summary(walls: list[float], cpus: list[float], prefix: str) -> dict[str, float]:
    """Median and fastest wall seconds, mean CPU seconds per call."""
    return {f"{prefix}_median_s": round(statistics.median(walls), 4), f"{prefix}_min_s": round(min(walls), 4),
            f"{prefix}_cpu_s": round(sum(cpus) / len(cpus), 4)}


def measure(fn: Callable[[], object], n: int, prefix: str,
            before: Callable[[], object] | None = None) -> dict[str, float]:
    """:func:`samples` summed up by :func:`summary`."""
    return summary(*samples(fn, n, before), prefix)


def loadavg() -> float:
    return round(os.getloadavg()[0], 2)
