"""World documents as .xlsx (openpyxl): spreadsheets sheet by sheet, invoices/receipts as a
line-item sheet, forms as a label/value sheet.

Totals: a total row holds a real ``=SUM(...)`` formula *and* its cached value. openpyxl
writes formulas without values, so after saving we put the world's total (which the world
consistency check proves equals the sum) into the formula cell's ``<v>``. openpyxl's
``data_only=True`` and LibreOffice (which does not recalculate xlsx on load) then both read
the right number with no LibreOffice round trip, and LibreOffice recomputes it as soon as the
agent edits a cell it depends on. ``recalculate_xlsx`` (a LibreOffice headless round trip)
is there for files written by tools that leave no cached values, e.g. an agent's script.
"""

from __future__ import annotations

import io
import re
import subprocess
import tempfile
from datetime import date, datetime, time
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from guiforge.preparers.file_common import (
    FileFormatError,
    is_money_column,
    issuer,
    money_format_code,
    normalize_package,
    recipient,
    total_label_column,
    typed_cell,
    world_clock,
)
from guiforge.worlds.model import Document, Sheet, World
from guiforge.worlds.sources import cents, data_rows, subtotal

HEADER_FONT = Font(bold=True, color="FFFFFF")
HEADER_FILL = PatternFill("solid", fgColor="305496")
TOTAL_BORDER = Border(top=Side(style="thin"), bottom=Side(style="double"))
DATE_FORMAT = "yyyy-mm-dd"
TIME_FORMAT = "hh:mm"

ZIP_EPOCH = datetime(1980, 1, 1)  # the earliest date a zip entry can carry
Cached = dict[str, dict[str, float]]  # sheet title -> cell ref -> cached formula value


def document_xlsx(world: World, doc: Document, formulas: bool = True) -> bytes:
    """The document as a workbook; ``formulas=False`` writes totals as plain values."""
    wb = Workbook()
    wb.remove(wb.active)
    cached: Cached = {}
    if doc.sheets:
        for sheet in doc.sheets:
            _write_sheet(world, doc, sheet, wb.create_sheet(sheet.name), cached, formulas)
    elif doc.line_items:
        _write_line_items(world, doc, wb.create_sheet(doc.kind.capitalize()), cached, formulas)
    elif doc.fields:
        _write_fields(doc, wb.create_sheet(doc.kind.capitalize()))
    else:
        raise FileFormatError(
            f"document {doc.document_id} ({doc.kind}) has no sheets, line items or fields to "
            "write as xlsx; use docx, pdf, md or txt"
        )
    return save_workbook(wb, world, doc, cached)


def save_workbook(wb: Workbook, world: World, doc: Document, cached: Cached) -> bytes:
    when = world_clock(world)
    props = wb.properties
    props.title, props.creator, props.lastModifiedBy = doc.title, _author_name(world, doc), None
    props.created = props.modified = when
    buf = io.BytesIO()
    wb.save(buf)
    patches = {
        f"xl/worksheets/sheet{i}.xml": _cache_patch(cached[ws.title])
        for i, ws in enumerate(wb.worksheets, start=1)
        if cached.get(ws.title)
    }
    return normalize_package(buf.getvalue(), when, patches)


def _author_name(world: World, doc: Document) -> str:
    return issuer(world, doc).name


def _cache_patch(values: dict[str, float]):
    def patch(xml: bytes) -> bytes:
        text = xml.decode("utf-8")
        for ref, value in values.items():
            pat = re.compile(rf'(<c r="{ref}"[^>]*>)<f>(.*?)</f>(?:<v\s*/>|<v></v>)')
            text, n = pat.subn(lambda m, v=value: f"{m[1]}<f>{m[2]}</f><v>{v!r}</v>", text)
            if n != 1:  # openpyxl changed how it writes formula cells: fail loudly, not silently
                raise RuntimeError(f"xlsx cache patch: formula cell {ref} not found once ({n})")
        return text.encode("utf-8")

    return patch


