"""Checks over office files and the workspace that desktop tasks leave behind: spreadsheet
formulas and rows, slide titles and numbers, form fields, cleaned CSVs (against the exact
dirt the preparer put in), files moved or removed, commands run. Registered into
:data:`guiforge.verify.checks.CHECKS` on import, like the checks there; they read files as
the agent saved them, never the screen.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import date, datetime, time
from typing import Any

from guiforge.verify.checks import (
    _file_text,
    _same,
    _slide_text,
    _workspace_file,
    check,
    mentions,
    normalize,
)
from guiforge.verify.contract import FinalState

_PLAIN_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
# what LibreOffice's AutoCorrect makes of typed punctuation: dashes, quotes, odd spaces
_TYPOGRAPHY = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2018": "'", "\u2019": "'",
                             "\u201c": '"', "\u201d": '"', "\u00a0": " ", "\u202f": " ", "\u2009": " "})


def fold(text: Any) -> str:
    """``normalize`` after undoing AutoCorrect's typography, so typed text compares as typed."""
    return normalize(str(text).translate(_TYPOGRAPHY))
_DMY = re.compile(r"^(\d{2})/(\d{2})/(\d{4})$")


# -- spreadsheets ------------------------------------------------------------------------------
def _sheet(path, sheet: str | None, data_only: bool):
    # heavy: PIL, lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    wb = load_workbook(path, data_only=data_only)
    return wb, (wb[sheet] if sheet else wb.worksheets[0])


def _cell_text(value: Any) -> Any:
    """A cell as the world writes it: dates as ISO text, times as HH:MM, numbers as numbers."""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return value.strftime("%H:%M")
    return value


@check("xlsx_cell_formula")
def xlsx_cell_formula(state: FinalState, path: str, cell: str, contains: str | None = None,
                      sheet: str | None = None) -> bool:
    """The cell holds a formula (not a typed-in number), containing ``contains`` if given
    (case-insensitive, e.g. "SUM")."""
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    wb, ws = _sheet(f, sheet, data_only=False)
    value = ws[cell].value
    wb.close()
    text = str(value) if value is not None else ""
    return text.startswith("=") and (contains is None or contains.casefold() in text.casefold())


@check("xlsx_column_equals")
def xlsx_column_equals(state: FinalState, path: str, column: str, values: list[Any], start_row: int = 2,
                       sheet: str | None = None, tolerance: float = 0.005) -> bool:
    """Cells ``column``start_row, start_row+1, ... hold ``values`` in this order (e.g. a
    column after sorting)."""
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    wb, ws = _sheet(f, sheet, data_only=True)
    got = [_cell_text(ws[f"{column}{start_row + i}"].value) for i in range(len(values))]
    wb.close()
    return all(g is not None and _same(g, v, tolerance) for g, v in zip(got, values, strict=True))


@check("xlsx_row_with")
def xlsx_row_with(state: FinalState, path: str, values: list[Any], sheet: str | None = None,
                  tolerance: float = 0.005) -> bool:
    """Some row holds every one of ``values`` (texts case-insensitively whole, numbers within
    ``tolerance``), in any columns: a row the agent added."""
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    wb, ws = _sheet(f, sheet, data_only=True)
    rows = [[_cell_text(v) for v in row if v is not None] for row in ws.iter_rows(values_only=True)]
    wb.close()
    return any(all(any(_same(cell, v, tolerance) for cell in row) for v in values) for row in rows)


# -- slides and documents ----------------------------------------------------------------------
def _slides(state: FinalState, path: str) -> list | None:
    # heavy: PIL, lxml, pptx, imported when this runs
    from pptx import Presentation

    f = _workspace_file(state, path)
    return list(Presentation(str(f)).slides) if f.is_file() else None


def _pick(slides: list, slide: int | None) -> list:
    if slide is None:
        return slides
    return slides[slide : slide + 1 or None] if -len(slides) <= slide < len(slides) else []


