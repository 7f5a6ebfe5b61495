"""Realism figures about the teacher, for ``guiforge stats --realism``: how long and how
varied its thoughts are, how many give a reason, and how often a trajectory with a mistake
also shows the mistake noticed and corrected."""

from __future__ import annotations

import json
import re
from typing import Any

# words that tie an action to a reason ("so", "because", "to ...", "which should")
_REASON = re.compile(r"\b(so|because|since|which should|in order to|to (?:get|see|find|keep|send|start|move|"
                     r"put|finish|complete|return|confirm|narrow|bring|include|change|mark|enter|add))\b", re.I)


def thought_figures(thoughts: list[str]) -> dict[str, Any]:
    words = [len(t.split()) for t in thoughts if t]
    if not words:
        return {}
    return {"thoughts": len(words), "mean_words": round(sum(words) / len(words), 1),
            "median_words": sorted(words)[len(words) // 2], "distinct": len(set(thoughts)),
            "distinct_share": round(len(set(thoughts)) / len(thoughts), 3),
            "with_reason_share": round(sum(bool(_REASON.search(t)) for t in thoughts if t) / len(words), 3)}


def recovery_figures(events_json: list[str | None], domains: list[str | None] | None = None) -> dict[str, Any]:
    """Over trajectories: how many hold a mistake, and of those how many its correction;
    with ``domains`` (each trajectory's task domain) the same per domain in ``by_domain``."""
    counts: dict[str | None, list[int]] = {}  # domain -> [with a mistake, also corrected]
    kinds: dict[str, int] = {}
    for raw, domain in zip(events_json, domains or [None] * len(events_json), strict=True):
        events = json.loads(raw) if raw else []
        if any(e["event"] == "mistake" for e in events):
            tally = counts.setdefault(domain, [0, 0])
            tally[0] += 1
            tally[1] += any(e["event"] == "correction" for e in events)
        for e in events:
            if e["event"] == "mistake":
                kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    with_mistake, corrected = (sum(t[i] for t in counts.values()) for i in (0, 1))
    figures = {"trajectories": len(events_json), "with_mistake": with_mistake, "with_correction": corrected,
               "recovery_share": _share(corrected, with_mistake), "mistakes_by_kind": dict(sorted(kinds.items()))}
    if domains is not None:
        figures["by_domain"] = {d: {"with_mistake": m, "with_correction": c, "recovery_share": _share(c, m)}
                                for d, (m, c) in sorted(counts.items(), key=lambda kv: str(kv[0]))}
    return figures


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def teacher_realism(lake, run_id: str | None = None) -> dict[str, Any]:
    # heavy: duckdb, numpy, imported when this runs
    from guiforge.catalog import _quote, connect, table_source

    steps, trajectories = table_source(lake, "steps"), table_source(lake, "trajectories")
    tasks = table_source(lake, "tasks")
    if not (steps and trajectories):
        return {}
    where = f" WHERE run_id = {_quote(run_id)}" if run_id else ""
    con = connect(lake)
    try:
        thoughts = [r[0] for r in con.execute(f"SELECT thought FROM {steps}{where}").fetchall()]
        # each trajectory's domain from its task (a task id names one task across runs)
        domain = (f"(SELECT any_value(k.domain) FROM {tasks} k WHERE k.task_id = t.task_id)" if tasks
                  else "NULL")
        rows = con.execute(f"SELECT t.teacher_events_json, {domain} FROM {trajectories} t"
                           + where.replace("run_id", "t.run_id")).fetchall()
    finally:
        con.close()
    return {"thoughts": thought_figures(thoughts),
            "recovery": recovery_figures([r[0] for r in rows], [r[1] for r in rows])}
