"""What changed in a workspace: files added, removed or edited, and inside an edited file
the unit that changed, read through the file's own library: a spreadsheet cell (its formula
or value, so a SUM that recalculates is no change), a document paragraph or table cell, a
slide's text, a line of a text file. Files LibreOffice or Python leave behind on their own
(lock files, bytecode caches) are not the agent's changes."""

from __future__ import annotations

import difflib
import fnmatch
import io
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from guiforge.verify.state_diff import Change

# what the environment writes on its own: LibreOffice's lock files, Python's caches
NOISE = (".~lock.*#", "*/.~lock.*#", "__pycache__/*", "*/__pycache__/*", "*.pyc", ".ipynb_checkpoints/*")
TOLERANCE = 0.005


def is_noise(path: str) -> bool:
    return any(fnmatch.fnmatch(path, pattern) for pattern in NOISE)


def workspace_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path -> bytes), noise left out."""
    out = {}
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.is_file() and not f.is_symlink() and not is_noise(rel):
            out[rel] = f.read_bytes()
    return out


def diff_files(before: dict[str, bytes], after: dict[str, bytes]) -> list[Change]:
    """Every change from the initial files to the final ones (both: relative path -> bytes)."""
    changes: list[Change] = []
    before = {p: b for p, b in before.items() if not is_noise(p)}
    after = {p: b for p, b in after.items() if not is_noise(p)}
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        if a is None or b is None:
            changes.append(Change("added" if a is None else "removed", (), path, file=path))
            continue
        changes.extend(diff_file(path, a, b))
    return changes


def diff_file(path: str, a: bytes, b: bytes) -> list[Change]:
    """The units that changed in one file. A file its reader cannot open changed as a whole."""
    suffix = Path(path).suffix.lower()
    reader = {".xlsx": xlsx_units, ".docx": docx_units, ".pptx": pptx_units}.get(suffix)
    try:
        if reader is not None:
            return _diff_units(path, reader(a), reader(b), keyed=suffix == ".xlsx")
        return _diff_units(path, text_units(a), text_units(b), keyed=False, by_likeness=True)
    except Exception:  # noqa: BLE001 - corrupt, truncated or binary: the bytes differ, that is the change
        return [Change("changed", (), path, file=path, unit="file")]


def _diff_units(path: str, a: dict[str, Any], b: dict[str, Any], keyed: bool, by_likeness: bool = False) -> list[Change]:
    """Keyed units (cells) compare by key; sequences (paragraphs, slides, lines) are aligned
    first, so one inserted paragraph is one change, not every paragraph after it. With
    ``by_likeness`` (lines) a replaced block pairs each line with its likest successor, so a
    CSV whose cleanup dropped a line ahead of a row pairs the row with itself, not with the
    line that moved up into its place."""
    out: list[Change] = []
    if keyed:
        for key in sorted(set(a) | set(b), key=_cell_order):
            x, y = a.get(key), b.get(key)
            if not _same(x, y):
                kind = "added" if x is None else "removed" if y is None else "changed"
                out.append(Change(kind, (), f"{path}!{key}", x, y, file=path, unit=key))
        return out
    names_a, names_b = list(a), list(b)
    texts_a, texts_b = [a[k] for k in names_a], [b[k] for k in names_b]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, texts_a, texts_b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        pairs = [] if op != "replace" else _likest(texts_a, texts_b, i1, i2, j1, j2) if by_likeness else \
            list(zip(range(i1, i2), range(j1, j2), strict=False))
        for i, j in pairs:
            out.append(Change("changed", (), f"{path}#{names_b[j]}", texts_a[i], texts_b[j], file=path,
                              unit=names_b[j]))
        for i in sorted(set(range(i1, i2)) - {i for i, _ in pairs}):
            out.append(Change("removed", (), f"{path}#{names_a[i]}", texts_a[i], None, file=path, unit=names_a[i]))
        for j in sorted(set(range(j1, j2)) - {j for _, j in pairs}):
            out.append(Change("added", (), f"{path}#{names_b[j]}", None, texts_b[j], file=path, unit=names_b[j]))
    return out


LIKE = 0.6  # two lines this alike (difflib's ratio) are one line edited; less, one gone and one new


def _likest(a: list, b: list, i1: int, i2: int, j1: int, j2: int) -> list[tuple[int, int]]:
    """(i, j) pairs of a replaced block, in order: each old line with the likest new line
    after the last pair, when alike enough."""
    pairs: list[tuple[int, int]] = []
    start = j1
    for i in range(i1, i2):
        scored = [(difflib.SequenceMatcher(None, str(a[i]), str(b[j]), autojunk=False).ratio(), -j, j)
                  for j in range(start, j2)]
        best = max(scored, default=None)
        if best is not None and best[0] >= LIKE:
            pairs.append((i, best[2]))
            start = best[2] + 1
    return pairs


def _cell_order(key: str) -> tuple:
    sheet, _, cell = key.rpartition("!")
    letters = cell.rstrip("0123456789")
    return (sheet, int(cell[len(letters):] or 0), len(letters), letters)


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if isinstance(x, int | float) and isinstance(y, int | float) and not isinstance(x, bool):
        return abs(float(x) - float(y)) <= TOLERANCE
    return str(x) == str(y)


def _cell(value: Any) -> Any:
    """A cell as compared: formulas as written, dates as ISO text, empty text as no value."""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def xlsx_units(data: bytes) -> dict[str, Any]:
    """"Sheet!B3" -> the cell's formula or value, for every non-empty cell; a sheet is also a
    unit of its own (added or removed with its name)."""
    # heavy: PIL, lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data), data_only=False)
    out: dict[str, Any] = {}
    for ws in wb.worksheets:
        out[f"{ws.title}!"] = ws.title
        for row in ws.iter_rows():
            for c in row:
                value = _cell(c.value)
                if value is not None:
                    out[f"{ws.title}!{c.coordinate}"] = value
    return out


def docx_units(data: bytes) -> dict[str, str]:
    """"paragraph N" / "table T row R cell C" -> its text, in body order."""
    # heavy: docx, lxml, imported when this runs
    from docx import Document

    doc = Document(io.BytesIO(data))
    out: dict[str, str] = {}
    for i, p in enumerate(doc.paragraphs):
        out[f"paragraph {i + 1}"] = p.text.strip()
    for t, table in enumerate(doc.tables):
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                out[f"table {t + 1} row {r + 1} cell {c + 1}"] = cell.text.strip()
    return {k: v for k, v in out.items() if v}


def pptx_units(data: bytes) -> dict[str, str]:
    """"slide N" -> the slide's text (text frames, then table cells, then chart data), so an
    edit shows as a change of the slide it is on."""
    # heavy: PIL, lxml, pptx, imported when this runs
    from pptx import Presentation

    out: dict[str, str] = {}
    for i, slide in enumerate(Presentation(io.BytesIO(data)).slides):
        parts = []
        for shape in slide.shapes:
            if shape.has_text_frame and shape.text_frame.text.strip():
                parts.append(shape.text_frame.text.strip())
            if getattr(shape, "has_table", False) and shape.has_table:
                parts.extend(c.text.strip() for row in shape.table.rows for c in row.cells if c.text.strip())
            if getattr(shape, "has_chart", False) and shape.has_chart:
                chart = shape.chart
                parts.extend(str(c) for c in chart.plots[0].categories) if chart.plots else None
                parts.extend(f"{s.name}: {list(s.values)}" for p in chart.plots for s in p.series)
        out[f"slide {i + 1}"] = " | ".join(parts)
    return out


def text_units(data: bytes) -> dict[str, str]:
    """"line N" -> the line, for a UTF-8 text file (anything else raises)."""
    text = data.decode("utf-8")
    return {f"line {i + 1}": line.rstrip() for i, line in enumerate(text.splitlines())}
