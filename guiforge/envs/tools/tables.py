"""Table operations on workspace files: CSV/TSV and XLSX sheets (openpyxl).

The first non-empty row is the header. Operations read a file and can write their result to
``output`` (CSV), so that steps chain through files the verifier can also read.
"""

from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

Cell = str | float | int | bool | None
Limit = Annotated[int, Field(ge=1, le=1000)]
SHOWN_ROWS = 200


class Table(BaseModel):
    columns: list[str]
    rows: list[list[Cell]]
    total_rows: int
    truncated: bool = False
    written_to: str | None = None


class GroupRow(BaseModel):
    key: Cell
    sum: float
    count: int


class ColumnStats(BaseModel):
    column: str
    count: int
    empty: int
    numeric: int
    sum: float | None
    mean: float | None
    median: float | None
    min: Cell
    max: Cell
    distinct: int


_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_GROUPED = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")


def _cell(text: str) -> Cell:
    """CSV text -> int/float where it reads as a number ("1,234.5" too), else the string."""
    s = text.strip()
    if s == "":
        return None
    plain = s.replace(",", "") if _GROUPED.fullmatch(s) else s
    if not _NUMBER.fullmatch(plain):
        return s
    try:
        return int(plain)
    except ValueError:
        return float(plain)


def _read_csv(path: Path) -> list[list[Cell]]:
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as f:
        sample = f.read(4096)
        f.seek(0)
        delimiter = "\t" if path.suffix.lower() == ".tsv" or sample.count("\t") > sample.count(",") else ","
        return [[_cell(c) for c in row] for row in csv.reader(f, delimiter=delimiter)]


def _read_xlsx(path: Path, sheet: str | None) -> list[list[Cell]]:
    # heavy: lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        if sheet is not None and sheet not in wb.sheetnames:
            raise ToolError(f"{path.name} has no sheet {sheet!r}; sheets: {', '.join(wb.sheetnames)}")
        ws = wb[sheet] if sheet else wb.worksheets[0]
        return [[_xlsx_value(v) for v in row] for row in ws.iter_rows(values_only=True)]
    finally:
        wb.close()


def _xlsx_value(v: Any) -> Cell:
    if v is None or isinstance(v, str | int | float | bool):
        return v
    return str(v)  # dates and times as ISO-ish text


def load_table(ctx: ToolContext, path: str, sheet: str | None = None) -> tuple[list[str], list[list[Cell]]]:
    full = ctx.path(path)
    suffix = full.suffix.lower()
    try:
        if suffix in (".xlsx", ".xlsm"):
            raw = _read_xlsx(full, sheet)
        elif suffix in (".csv", ".tsv", ".txt"):
            raw = _read_csv(full)
        else:
            raise ToolError(f"{path!r} is not a table file; use .csv, .tsv or .xlsx")
    except ToolError:
        raise
    except Exception as exc:
        raise ToolError(f"cannot read {path!r} as a table: {type(exc).__name__}: {exc}") from None
    raw = [r for r in raw if any(c not in (None, "") for c in r)]
    if not raw:
        raise ToolError(f"{path!r} has no rows")
    header = [str(c) if c is not None else f"column_{i + 1}" for i, c in enumerate(raw[0])]
    width = len(header)
    rows = [(list(r) + [None] * width)[:width] for r in raw[1:]]
    return header, rows


def _col(columns: list[str], name: str) -> int:
    if name in columns:
        return columns.index(name)
    folded = [c.casefold().strip() for c in columns]
    if name.casefold().strip() in folded:
        return folded.index(name.casefold().strip())
    raise ToolError(f"no column {name!r}; columns: {', '.join(columns)}")


def _write_csv(ctx: ToolContext, path: str, columns: list[str], rows: list[list[Cell]]) -> str:
    target = ctx.path(path, must_exist=False)
    if target.suffix.lower() != ".csv":
        raise ToolError(f"output {path!r} must end in .csv")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)
    return ctx.relative(target)


def _result(ctx: ToolContext, columns: list[str], rows: list[list[Cell]], output: str | None,
            limit: int = SHOWN_ROWS) -> Table:
    written = _write_csv(ctx, output, columns, rows) if output else None
    return Table(columns=columns, rows=rows[:limit], total_rows=len(rows),
                 truncated=len(rows) > limit, written_to=written)


