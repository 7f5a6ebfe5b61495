"""Check functions a rubric criterion can name. Each reads the final state (app state JSON,
workspace files, the agent's answer) and returns True or False; never the screen.

Register new checks with ``@check("name")``; skill cards refer to them by that name.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from guiforge.verify.contract import FinalState
from guiforge.verify.paths import select

CHECKS: dict[str, Callable[..., bool]] = {}


def check(name: str):
    def register(fn: Callable[..., bool]) -> Callable[..., bool]:
        CHECKS[name] = fn
        return fn

    return register


def normalize(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value)).strip().casefold()


def _number(text: Any) -> float | None:
    if isinstance(text, int | float):
        return float(text)
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", str(text))
    return float(m.group().replace(",", "")) if m else None


def _same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(b, int | float) and not isinstance(b, bool):
        n = _number(a)
        return n is not None and abs(n - float(b)) <= tolerance
    return normalize(a) == normalize(b)


def _workspace_file(state: FinalState, path: str) -> Path:
    if state.workspace is None:
        raise ValueError("this task has no workspace")
    full = (state.workspace / path).resolve()
    if not full.is_relative_to(state.workspace.resolve()):
        raise ValueError(f"{path} is outside the workspace")
    return full


@check("state_equals")
def state_equals(state: FinalState, path: str, value: Any, any_match: bool = True, tolerance: float = 0.005) -> bool:
    found = select(state.apps, path)
    hits = [_same(v, value, tolerance) for v in found]
    return bool(found) and (any(hits) if any_match else all(hits))


@check("state_contains")
def state_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    """Some value at ``path`` contains every one of ``text`` (case-insensitive)."""
    needles = [text] if isinstance(text, str) else text
    return any(all(normalize(n) in normalize(v) for n in needles) for v in select(state.apps, path))


@check("state_count")
def state_count(state: FinalState, path: str, min: int = 1, max: int | None = None) -> bool:  # noqa: A002
    n = len(select(state.apps, path))
    return n >= min and (max is None or n <= max)


@check("state_absent")
def state_absent(state: FinalState, path: str) -> bool:
    return not select(state.apps, path)


@check("answer_matches")
def answer_matches(state: FinalState, value: Any, mode: str = "contains", tolerance: float = 0.005) -> bool:
    if state.answer is None:
        return False
    if mode == "number":
        n = _number(state.answer)
        return n is not None and abs(n - float(value)) <= tolerance
    if mode == "exact":
        return normalize(state.answer) == normalize(value)
    return normalize(value) in normalize(state.answer)


@check("status_is")
def status_is(state: FinalState, status: str) -> bool:
    return state.status == status


@check("file_exists")
def file_exists(state: FinalState, path: str) -> bool:
    return _workspace_file(state, path).is_file()


OFFICE_SUFFIXES = (".xlsx", ".docx", ".pptx", ".pdf", ".ods", ".odt", ".odp")


def _file_text(state: FinalState, path: str, parsed: bool = False) -> str | None:
    """A workspace file's text: office files through their own library; text files as
    they are (``parsed=True`` also reads CSV through the csv module, cells tab-separated)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.preparers.file_read import FileReadError, read_file_text

    f = _workspace_file(state, path)
    if not f.is_file():
        return None
    if f.suffix.lower() not in OFFICE_SUFFIXES and not parsed:
        return f.read_text(errors="replace")
    try:
        return read_file_text(f.name, f.read_bytes())
    except FileReadError:
        return None


@check("file_contains")
def file_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    raw = _file_text(state, path)
    if raw is None:
        return False
    content = normalize(raw)
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("xlsx_cell_equals")
def xlsx_cell_equals(state: FinalState, path: str, cell: str, value: Any, sheet: str | None = None, tolerance: float = 0.005) -> bool:
    # heavy: PIL, lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    # data_only reads the values LibreOffice cached when it saved; formulas alone have none.
    wb = load_workbook(f, data_only=True, read_only=True)
    ws = wb[sheet] if sheet else wb.worksheets[0]
    got = ws[cell].value
    wb.close()
    return got is not None and _same(got, value, tolerance)


def _slide_text(s) -> str:
    """A slide's text: text frames, then table cells (a table slide's figures count too)."""
    parts = [sh.text_frame.text for sh in s.shapes if sh.has_text_frame]
    parts += [c.text for sh in s.shapes if getattr(sh, "has_table", False) and sh.has_table
              for row in sh.table.rows for c in row.cells]  # fmt: skip
    return " ".join(parts)