def _header(ws: Worksheet, row: int, names: list[str]) -> None:
    for j, name in enumerate(names, start=1):
        c = ws.cell(row=row, column=j, value=name)
        c.font, c.fill = HEADER_FONT, HEADER_FILL
        c.alignment = Alignment(horizontal="center", vertical="center")


def _fit_columns(ws: Worksheet, widths: dict[int, int]) -> None:
    for j, w in widths.items():
        ws.column_dimensions[get_column_letter(j)].width = max(8, min(50, w + 2))


def _text_width(v: object) -> int:
    if isinstance(v, float):
        return len(f"{v:,.2f}") + 2
    if isinstance(v, date | time | datetime):
        return 10
    return len(str(v)) if v is not None else 0


def _write_sheet(
    world: World, doc: Document, sheet: Sheet, ws: Worksheet, cached: Cached, formulas: bool
) -> None:
    _header(ws, 1, sheet.columns)
    ws.freeze_panes = "A2"
    money_cols = {j for j in range(len(sheet.columns)) if is_money_column(doc, sheet, j)}
    widths = {j + 1: len(name) + 2 for j, name in enumerate(sheet.columns)}
    body = data_rows(sheet)
    for i, row in enumerate(body, start=2):
        for j, raw in enumerate(row):
            value = typed_cell(raw)
            c = ws.cell(row=i, column=j + 1, value=value)
            if j in money_cols:
                c.number_format = money_format_code(world)
            elif isinstance(value, date):
                c.number_format = DATE_FORMAT
            elif isinstance(value, time):
                c.number_format = TIME_FORMAT
            widths[j + 1] = max(widths[j + 1], _text_width(value))
    if sheet.total_column:
        _total_row(world, sheet, ws, len(body) + 2, money_cols, cached, formulas)
    _fit_columns(ws, widths)


def _total_row(
    world: World,
    sheet: Sheet,
    ws: Worksheet,
    r: int,
    money_cols: set[int],
    cached: Cached,
    formulas: bool,
) -> None:
    last = sheet.rows[-1]
    col = sheet.columns.index(sheet.total_column or "")
    label_col = total_label_column(sheet)
    if label_col is not None:
        ws.cell(row=r, column=label_col + 1, value=last[label_col])
    letter = get_column_letter(col + 1)
    total = float(last[col])  # type: ignore[arg-type]  # the consistency check made it a number
    c = ws.cell(row=r, column=col + 1)
    if formulas and r > 2:
        c.value = f"=SUM({letter}2:{letter}{r - 1})"
        cached.setdefault(ws.title, {})[f"{letter}{r}"] = total
    else:
        c.value = total
    if col in money_cols:
        c.number_format = money_format_code(world)
    for j in range(1, len(sheet.columns) + 1):
        cell = ws.cell(row=r, column=j)
        cell.font, cell.border = Font(bold=True), TOTAL_BORDER


