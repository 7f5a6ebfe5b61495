"""DuckDB over the lake: a catalog file with one view per table (openable by the plain
DuckDB CLI, no guiforge needed) and the row counts ``guiforge stats`` prints.

The catalog's views name paths relative to the lake (``tasks/*/*.parquet``), never where the
lake was when the catalog was written, so a copied or moved lake reads its own files. DuckDB
resolves them from the variable ``lake`` when set (``SET VARIABLE lake = 's3://bucket/lake'``;
object-store lakes need it), else from ``file_search_path`` or the working directory:
``cd <lake> && duckdb catalog.duckdb``. :func:`connect_catalog` does this from Python. An
object-store lake's catalog is written to the store beside its tables; DuckDB's httpfs
reads its ``s3://`` views (guiforge itself reads them through the lake's fsspec filesystem).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from guiforge.lake.store import Lake
from guiforge.lake.tables import all_tables
from guiforge.views import create_views

CATALOG_NAME = "catalog.duckdb"
LAKE_VARIABLE = "lake"


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


def relative_source(table: str) -> str:
    """A read_parquet() over the table's committed shards, relative to the lake root (the
    variable ``lake`` when set, else the working directory or file_search_path)."""
    # Only names ending in .parquet match: files being written are invisible.
    return (f"read_parquet(coalesce(getvariable('{LAKE_VARIABLE}') || '/', '') || '{table}/*/*.parquet', "
            "union_by_name=true)")


def set_lake(con: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """Point the catalog's relative views at ``lake``."""
    con.execute(f"SET VARIABLE {LAKE_VARIABLE} = {_quote(lake.url(lake.root))}")


def create_table_views(con: duckdb.DuckDBPyConnection, lake: Lake, relative: bool = False) -> None:
    """One view per table (an empty table of the right columns where nothing is committed,
    so queries still bind), then the ready-made views of guiforge/views.py over them.
    ``relative``: views name paths relative to the lake (for a catalog file)."""
    if relative:
        set_lake(con, lake)  # binds the views now; a session variable, not stored in the file
    for name, spec in all_tables().items():
        source = relative_source(name) if relative and lake.shard_files(name) else table_source(lake, name)
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


def catalog_location(lake: Lake) -> str:
    return lake.url(lake.path(CATALOG_NAME))


def write_catalog(lake: Lake, path: str | Path | None = None) -> str:
    """Write the catalog, one view per table with paths relative to the lake, to
    ``<lake>/catalog.duckdb`` (on the lake's own filesystem, object stores included) or to
    ``path``. Written under a temporary name and renamed (uploaded whole to an object
    store), so a reader never sees half a catalog. Returns where it is."""
    with tempfile.TemporaryDirectory(prefix="guiforge-catalog-") as tmpdir:
        local = path is not None or lake.is_local
        final = Path(path) if path is not None else (Path(lake.root) / CATALOG_NAME if lake.is_local else None)
        tmp = (final.with_name(final.name + f".tmp-{os.getpid()}") if final is not None
               else Path(tmpdir) / CATALOG_NAME)
        if final is not None:
            final.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        con = connect(lake)
        try:
            # An older storage version, so any DuckDB CLI since 1.1 (getvariable) can open the catalog.
            con.execute(f"ATTACH {_quote(str(tmp))} AS catalog (STORAGE_VERSION 'v1.0.0')")
            con.execute("USE catalog")
            create_table_views(con, lake, relative=True)
        finally:
            con.close()
        if local:
            os.replace(tmp, final)
            return str(final)
        lake.fs.put_file(str(tmp), lake.path(CATALOG_NAME))
        return catalog_location(lake)


def connect_catalog(lake: Lake, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """The lake's catalog file opened with its views pointed at ``lake`` (wherever the lake
    was when it was written): a local lake's file in place, an object store's fetched."""
    if lake.is_local:
        con = duckdb.connect(str(Path(lake.root) / CATALOG_NAME), read_only=read_only)
    else:
        with tempfile.TemporaryDirectory(prefix="guiforge-catalog-") as tmpdir:
            local = Path(tmpdir) / CATALOG_NAME
            lake.fs.get_file(lake.path(CATALOG_NAME), str(local))
            con = duckdb.connect()
            con.register_filesystem(lake.fs)
            set_lake(con, lake)  # the views bind as they are copied
            # Read into memory: the fetched file goes with the temporary folder.
            con.execute(f"ATTACH {_quote(str(local))} AS file_catalog (READ_ONLY)")
            con.execute("ATTACH ':memory:' AS catalog")
            con.execute("COPY FROM DATABASE file_catalog TO catalog")
            con.execute("DETACH file_catalog")
            con.execute("USE catalog")
    set_lake(con, lake)
    return con


def catalog_hint(lake: Lake, where: str) -> str:
    """How to open the catalog in the plain DuckDB CLI."""
    if lake.is_local:
        return f"cd {lake.root} && duckdb -readonly {CATALOG_NAME} -c 'SELECT count(*) FROM worlds'"
    return (f"duckdb -c \"LOAD httpfs; ATTACH '{where}' AS c (READ_ONLY); USE c; "
            f"SET VARIABLE lake = '{lake.url(lake.root)}'; SELECT count(*) FROM worlds\" (with an S3 secret)")


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


def grounding_summary(lake: Lake, run_id: str | None = None) -> list[tuple]:
    """Per domain: screens rendered for grounding, rows, refusals, near misses, small
    targets, rows on dense screens, and the share of rendered boxes that failed the hit test
    (occluded or hidden: never emitted)."""
    rows, screens = table_source(lake, "grounding"), table_source(lake, "grounding_screens")
    if not (rows and screens):
        return []
    con = connect(lake)
    where = f"WHERE run_id = {_quote(run_id)}" if run_id else ""
    try:
        return con.execute(f"""
            WITH g AS (
                SELECT domain, count(*) AS n, sum(refusal::INT) AS refusals, sum(near_miss::INT) AS near,
                       sum(small_target::INT) AS small, sum(dense_screen::INT) AS dense
                FROM {rows} {where} GROUP BY domain),
            s AS (
                SELECT domain, count(*) AS screens,
                       round(sum(n_occluded + n_hidden) / nullif(sum(n_ok + n_occluded + n_hidden), 0), 4) AS failing
                FROM {screens} {where} GROUP BY domain)
            SELECT domain, s.screens, g.n, g.refusals, g.near, g.small, g.dense, s.failing
            FROM g JOIN s USING (domain) ORDER BY domain""").fetchall()
    finally:
        con.close()