def _number(v: Cell) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    c = _cell(v)
    return float(c) if isinstance(c, int | float) else None


@tool("tables")
def list_sheets(ctx: ToolContext, path: str) -> list[str]:
    """The sheet (tab) names of an Excel workbook.

    Args:
        path: .xlsx file relative to the workspace
    """
    # heavy: lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    full = ctx.path(path)
    try:
        wb = load_workbook(full, read_only=True)
    except Exception as exc:
        raise ToolError(f"cannot open {path!r} as a workbook: {exc}") from None
    names = list(wb.sheetnames)
    wb.close()
    return names


@tool("tables")
def read_table(ctx: ToolContext, path: str, sheet: str | None = None, offset: int = 0,
               limit: Limit = 50) -> Table:
    """Read rows of a spreadsheet or CSV file (header plus rows); page with offset and limit.

    Args:
        path: .csv, .tsv or .xlsx file relative to the workspace
        sheet: sheet name for .xlsx; defaults to the first sheet
        offset: skip this many data rows
        limit: return at most this many rows
    """
    columns, rows = load_table(ctx, path, sheet)
    shown = rows[max(offset, 0) : max(offset, 0) + limit]
    return Table(columns=columns, rows=shown, total_rows=len(rows),
                 truncated=offset + limit < len(rows))


Op = Literal["==", "!=", ">", ">=", "<", "<=", "contains", "startswith"]


def _keep(cell: Cell, op: Op, value: Cell) -> bool:
    if op in ("contains", "startswith"):
        text, needle = str(cell or "").casefold(), str(value).casefold()
        return needle in text if op == "contains" else text.startswith(needle)
    a, b = _number(cell), _number(value)
    if a is None or b is None:  # compare as text when either side is not a number
        a, b = str(cell if cell is not None else "").casefold(), str(value).casefold()  # type: ignore[assignment]
    return {"==": a == b, "!=": a != b, ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]


@tool("tables")
def filter_rows(ctx: ToolContext, path: str, column: str, op: Op, value: str | float | int,
                sheet: str | None = None, output: str | None = None) -> Table:
    """Filter a table: keep only the rows where a column compares to a value (amount over
    100, status equals paid); numbers compare as numbers, text case-insensitively; optionally
    save the result as CSV.

    Args:
        path: .csv, .tsv or .xlsx file relative to the workspace
        column: column name to test
        op: comparison operator
        value: value to compare with
        sheet: sheet name for .xlsx
        output: write the kept rows to this .csv path
    """
    columns, rows = load_table(ctx, path, sheet)
    i = _col(columns, column)
    return _result(ctx, columns, [r for r in rows if _keep(r[i], op, value)], output)


@tool("tables")
def sort_rows(ctx: ToolContext, path: str, by: list[str], descending: bool = False,
              sheet: str | None = None, output: str | None = None) -> Table:
    """Sort a table by one or more columns (ascending, or descending for largest first);
    empty cells go last; optionally save as CSV.

    Args:
        path: .csv, .tsv or .xlsx file relative to the workspace
        by: column names, most significant first
        descending: largest / latest first
        sheet: sheet name for .xlsx
        output: write the sorted rows to this .csv path
    """
    columns, rows = load_table(ctx, path, sheet)
    if not by:
        raise ToolError("give at least one column in by")
    idx = [_col(columns, c) for c in by]

    def key(row: list[Cell]) -> tuple:
        parts = []
        for i in idx:
            n = _number(row[i])
            parts.append((0, n, "") if n is not None else ((1, 0.0, str(row[i]).casefold())
                                                           if row[i] is not None else (2, 0.0, "")))
        return tuple(parts)

    present = [r for r in rows if all(r[i] is not None for i in idx)]
    missing = [r for r in rows if any(r[i] is None for i in idx)]
    return _result(ctx, columns, sorted(present, key=key, reverse=descending) + missing, output)


