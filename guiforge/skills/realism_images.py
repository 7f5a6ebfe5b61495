"""Realism figures about the document images tasks hand an agent: how many are clean
renders, scans and phone photos (``preparers.image_looks``), overall and per skill, read
from each task's setup (``$.files.documents[*].look``)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any


def image_looks(rows: Iterable[tuple[str, str | dict | None]]) -> dict[str, Any]:
    """(skill_id, setup) rows -> {images, tasks_with_images, by_look, per_skill}; an image
    whose look was never settled (a setup written before looks existed) counts as clean,
    which is what it was rendered as."""
    by_look: Counter = Counter()
    per_skill: dict[str, Counter] = defaultdict(Counter)
    tasks = 0
    for skill_id, setup in rows:
        value = json.loads(setup) if isinstance(setup, str) and setup else (setup or {})
        files = value.get("files") if isinstance(value, dict) else None
        docs = files.get("documents") if isinstance(files, dict) else None
        kinds = [_kind(d) for d in docs or () if isinstance(d, dict) and str(d.get("format") or "").lower() == "png"]
        if kinds:
            tasks += 1
        for kind in kinds:
            by_look[kind] += 1
            per_skill[skill_id][kind] += 1
    return {"images": sum(by_look.values()), "tasks_with_images": tasks, "by_look": dict(sorted(by_look.items())),
            "per_skill": {s: dict(sorted(c.items())) for s, c in sorted(per_skill.items())}}


def _kind(entry: dict) -> str:
    look = entry.get("look")
    if isinstance(look, dict):
        return str(look.get("kind") or "clean")
    return look if isinstance(look, str) and look != "auto" else "clean"


def image_looks_of_tasks(lake) -> dict[str, Any]:
    """The figures over a lake's ``tasks`` table (every run); {} when it has none."""
    # heavy: duckdb, numpy, imported when this runs
    from guiforge.catalog import connect, table_source

    source = table_source(lake, "tasks")
    if not source:
        return {}
    con = connect(lake)
    try:
        rows = con.execute(f"SELECT skill_id, setup_json FROM {source}").fetchall()
    finally:
        con.close()
    return image_looks(rows)