@check("pptx_contains")
def pptx_contains(state: FinalState, path: str, text: str | list[str], slide: int | None = None) -> bool:
    # heavy: PIL, lxml, pptx, imported when this runs
    from pptx import Presentation

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    slides = list(Presentation(str(f)).slides)
    if slide is not None:
        slides = slides[slide : slide + 1] if -len(slides) <= slide < len(slides) else []
    content = normalize(" ".join(_slide_text(s) for s in slides))
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("docx_contains")
def docx_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    # heavy: docx, lxml, imported when this runs
    from docx import Document

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    doc = Document(str(f))
    cells = [c.text for t in doc.tables for row in t.rows for c in row.cells]
    content = normalize(" ".join([*(p.text for p in doc.paragraphs), *cells]))
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("terminal_output_contains")
def terminal_output_contains(state: FinalState, text: str) -> bool:
    return any(normalize(text) in normalize(r.get("output", "")) for r in state.terminal)


@check("state_mentions_number")
def state_mentions_number(state: FinalState, path: str, value: float) -> bool:
    """Some text at ``path`` quotes ``value`` in any usual format (1234.5, 1,234.50, 1.234,50 €)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_number

    return any(find_number(str(v), float(value)) for v in select(state.apps, path))


@check("file_mentions_number")
def file_mentions_number(state: FinalState, path: str, value: float) -> bool:
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_number

    # Parsed as well as raw: a number right after a CSV comma is only found once cells are split.
    texts = [_file_text(state, path), _file_text(state, path, parsed=True)]
    return any(t is not None and find_number(t, float(value)) for t in texts)


@check("answer_mentions_number")
def answer_mentions_number(state: FinalState, value: float) -> bool:
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_number

    return state.answer is not None and find_number(state.answer, float(value))


# -- records: checks over lists of objects (events, transactions, threads, ...) -------------
# ``path`` selects records (a list at the path is expanded into its elements); ``where``
# keeps those whose fields match; ``field`` is a sub-path inside each record. Lookups in
# ``where``: ``key: v`` (equal, case-insensitive; numbers within a cent), ``key__ne``,
# ``key__in`` (one of a list), ``key__contains`` (a list holds it or a text contains it),
# ``key__startswith``, ``key__gt``/``__gte``/``__lt``/``__lte`` (numbers or ISO text).
_LOOKUPS = ("ne", "in", "contains", "startswith", "gt", "gte", "lt", "lte")


def _records(state: FinalState, path: str) -> list[Any]:
    out: list[Any] = []
    for value in select(state.apps, path):
        out.extend(value if isinstance(value, list) else [value])
    return out


def _compare(a: Any, b: Any) -> int | None:
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        x, y = str(a), str(b)
    return (x > y) - (x < y)


def _lookup(value: Any, op: str, want: Any) -> bool:
    if op == "eq":
        return _same(value, want, 0.005)
    if op == "ne":
        return not _same(value, want, 0.005)
    if op == "in":
        return any(_same(value, w, 0.005) for w in want)
    if op == "contains":
        if isinstance(value, list):
            return any(_same(v, want, 0.005) for v in value)
        return normalize(want) in normalize(value)
    if op == "startswith":
        return normalize(value).startswith(normalize(want))
    order = _compare(value, want)
    return {"gt": order > 0, "gte": order >= 0, "lt": order < 0, "lte": order <= 0}[op]


def matching(state: FinalState, path: str, where: dict[str, Any] | None = None) -> list[Any]:
    """The records at ``path`` that satisfy every lookup in ``where``."""
    out = []
    for record in _records(state, path):
        ok = True
        for key, want in (where or {}).items():
            name, _, op = key.partition("__")
            if op and op not in _LOOKUPS:
                raise ValueError(f"unknown lookup {op!r} in where key {key!r}; use one of {', '.join(_LOOKUPS)}")
            values = select(record, name)
            if not values or not any(_lookup(v, op or "eq", want) for v in values):
                ok = False
                break
        if ok:
            out.append(record)
    return out


def _field_values(records: list[Any], field: str | None) -> list[Any]:
    if not field:
        return records
    return [v for r in records for v in select(r, field)]


def _time_of(value: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{1,2})[:.h](\d{2})\s*", str(value))
    if not m:
        raise ValueError(f"a time must look like 14:30, not {value!r}")
    return int(m.group(1)), int(m.group(2))


_TIME = re.compile(r"(?<![\d:.])(\d{1,2})(?:\s*[:.h]\s*(\d{2}))?\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?|uhr\b|h\b)?(?!\d)",
                   re.IGNORECASE)


def mentions_time(text: str, value: str) -> bool:
    """``text`` states the clock time ``value`` ('14:30'): 14:30, 14.30, 14h30, 2:30 pm, 2.30PM,
    and for a full hour also 2 pm / 2pm / 14h. A bare number is not a time."""
    hour, minute = _time_of(value)
    for m in _TIME.finditer(str(text)):
        h, mm, suffix = int(m.group(1)), m.group(2), (m.group(3) or "").lower().replace(" ", "").replace(".", "")
        if mm is None and not suffix:
            continue
        got_min = int(mm) if mm is not None else 0
        if suffix in ("am", "pm"):
            if not 1 <= h <= 12:
                continue
            h = h % 12 + (12 if suffix == "pm" else 0)
        if (h, got_min) == (hour, minute):
            return True
    return False


def _digits(value: Any) -> str:
    return re.sub(r"\D", "", str(value))


def mentions(text: Any, value: Any, kind: str) -> bool:
    """Whether ``text`` states ``value``, read as ``kind``: text (case-insensitive contains),
    number (any usual format), date (ISO value; long, short and numeric forms), time
    ('14:30'; 12- or 24-hour forms) or digits (the same digit sequence, e.g. a phone number
    written with other spacing)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_date, find_number

    text = str(text)
    if kind == "text":
        return normalize(value) in normalize(text)
    if kind == "number":
        return find_number(text, float(value))
    if kind == "date":
        return find_date(text, date.fromisoformat(str(value)[:10]))
    if kind == "time":
        return mentions_time(text, str(value))
    if kind == "digits":
        want = _digits(value)
        return bool(want) and want in _digits(text)
    raise ValueError(f"unknown kind {kind!r}; use text, number, date, time or digits")


