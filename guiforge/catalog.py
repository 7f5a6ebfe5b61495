"""DuckDB over the lake: a catalog file with one view per table (openable by the plain
DuckDB CLI, no guiforge needed) and the row counts ``guiforge stats`` prints."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from guiforge.lake.store import Lake
from guiforge.lake.tables import all_tables
from guiforge.views import create_views

CATALOG_NAME = "catalog.duckdb"


def connect(lake: Lake) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    if not lake.is_local:
        con.register_filesystem(lake.fs)
    return con


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_source(lake: Lake, table: str) -> str | None:
    """A read_parquet() expression over the table's committed shards, or None if empty."""
    if not lake.shard_files(table):
        return None
    # Only names ending in .parquet match: files being written are invisible.
    return f"read_parquet({_quote(lake.table_glob(table))}, union_by_name=true)"


def create_table_views(con: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """One view per table (an empty table of the right columns where nothing is committed,
    so queries still bind), then the ready-made views of guiforge/views.py over them."""
    for name, spec in all_tables().items():
        source = table_source(lake, name)
        if source:
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {source}")
        else:
            empty = spec.schema.empty_table()  # noqa: F841 - read by DuckDB by name
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM empty")
    create_views(con)


def open_catalog(lake: Lake) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the catalog's views, for any lake (local or remote)."""
    con = connect(lake)
    create_table_views(con, lake)
    return con


def write_catalog(lake: Lake, path: str | Path | None = None) -> Path | None:
    """Write ``<lake>/catalog.duckdb`` (local lakes) or ``path``: one view per table.
    Written under a temporary name and renamed, so a reader never sees half a catalog."""
    if path is None:
        if not lake.is_local:
            return None
        path = Path(lake.root) / CATALOG_NAME
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect()
    try:
        # An older storage version, so any DuckDB CLI since 1.0 can open the catalog.
        con.execute(f"ATTACH {_quote(str(tmp))} AS catalog (STORAGE_VERSION 'v1.0.0')")
        con.execute("USE catalog")
        create_table_views(con, lake)
    finally:
        con.close()
    os.replace(tmp, path)
    return path


@dataclass
class TableCount:
    table: str
    run_id: str
    rows: int
    shards: int


def counts(lake: Lake) -> list[TableCount]:
    con = connect(lake)
    out = []
    try:
        for name in all_tables():
            source = table_source(lake, name)
            if not source:
                continue
            shards: dict[str, int] = {}
            for f in lake.shard_files(name):
                shards[f.run_id] = shards.get(f.run_id, 0) + 1
            for run_id, rows in con.execute(
                f"SELECT run_id, count(*) FROM {source} GROUP BY run_id ORDER BY run_id"
            ).fetchall():
                out.append(TableCount(name, run_id, rows, shards.get(run_id, 0)))
    finally:
        con.close()
    return out


def exclusion_reasons(lake: Lake, run_id: str | None = None, limit: int = 20) -> list[tuple]:
    source = table_source(lake, "exclusions")
    if not source:
        return []
    con = connect(lake)
    try:
        where = f"WHERE run_id = {_quote(run_id)}" if run_id else ""
        return con.execute(
            f"SELECT stage, gate, count(*) AS n, any_value(reason) FROM {source} {where} "
            f"GROUP BY stage, gate ORDER BY n DESC LIMIT {int(limit)}"
        ).fetchall()
    finally:
        con.close()


def rollout_summary(lake: Lake, run_id: str | None = None) -> list[tuple]:
    """Per domain: tasks rolled out, trajectories, success rate, share of tasks whose
    samples disagree (mixed outcomes), environment failures."""
    tasks, trajectories = table_source(lake, "tasks"), table_source(lake, "trajectories")
    if not (tasks and trajectories):
        return []
    con = connect(lake)
    where = f"WHERE r.run_id = {_quote(run_id)}" if run_id else ""
    try:
        return con.execute(f"""
            WITH per_task AS (
                SELECT t.domain, r.task_id, count(*) AS n, avg(r.success::INT) AS rate,
                       sum(r.env_failure::INT) AS faults
                FROM {trajectories} r JOIN {tasks} t USING (task_id) {where}
                GROUP BY t.domain, r.task_id)
            SELECT domain, count(*) AS tasks, sum(n) AS trajectories, round(avg(rate), 3) AS success_rate,
                   round(avg((rate > 0 AND rate < 1)::INT), 3) AS mixed_share, sum(faults) AS env_failures
            FROM per_task GROUP BY domain ORDER BY domain""").fetchall()
    finally:
        con.close()
