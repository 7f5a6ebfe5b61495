"""A DuckDB connection with one view per lake table, optionally narrowed to one run, so the
report's SQL reads like the catalog's (``SELECT ... FROM trajectories``)."""

from __future__ import annotations

import duckdb

from guiforge.catalog import connect, table_source
from guiforge.lake.store import Lake
from guiforge.lake.tables import all_tables


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def open_views(lake: Lake, run_id: str | None = None) -> tuple[duckdb.DuckDBPyConnection, set[str]]:
    """The connection and the names of the tables that have rows (for this run)."""
    con = connect(lake)
    filled: set[str] = set()
    for name, spec in all_tables().items():
        source = table_source(lake, name)
        where = f" WHERE run_id = {_quote(run_id)}" if run_id else ""
        if source:
            con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {source}{where}")
            if con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]:
                filled.add(name)
        else:
            # An empty table of the right columns, so every query still binds.
            empty = spec.schema.empty_table()  # noqa: F841 - read by DuckDB by name
            con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM empty")
    return con, filled


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    """Run ``sql`` and return its rows as dicts keyed by column name."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
