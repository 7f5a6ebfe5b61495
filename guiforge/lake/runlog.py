"""What a lake records about a run beside its shards: the run's provenance (pipeline file,
models, seed, code and plugin versions) and one timing record per stage session (wall and
CPU time, shards run). Both are small JSON files under ``<lake>/_runs/run=<run_id>/``;
they describe the data, never hold it, so a lake without them (an old one, a deployment
that does not write them) still reads, only with less to say.

Layout::

    <lake>/_runs/run=<run_id>/provenance/<started>.json   one per `guiforge run` session
    <lake>/_runs/run=<run_id>/stages/<stage>/<started>.json  one per stage session that ran shards
"""

from __future__ import annotations

import posixpath
import time
from typing import Any

from guiforge.lake.store import TMP_MARK, Lake

RUNS_DIR = "_runs"


def _stamp(started: float) -> str:
    # Sortable by name: the newest record is the last one listed.
    return f"{int(started * 1e6):020d}"


def run_folder(lake: Lake, run_id: str, *parts: str) -> str:
    return lake.path(RUNS_DIR, f"run={run_id}", *parts)


def write_provenance(lake: Lake, run_id: str, record: dict[str, Any]) -> str:
    started = record.setdefault("recorded_at", time.time())
    path = run_folder(lake, run_id, "provenance", f"{_stamp(started)}.json")
    lake.write_json(record, path)
    return path


def write_stage_session(lake: Lake, run_id: str, record: dict[str, Any]) -> str:
    path = run_folder(lake, run_id, "stages", record["stage"], f"{_stamp(record['started_at'])}.json")
    lake.write_json(record, path)
    return path


def _json_files(lake: Lake, folder: str) -> list[str]:
    return sorted(p for p in lake._ls(folder) if p.endswith(".json") and TMP_MARK not in posixpath.basename(p))


def provenance_records(lake: Lake, run_id: str) -> list[dict[str, Any]]:
    """Every provenance record of the run, oldest first (empty when none was written)."""
    return [lake.read_json(p) for p in _json_files(lake, run_folder(lake, run_id, "provenance"))]


def stage_sessions(lake: Lake, run_id: str) -> list[dict[str, Any]]:
    """Every stage session record of the run, in start order."""
    out = []
    for stage_dir in lake._ls(run_folder(lake, run_id, "stages")):
        out += [lake.read_json(p) for p in _json_files(lake, stage_dir)]
    return sorted(out, key=lambda r: r.get("started_at", 0))


def recorded_runs(lake: Lake) -> list[str]:
    return sorted(posixpath.basename(p.rstrip("/"))[4:] for p in lake._ls(lake.path(RUNS_DIR))
                  if posixpath.basename(p.rstrip("/")).startswith("run="))