@check("record_count")
def record_count(state: FinalState, path: str, where: dict[str, Any] | None = None, min: int = 1,  # noqa: A002
                 max: int | None = None) -> bool:
    n = len(matching(state, path, where))
    return n >= min and (max is None or n <= max)


def _value_from(state: FinalState, value: Any, value_from: str | None) -> Any:
    """``value``, or the first value at the state path ``value_from`` (None when there is none):
    for what the task cannot know in advance, e.g. the flight number a booking got."""
    if value_from is None:
        return value
    found = select(state.apps, value_from)
    return found[0] if found else None


@check("record_equals")
def record_equals(state: FinalState, path: str, field: str, value: Any = None, where: dict[str, Any] | None = None,
                  expect: str = "any", tolerance: float = 0.005, value_from: str | None = None) -> bool:
    """Some (``expect: any``) or every (``all``) matching record has ``field`` equal to ``value``
    (or to the value at ``value_from``); with ``all`` there must be at least one matching record."""
    value = _value_from(state, value, value_from)
    if value is None:
        return False
    records = matching(state, path, where)
    hits = [any(_same(v, value, tolerance) for v in select(r, field)) for r in records]
    return bool(hits) and (all(hits) if expect == "all" else any(hits))


@check("record_mentions")
def record_mentions(state: FinalState, path: str, value: Any = None, field: str | None = None,
                    where: dict[str, Any] | None = None, kind: str = "text", value_from: str | None = None) -> bool:
    """Some value at ``field`` of a matching record states ``value`` (see ``mentions``), or the
    value at ``value_from``; ``value`` may be a list: one value must state all of them."""
    value = _value_from(state, value, value_from)
    if value is None:
        return False
    wanted = value if isinstance(value, list) else [value]
    return any(all(mentions(v, w, kind) for w in wanted) for v in _field_values(matching(state, path, where), field))


@check("answer_mentions")
def answer_mentions(state: FinalState, value: Any, kind: str = "text") -> bool:
    """The agent's answer states ``value`` (a list: all of them), read as ``kind``."""
    if state.answer is None:
        return False
    wanted = value if isinstance(value, list) else [value]
    return all(mentions(state.answer, w, kind) for w in wanted)


def _aggregate(values: list[Any], agg: str) -> Any:
    if agg == "count":
        return len(values)
    if not values:
        return None
    if agg == "first":
        return values[0]
    numbers = [float(v) for v in values]
    return {"min": min, "max": max, "sum": lambda xs: round(sum(xs), 2)}[agg](numbers)


@check("answer_matches_state")
def answer_matches_state(state: FinalState, path: str, field: str | None = None, where: dict[str, Any] | None = None,
                         agg: str = "first", kind: str = "number") -> bool:
    """The answer states a value read from the final state: ``agg`` (first, min, max, sum,
    count) of ``field`` over the matching records, e.g. a product's price in the shop."""
    if state.answer is None:
        return False
    records = matching(state, path, where)
    target = _aggregate(records if agg == "count" else _field_values(records, field), agg)
    return target is not None and mentions(state.answer, target, kind)


