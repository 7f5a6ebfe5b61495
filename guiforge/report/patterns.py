"""Exclusion reasons grouped by their pattern, not their ids: "task tsk_81c2 failed 3 of 5
checks ('total is 412.50')" and the same words about another task are one pattern, "task
<id> failed # of # checks ('…')". The report groups by it; the viewer filters by it (a
DuckDB function of the same name)."""

from __future__ import annotations

import re

import duckdb

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’")
# A token that mixes letters and digits, 6 characters or more: an id, a hash, a file name.
_ID = re.compile(r"(?<![\w.:/-])(?=[\w.:/-]*\d)(?=[\w.:/-]*[A-Za-z])[\w.:/-]{6,}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def reason_pattern(reason: str | None) -> str:
    if not reason:
        return ""
    text = _QUOTED.sub("'…'", reason)
    text = _ID.sub("<id>", text)
    text = _NUMBER.sub("#", text)
    return _SPACE.sub(" ", text).strip()[:160]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """``reason_pattern(reason)`` inside DuckDB's SQL."""
    if not con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'reason_pattern'").fetchall()[0][0]:
        con.create_function("reason_pattern", reason_pattern, ["VARCHAR"], "VARCHAR", null_handling="special")
