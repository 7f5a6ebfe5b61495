"""Time per stage and per shard, from what the lake records: each shard's manifest entry
(its wall seconds, its thread's CPU seconds, when it started and committed) and each stage
session's record (lake/runlog.py: the stage's wall and the process's CPU while it ran).

A stage resumed over several sessions counts the sessions' wall time, not the hours between
them; sessions whose shards were all pruned since (``--fresh``, a changed config) are left
out. Where a lake has no session records (older lakes), a stage's wall time is the union of
its shards' intervals and its CPU is the sum of its shards' threads.

Environment use, for stages that roll out trajectories: the episodes' wall seconds over the
stage's wall time is how many environments were busy on average; over the instances the
stage may hold (``instances_per_domain`` times the domains it rolled out) it is utilisation.
"""

from __future__ import annotations

import pyarrow.compute as pc

from guiforge.lake.gc import Entry, all_entries
from guiforge.lake.runlog import stage_sessions
from guiforge.lake.store import Lake


def _interval(body: dict) -> tuple[float, float] | None:
    end = body.get("committed_at")
    if end is None:
        return None
    start = body.get("started_at", end - float(body.get("seconds") or 0))
    return float(start), float(end)


def _union(intervals: list[tuple[float, float]]) -> float:
    total, cur_start, cur_end = 0.0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    return total + (cur_end - cur_start if cur_end is not None else 0.0)


def _episode_seconds(lake: Lake, entries: list[Entry], domains: dict[str, str]) -> tuple[float, set[str]]:
    busy, seen = 0.0, set()
    for e in entries:
        path = e.files().get("trajectories")
        if not path:
            continue
        table = lake.read_shard(path, columns=["task_id", "wall_s"])
        busy += pc.sum(table.column("wall_s")).as_py() or 0.0  # in Arrow: a large run has a million rows
        seen.update(domains.get(task_id, "?") for task_id in pc.unique(table.column("task_id")).to_pylist())
    return busy, seen


def stage_times(lake: Lake, run_id: str, provenance: dict | None = None) -> list[dict]:
    """One row per stage of the run, in the order the stages started."""
    entries = [e for e in all_entries(lake, run_id) if not e.stage.startswith("_")]  # _kept, _compact
    if not entries:
        return []
    sessions = stage_sessions(lake, run_id)
    configs = {s["name"]: s.get("config") or {} for s in (provenance or {}).get("stages", [])}
    domains: dict[str, str] | None = None
    by_stage: dict[str, list[Entry]] = {}
    for e in entries:
        by_stage.setdefault(e.stage, []).append(e)
    out = []
    for stage, mine in by_stage.items():
        intervals = [i for i in (_interval(e.body) for e in mine) if i]
        first = min((s for s, _ in intervals), default=None)
        last = max((e for _, e in intervals), default=None)
        kept = [s for s in sessions if s["stage"] == stage and intervals and any(
            s["started_at"] <= end and s["finished_at"] >= start for start, end in intervals)]
        wall = sum(s["wall_s"] for s in kept) if kept else _union(intervals)
        thread_cpu = sum(float(e.body.get("cpu_s") or 0) for e in mine)
        cpu = sum(s["cpu_s"] for s in kept) if kept else (thread_cpu if any("cpu_s" in e.body for e in mine) else None)
        row = {"run_id": run_id, "stage": stage, "shards": len(mine), "sessions": len(kept) or None,
               "rows": sum(int(w.get("rows") or 0) for e in mine for w in e.body.get("outputs", {}).values()),
               "wall_s": round(wall, 3), "cpu_s": None if cpu is None else round(cpu, 3),
               "shard_s": round(sum(float(e.body.get("seconds") or 0) for e in mine), 3),
               "shards_per_s": round(len(mine) / wall, 4) if wall else None,
               "started_at": first, "finished_at": last, "env_busy": None, "env_utilisation": None,
               "env_leased_busy": _leased_busy(mine)}
        if any("trajectories" in e.files() for e in mine):
            if domains is None:
                tasks = lake.read_table("tasks", run_id, columns=["task_id", "domain"])
                domains = dict(zip(tasks.column("task_id").to_pylist(), tasks.column("domain").to_pylist(),
                                   strict=True))
            busy, seen = _episode_seconds(lake, mine, domains)
            if wall:
                row["env_busy"] = round(busy / wall, 3)
                per_domain = configs.get(stage, {}).get("instances_per_domain")
                if per_domain:
                    row["env_utilisation"] = round(busy / wall / (per_domain * len(seen)), 3)
        out.append(row)
    return sorted(out, key=lambda r: (r["started_at"] is None, r["started_at"] or 0))


def _leased_busy(entries: list[Entry]) -> float | None:
    """Busy over leased seconds of the stage's environment leases (each shard's manifest
    entry counts its own; guiforge.envs.usage), or None where no shard leased any."""
    counted = [e.body["env"] for e in entries if isinstance(e.body.get("env"), dict)]
    leased = sum(float(c.get("leased_s") or 0) for c in counted)
    return round(sum(float(c.get("busy_s") or 0) for c in counted) / leased, 3) if leased else None


def shard_times(lake: Lake, run_id: str, stage: str | None = None) -> list[dict]:
    """Every committed shard of the run (of ``stage``): its key, wall and CPU seconds, rows."""
    out = []
    for e in all_entries(lake, run_id):
        if e.stage.startswith("_") or (stage and e.stage != stage):  # _kept, _compact
            continue
        b = e.body
        out.append({"stage": e.stage, "key": b.get("key"), "fingerprint": b.get("fingerprint"),
                    "seconds": b.get("seconds"), "cpu_s": b.get("cpu_s"), "started_at": _interval(b)[0] if
                    _interval(b) else None, "committed_at": b.get("committed_at"),
                    "rows": sum(int(w.get("rows") or 0) for w in b.get("outputs", {}).values())})
    return sorted(out, key=lambda r: (r["started_at"] or 0, r["stage"]))