def _write_line_items(
    world: World, doc: Document, ws: Worksheet, cached: Cached, formulas: bool
) -> None:
    ws["A1"] = doc.title
    ws["A1"].font = Font(bold=True, size=14)
    r = 2
    parties = [("From", issuer(world, doc)), ("To", recipient(world, doc))]
    for label, party in parties:
        if party is not None:
            ws.cell(row=r, column=1, value=label).font = Font(bold=True)
            ws.cell(row=r, column=2, value=", ".join(party.lines()[:2]))
            r += 1
    for k, v in doc.fields.items():
        ws.cell(row=r, column=1, value=k).font = Font(bold=True)
        c = ws.cell(row=r, column=2, value=typed_cell(v))
        if isinstance(c.value, date):
            c.number_format = DATE_FORMAT
        r += 1
    ws.cell(row=r, column=1, value="Currency").font = Font(bold=True)
    ws.cell(row=r, column=2, value=doc.currency or world.currency)
    r += 2
    _header(ws, r, ["Description", "Quantity", "Unit price", "Amount"])
    first = r + 1
    fmt = money_format_code(world)
    for li in doc.line_items:
        r += 1
        ws.cell(row=r, column=1, value=li.description)
        ws.cell(row=r, column=2, value=li.quantity)
        ws.cell(row=r, column=3, value=li.unit_price).number_format = fmt
        amount = ws.cell(row=r, column=4)
        _formula(ws, amount, f"=ROUND(B{r}*C{r},2)", li.amount, cached, formulas)
        amount.number_format = fmt
    sub, total = subtotal(doc), doc.total if doc.total is not None else subtotal(doc)
    rows = [("Subtotal", f"=SUM(D{first}:D{r})", sub)]
    if doc.tax_rate:
        rows.append(
            (
                f"Tax ({doc.tax_rate:.0%})",
                f"=ROUND(D{r + 1}*{doc.tax_rate!r},2)",
                cents(total - sub),
            )
        )
    rows.append(("Total", f"=D{r + 1}+D{r + 2}" if doc.tax_rate else f"=D{r + 1}", total))
    for label, formula, value in rows:
        r += 1
        ws.cell(row=r, column=3, value=label).font = Font(bold=True)
        c = ws.cell(row=r, column=4)
        _formula(ws, c, formula, value, cached, formulas)
        c.number_format, c.font = fmt, Font(bold=True)
    ws.cell(row=r, column=4).border = TOTAL_BORDER
    widths = {1: max([12, *(len(li.description) for li in doc.line_items)]), 2: 10, 3: 14, 4: 14}
    _fit_columns(ws, widths)


def _formula(
    ws: Worksheet, cell, formula: str, value: float, cached: Cached, formulas: bool
) -> None:
    if formulas:
        cell.value = formula
        cached.setdefault(ws.title, {})[cell.coordinate] = float(value)
    else:
        cell.value = float(value)


def _write_fields(doc: Document, ws: Worksheet) -> None:
    ws["A1"] = doc.title
    ws["A1"].font = Font(bold=True, size=14)
    _header(ws, 3, ["Field", "Value"])
    for i, (k, v) in enumerate(doc.fields.items(), start=4):
        ws.cell(row=i, column=1, value=k).font = Font(bold=True)
        c = ws.cell(row=i, column=2, value=typed_cell(v))
        if isinstance(c.value, date):
            c.number_format = DATE_FORMAT
    width = max([10, *(len(v) for v in doc.fields.values())])
    _fit_columns(ws, {1: max(len(k) for k in doc.fields), 2: width})


def recalculate_xlsx(data: bytes, timeout_s: float = 60.0, when: datetime | None = None) -> bytes:
    """The workbook after LibreOffice headless opened, recalculated and saved it, so every
    formula has a cached value (for verifiers reading files written without them)."""
    with tempfile.TemporaryDirectory(prefix="guiforge-recalc-") as tmp:
        src, out = Path(tmp) / "in" / "book.xlsx", Path(tmp) / "out"
        src.parent.mkdir()
        src.write_bytes(data)
        run_soffice(
            ["--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(src)],
            Path(tmp) / "profile",
            timeout_s,
        )
        result = out / "book.xlsx"
        if not result.is_file():
            raise RuntimeError(
                "LibreOffice did not write the recalculated workbook; "
                "check that soffice runs headless on this machine"
            )
        # LibreOffice stamps zip entries with the current time; its members are stable
        return normalize_package(
            result.read_bytes(), when or ZIP_EPOCH, core_times=when is not None
        )


def run_soffice(args: list[str], profile: Path, timeout_s: float) -> None:
    """One headless soffice call with a throwaway profile (a shared one would lock)."""
    cmd = [
        "soffice",
        f"-env:UserInstallation={profile.resolve().as_uri()}",
        "--headless",
        "--norestore",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"soffice failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