@check("record_is_extreme")
def record_is_extreme(state: FinalState, path: str, by: str, key: str, target: str, mode: str = "min",
                      where: dict[str, Any] | None = None) -> bool:
    """Some value at ``target`` is the ``key`` of a record with the smallest (``mode: min``) or
    largest ``by`` among the matching records (any of them on a tie), e.g. the cheapest
    in-stock product is in the last order."""
    records = [r for r in matching(state, path, where) if select(r, by)]
    if not records:
        return False
    pick = min if mode == "min" else max
    best = pick(float(select(r, by)[0]) for r in records)
    winners = [v for r in records if abs(float(select(r, by)[0]) - best) < 0.005 for v in select(r, key)]
    return any(_same(t, w, 0.005) for t in select(state.apps, target) for w in winners)


_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november"
          r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?")
_DATE_OR_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"  # ISO dates and date-times
    r"|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b"  # 16/07/2025, 7.16.2025
    r"|\b\d{1,2}(?:st|nd|rd|th)?(?: of)? " + _MONTH + r"(?:,? \d{4})?"  # 16 July 2025
    + r"|\b" + _MONTH + r" \d{1,2}(?:st|nd|rd|th)?\b(?:,? \d{4})?"  # July 16th, 2025
    + r"|\b\d{1,2}:\d{2}\b",  # 11:00
    re.IGNORECASE,
)


@check("answer_mentions_count")
def answer_mentions_count(state: FinalState, value: int) -> bool:
    """The answer states the whole number ``value``; numbers inside dates and clock times do
    not count (so "from 2025-07-16 to 2025-07-23" does not state 7 or 16)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.formats import find_number

    if state.answer is None:
        return False
    return find_number(_DATE_OR_TIME.sub(" ", state.answer), float(value))


_PHONE_LIKE = re.compile(r"\+?\(?\d[\d\s().\-/]{4,}\d(?:\s*(?:x|ext\.?)\s*\d+)?", re.IGNORECASE)


def _phone_digits(text: str) -> set[str]:
    """The digit strings a written phone number stands for: with and without a "(0)" trunk
    prefix that international forms (+44 (0)121 ...) carry and people often drop."""
    return {re.sub(r"\D", "", form) for form in (text, text.replace("(0)", ""))}


def _mentions_phone(text: str, value: str) -> bool:
    want = _phone_digits(value)
    return any(_phone_digits(m.group()) & want for m in _PHONE_LIKE.finditer(text))


@check("answer_mentions_phone")
def answer_mentions_phone(state: FinalState, value: str) -> bool:
    """The answer states the phone number ``value``; spaces, dashes, dots and brackets may
    differ ("+39 0585 536027" and "+390585536027" are the same number)."""
    return state.answer is not None and _mentions_phone(state.answer, value)


@check("file_mentions_phone")
def file_mentions_phone(state: FinalState, path: str, value: str) -> bool:
    """The workspace file at ``path`` states the phone number ``value`` (any punctuation)."""
    f = _workspace_file(state, path)
    return f.is_file() and _mentions_phone(f.read_text(errors="replace"), value)


@check("csv_cell_equals")
def csv_cell_equals(state: FinalState, path: str, row: int, column: str | int, value: Any,
                    delimiter: str = ",", tolerance: float = 0.005) -> bool:
    """A CSV cell read strictly with ``delimiter`` (no sniffing, so a file still split by
    ";" fails a "," check). ``row`` counts data rows from 0 below the header; ``column`` is a
    header name or a 0-based index."""
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    rows = list(csv.reader(io.StringIO(f.read_text(errors="replace"), newline=""), delimiter=delimiter))
    if not rows:
        return False
    header, data = rows[0], rows[1:]
    index = column if isinstance(column, int) else (header.index(column) if column in header else -1)
    if not 0 <= row < len(data) or not 0 <= index < len(data[row]):
        return False
    return _same(data[row][index], value, tolerance)


@check("answer_mentions_word")
def answer_mentions_word(state: FinalState, value: str) -> bool:
    """The answer contains ``value`` as whole words (case-insensitive): "Yes" matches
    "mostly yes." but not "yesterday", which a plain substring test would accept."""
    if state.answer is None:
        return False
    want = re.escape(normalize(value))
    return re.search(rf"(?<!\w){want}(?!\w)", normalize(state.answer)) is not None