@check("pptx_mentions_number")
def pptx_mentions_number(state: FinalState, path: str, value: float, slide: int | None = None) -> bool:
    """Some text on the slide (all slides if ``slide`` is None; -1 is the last) states the
    number in any usual format."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_number

    slides = _slides(state, path)
    return bool(slides) and any(find_number(_slide_text(s), float(value)) for s in _pick(slides, slide))


@check("pptx_title_equals")
def pptx_title_equals(state: FinalState, path: str, slide: int, text: str) -> bool:
    """The title placeholder of slide ``slide`` (0-based; -1 is the last) reads ``text``."""
    slides = _slides(state, path)
    picked = _pick(slides or [], slide)
    if not picked:
        return False
    title = picked[0].shapes.title
    return title is not None and fold(title.text_frame.text) == fold(text)


@check("pptx_slide_count")
def pptx_slide_count(state: FinalState, path: str, count: int) -> bool:
    slides = _slides(state, path)
    return slides is not None and len(slides) == count


@check("pptx_chart_values")
def pptx_chart_values(state: FinalState, path: str, slide: int, categories: list[str], values: list[float],
                      series: int = 0, tolerance: float = 0.005) -> bool:
    """The first chart on slide ``slide`` (0-based; -1 the last) has these categories and its
    series ``series`` these values (read from the chart part python-pptx parses, not the picture)."""
    slides = _slides(state, path)
    picked = _pick(slides or [], slide)
    charts = [sh.chart for sh in picked[0].shapes if getattr(sh, "has_chart", False) and sh.has_chart] if picked else []
    if not charts or not charts[0].plots or len(charts[0].series) <= series:
        return False
    got_cats = [str(c) for c in charts[0].plots[0].categories]
    got = list(charts[0].series[series].values)
    return (got_cats == [str(c) for c in categories] and len(got) == len(values)
            and all(g is not None and _same(g, v, tolerance) for g, v in zip(got, values, strict=True)))


@check("file_lacks")
def file_lacks(state: FinalState, path: str, text: str | list[str]) -> bool:
    """The file exists, opens, and contains none of ``text`` (case-insensitive): e.g. a name
    that was to be replaced everywhere."""
    raw = _file_text(state, path)
    if raw is None:
        return False
    content = fold(raw)
    needles = [text] if isinstance(text, str) else text
    return not any(fold(n) in content for n in needles)


@check("document_contains")
def document_contains(state: FinalState, path: str, text: str | list[str], slide: int | None = None) -> bool:
    """The file (any office format, read with its own library; one slide of a pptx if
    ``slide`` is given) contains every one of ``text``, ignoring case and AutoCorrect's
    typography (en dashes, curly quotes), so what the agent typed is found as typed."""
    if slide is not None:
        slides = _slides(state, path)
        raw = " ".join(_slide_text(s) for s in _pick(slides or [], slide)) if slides else None
    else:
        raw = _file_text(state, path)
    if raw is None:
        return False
    content = fold(raw)
    needles = [text] if isinstance(text, str) else text
    return all(fold(n) in content for n in needles)


@check("docx_field_equals")
def docx_field_equals(state: FinalState, path: str, label: str, value: Any, kind: str | None = None,
                      tolerance: float = 0.005) -> bool:
    """A table row of the document whose first cell is ``label`` has ``value`` in its second
    cell (a form field): the same text, or with ``kind`` (number, date, time, digits) a cell
    that states it in any usual form and says nothing else but that."""
    # heavy: docx, lxml, imported when this runs
    from docx import Document

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    for table in Document(str(f)).tables:
        for row in table.rows:
            cells = row.cells
            if len(cells) >= 2 and fold(cells[0].text) == fold(label):
                got = cells[1].text.strip()
                if kind is not None:
                    return mentions(got, value, kind) and len(got) <= 3 * len(str(value)) + 12
                return _same(got, value, tolerance) if not isinstance(value, str) else fold(got) == fold(value)
    return False


def _section_table(path, heading: str):
    """The first table after the heading paragraph that reads ``heading`` and before the next
    heading (python-docx, body order), or None."""
    # heavy: docx, lxml, imported when this runs
    from docx import Document
    from docx.table import Table

    inside = False
    for block in Document(str(path)).iter_inner_content():
        if isinstance(block, Table):
            if inside:
                return block
            continue
        is_heading = (block.style is not None and block.style.name.lower().startswith(("heading", "title")))
        if is_heading:
            if inside:
                return None
            inside = fold(block.text) == fold(heading)
    return None


@check("docx_table_cell_equals")
def docx_table_cell_equals(state: FinalState, path: str, heading: str, row: str, column: str, value: Any,
                           kind: str | None = None, tolerance: float = 0.005) -> bool:
    """In the table under the heading ``heading``, the row whose first cell is ``row`` holds
    ``value`` in the column headed ``column``: the same text, or with ``kind`` (number, date)
    a cell that states it in any usual form and nothing else."""
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    table = _section_table(f, heading)
    if table is None or not table.rows:
        return False
    header = [fold(c.text) for c in table.rows[0].cells]
    if fold(column) not in header:
        return False
    j = header.index(fold(column))
    for r in table.rows[1:]:
        cells = r.cells
        if len(cells) > j and fold(cells[0].text) == fold(row):
            got = cells[j].text.strip()
            if kind is not None:
                return mentions(got, value, kind) and len(got) <= 3 * len(str(value)) + 12
            return _same(got, value, tolerance) if not isinstance(value, str) else fold(got) == fold(value)
    return False


# -- CSV files ---------------------------------------------------------------------------------
def _csv_lines(state: FinalState, path: str) -> list[str] | None:
    f = _workspace_file(state, path)
    if not f.is_file():
        return None
    text = f.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def _parse(line: str) -> list[str]:
    return next(csv.reader(io.StringIO(line)), [])


def _loose(cell: Any) -> Any:
    """A cell as a number when it reads as one in any usual format (symbols, separators,
    decimal comma, padding), a DD/MM/YYYY date as ISO, else its stripped text."""
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return round(float(cell), 2)
    text = "" if cell is None else str(cell).strip()
    m = _DMY.match(text)
    if m:
        return f"{m[3]}-{m[2]}-{m[1]}"
    core = re.sub(r"[^\d,.-]", "", text)
    # mostly a number: at most a currency's few characters (€, kr, zł) and spaces around it
    if re.search(r"\d", core) and len(core) >= len(re.sub(r"\s", "", text)) - 3:
        if "," in core and "." in core:
            core = core.replace(",", "")
        elif re.fullmatch(r"-?\d+,\d{1,2}", core):
            core = core.replace(",", ".")
        else:
            core = core.replace(",", "")
        try:
            return round(float(core), 2)
        except ValueError:
            return text
    return text


def _strict_equal(cell: str, want: Any, tolerance: float) -> bool:
    """``cell`` as a clean file writes it: a number as plain digits with a decimal point, a
    text exactly (surrounding spaces are not clean)."""
    if isinstance(want, int | float) and not isinstance(want, bool):
        return bool(_PLAIN_NUMBER.match(cell)) and abs(float(cell) - float(want)) <= tolerance
    return cell == ("" if want is None else str(want))


@check("csv_rows_equal")
def csv_rows_equal(state: FinalState, path: str, header: list[str], rows: list[list[Any]],
                   tolerance: float = 0.005) -> bool:
    """The CSV is exactly ``header`` plus ``rows`` (in any order): no blank lines, no rows
    missing or repeated, numbers as plain decimals, texts and ISO dates as given."""
    lines = _csv_lines(state, path)
    if not lines or _parse(lines[0]) != [str(h) for h in header]:
        return False
    data = [_parse(line) for line in lines[1:]]
    if any(not line.strip() for line in lines[1:]) or len(data) != len(rows):
        return False
    unmatched = list(data)
    for want in rows:
        hit = next((r for r in unmatched if len(r) == len(want)
                    and all(_strict_equal(c, w, tolerance) for c, w in zip(r, want, strict=True))), None)
        if hit is None:
            return False
        unmatched.remove(hit)
    return True


@check("csv_dirt_fixed")
def csv_dirt_fixed(state: FinalState, path: str, dirt: list[dict[str, Any]], rows: list[list[Any]],
                   kinds: list[str] | None = None, tolerance: float = 0.005) -> bool:
    """Every entry of the preparer's dirt report (``FileInfo.dirt``; only ``kinds`` if given)
    is undone in the file: no blank line; the duplicated row occurs once; a restyled number
    is plain again and a DD/MM/YYYY date is ISO again in its row. ``rows`` are the clean data
    rows, which locate a dirty cell's row wherever the agent's edits moved it."""
    lines = _csv_lines(state, path)
    if not lines:
        return False
    header = _parse(lines[0])
    data = [_parse(line) for line in lines[1:] if line.strip()]
    inserted = sorted(d["line"] for d in dirt if d["kind"] in ("duplicate_row", "blank_line"))
    for d in dirt:
        kind = d["kind"]
        if kinds is not None and kind not in kinds:
            continue
        if kind == "blank_line":
            if any(not line.strip() for line in lines[1:]):
                return False
        elif kind == "duplicate_row":
            copy = [_loose(c) for c in _parse(d["dirty"])]
            if sum(1 for r in data if [_loose(c) for c in r] == copy) != 1:
                return False
        else:  # number_format / date_format: the cell's row, found by its clean content
            if d["column"] not in header:
                return False
            index = d["line"] - 2 - sum(1 for at in inserted if at < d["line"])
            want = [_loose(c) for c in rows[index]]
            column = header.index(d["column"])
            matches = [r for r in data if [_loose(c) for c in r] == want]
            clean: Any = float(d["clean"]) if kind == "number_format" else d["clean"]
            if not matches or not all(_strict_equal(r[column], clean, tolerance) for r in matches):
                return False
    return True


# -- the workspace and the terminal ------------------------------------------------------------
@check("files_exist")
def files_exist(state: FinalState, paths: list[str]) -> bool:
    return bool(paths) and all(_workspace_file(state, p).is_file() for p in paths)


@check("files_absent")
def files_absent(state: FinalState, paths: list[str]) -> bool:
    return not any(_workspace_file(state, p).exists() for p in paths)


@check("glob_count")
def glob_count(state: FinalState, pattern: str | list[str], count: int) -> bool:
    """Exactly ``count`` workspace files match the glob(s) (``pdf/*.pdf``; ``*`` stays in one
    folder): e.g. every PDF moved into pdf/ and none left at the top."""
    if state.workspace is None:
        raise ValueError("this task has no workspace")
    patterns = [pattern] if isinstance(pattern, str) else pattern
    found = {p for pat in patterns for p in state.workspace.glob(pat) if p.is_file()}
    return len(found) == count


@check("terminal_ran")
def terminal_ran(state: FinalState, contains: str, succeeded: bool = True) -> bool:
    """Some command the agent ran contains ``contains`` (e.g. "awk"), and exited 0 if
    ``succeeded``."""
    return any(contains in r.get("command", "") and (not succeeded or r.get("exit_code") == 0)
               for r in state.terminal)
