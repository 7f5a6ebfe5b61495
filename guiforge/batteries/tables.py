"""Content hashes of a lake's tables, for batteries and tests that compare two runs: a run
that was killed, signalled or loaded and then resumed must end with exactly the rows of an
uninterrupted idle run.

A table's hash is taken over its sorted rows, each row as canonical JSON, with what measures
time rather than content left out: wall-clock columns (``WALL_CLOCK_COLUMNS``), timing keys
inside JSON columns (``WALL_CLOCK_KEYS``: the package gate's and the export's seconds), and
the folder the lake lives in (an export's path), so two lakes in different places compare.
Content-addressed tables (images, blobs) count each row once: two shards in flight may both
store one frame.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from guiforge.lake.store import Lake

# run_id names the run (it differs between lakes of one config run under other names);
# export_id hashes the export's path and time
WALL_CLOCK_COLUMNS = frozenset({"run_id", "latency_s", "wall_s", "created_at", "export_id"})
WALL_CLOCK_KEYS = frozenset({"seconds", "rows_per_s"})
CONTENT_ADDRESSED = ("images", "blobs")


def _timeless(value: Any, place: str) -> Any:
    """A value less its timings, with the lake's folder written as ``<lake>``."""
    if isinstance(value, str):
        if value[:1] in "{[":
            try:
                return _timeless(json.loads(value), place)
            except ValueError:
                pass
        return value.replace(place, "<lake>") if place else value
    if isinstance(value, dict):
        return {k: _timeless(v, place) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [_timeless(v, place) for v in value]
    return value


def _place(lake: Lake) -> str:
    """The folder a local lake sits in (exports are written beside it); '' for other stores."""
    root = str(lake.root)
    return str(Path(root).resolve().parent) if "://" not in root else ""


def content_rows(lake: Lake, table: str) -> list[str]:
    """The table's rows as canonical JSON strings, timings left out, sorted."""
    place = _place(lake)
    rows = [json.dumps({k: _timeless(v, place) for k, v in r.items() if k not in WALL_CLOCK_COLUMNS},
                       sort_keys=True, default=str) for r in lake.read_table(table).to_pylist()]
    if table in CONTENT_ADDRESSED:
        rows = list(set(rows))
    return sorted(rows)


def digest(rows: list[str]) -> str:
    return f"{len(rows)} rows " + hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def digests(lake: Lake) -> dict[str, str]:
    """Every table's row count and content hash: ``{"steps": "401 rows 3f2a...", ...}``."""
    return {table: digest(content_rows(lake, table)) for table in lake.tables()}


def duplicates(lake: Lake) -> dict[str, int]:
    """Rows that occur more than once in a table (content-addressed tables apart): the
    table -> how many extra copies, only tables that have any."""
    out = {}
    place = _place(lake)
    for table in lake.tables():
        if table in CONTENT_ADDRESSED:
            continue
        rows = Counter(json.dumps({k: _timeless(v, place) for k, v in r.items() if k not in WALL_CLOCK_COLUMNS},
                                  sort_keys=True, default=str) for r in lake.read_table(table).to_pylist())
        extra = sum(n - 1 for n in rows.values() if n > 1)
        if extra:
            out[table] = extra
    return out


def export_digests(lake: Lake) -> dict[str, str]:
    """The content of every dataset folder the run exported (each ``exports`` row's path):
    Parquet rows, JSON and text files, images by their bytes; keyed by the folder's name."""
    out = {}
    place = _place(lake)
    folders = {row["path"] for row in lake.read_table("exports").to_pylist()} if "exports" in lake.tables() else set()
    for folder in sorted(folders):
        root = Path(folder)
        rows: list[str] = []
        for f in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []:
            rel = f.relative_to(root).as_posix()
            if f.suffix == ".parquet":
                rows += [rel + " " + json.dumps(_timeless(r, place), sort_keys=True, default=str)
                         for r in pq.read_table(f).to_pylist()]
            elif f.suffix in (".json", ".jsonl", ".md"):
                rows.append(rel + " " + json.dumps(_timeless(f.read_text(), place), sort_keys=True, default=str))
            else:
                rows.append(rel + " " + hashlib.sha256(f.read_bytes()).hexdigest())
        out[folder.replace(place, "<lake>") if place else folder] = digest(sorted(rows))
    return out