@tool("tables")
def group_sum(ctx: ToolContext, path: str, by: str, column: str, sheet: str | None = None,
              output: str | None = None) -> list[GroupRow]:
    """Group rows by one column and total another (sum and count per group, like a pivot
    table: spending per category).

    Args:
        path: .csv, .tsv or .xlsx file relative to the workspace
        by: column whose values form the groups
        column: numeric column to add up
        sheet: sheet name for .xlsx
        output: write the groups to this .csv path
    """
    columns, rows = load_table(ctx, path, sheet)
    g, v = _col(columns, by), _col(columns, column)
    sums: dict[Cell, list[float]] = {}
    for r in rows:
        n = _number(r[v])
        acc = sums.setdefault(r[g], [0.0, 0])
        acc[0] += n or 0.0
        acc[1] += 1
    groups = [GroupRow(key=k, sum=round(s, 10), count=int(c)) for k, (s, c) in sums.items()]
    if output:
        _write_csv(ctx, output, [columns[g], f"sum_{columns[v]}", "count"],
                   [[x.key, x.sum, x.count] for x in groups])
    return groups


@tool("tables")
def column_stats(ctx: ToolContext, path: str, column: str, sheet: str | None = None) -> ColumnStats:
    """Summary statistics of one column: count, sum, mean (average), median, min, max and
    distinct values.

    Args:
        path: .csv, .tsv or .xlsx file relative to the workspace
        column: column name
        sheet: sheet name for .xlsx
    """
    columns, rows = load_table(ctx, path, sheet)
    i = _col(columns, column)
    values = [r[i] for r in rows]
    present = [v for v in values if v is not None]
    nums = [n for n in (_number(v) for v in present) if n is not None]
    if nums:
        lo, hi = min(nums), max(nums)
    else:
        texts = sorted(str(v) for v in present)
        lo, hi = (texts[0], texts[-1]) if texts else (None, None)
    return ColumnStats(
        column=columns[i], count=len(values), empty=len(values) - len(present), numeric=len(nums),
        sum=round(sum(nums), 10) if nums else None,
        mean=round(statistics.fmean(nums), 10) if nums else None,
        median=statistics.median(nums) if nums else None,
        min=lo, max=hi, distinct=len({str(v) for v in present}),
    )


@tool("tables")
def join_tables(ctx: ToolContext, left: str, right: str, on: str, right_on: str | None = None,
                how: Literal["inner", "left"] = "inner", left_sheet: str | None = None,
                right_sheet: str | None = None, output: str | None = None) -> Table:
    """Join (merge, look up) two tables on a key column, like VLOOKUP or SQL JOIN; the right
    table's other columns are appended.

    Args:
        left: first table file (.csv, .tsv or .xlsx)
        right: second table file
        on: key column in the left table
        right_on: key column in the right table if named differently
        how: inner keeps matches only; left keeps every left row
        left_sheet: sheet name of the left .xlsx
        right_sheet: sheet name of the right .xlsx
        output: write the joined rows to this .csv path
    """
    lcols, lrows = load_table(ctx, left, left_sheet)
    rcols, rrows = load_table(ctx, right, right_sheet)
    li, ri = _col(lcols, on), _col(rcols, right_on or on)
    keep = [j for j in range(len(rcols)) if j != ri]
    index: dict[str, list[list[Cell]]] = {}
    for r in rrows:
        index.setdefault(str(r[ri]).strip().casefold(), []).append(r)
    out: list[list[Cell]] = []
    for r in lrows:
        matches = index.get(str(r[li]).strip().casefold(), [])
        out.extend(r + [m[j] for j in keep] for m in matches)
        if not matches and how == "left":
            out.append(r + [None] * len(keep))
    names = lcols + [rcols[j] if rcols[j] not in lcols else f"{rcols[j]}_right" for j in keep]
    return _result(ctx, names, out, output)


@tool("tables")
def write_csv(ctx: ToolContext, path: str, columns: list[str], rows: list[list[Cell]]) -> Table:
    """Create or overwrite a CSV file in the workspace from a header and rows.

    Args:
        path: target .csv path relative to the workspace
        columns: header names
        rows: data rows, each as long as columns
    """
    bad = [i for i, r in enumerate(rows) if len(r) != len(columns)]
    if bad:
        raise ToolError(f"rows {bad[:5]} do not have {len(columns)} cells like the header")
    return _result(ctx, columns, rows, path, limit=0)
