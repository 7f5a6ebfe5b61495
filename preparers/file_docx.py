"""World documents as .docx (python-docx): text documents as headed sections (see
docx_sections), forms and
itineraries with a label/value table, invoices with a line-item table, spreadsheets as
tables, slides as one section per slide. Any document kind can be written as docx."""

from __future__ import annotations

import io

from docx import Document as new_docx
from docx.enum.table import WD_TABLE_ALIGNMENT
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.table import Table

from guiforge.preparers.docx_sections import write_sections
from guiforge.preparers.file_common import (
    is_money_column,
    issuer,
    money,
    normalize_package,
    plain_number,
    quantity_text,
    recipient,
    world_clock,
)
from guiforge.worlds.model import Document, Sheet, World
from guiforge.worlds.sources import cents, subtotal

FORM_BLANK = "_" * 24  # what an empty form field shows: a line to fill in


def document_docx(world: World, doc: Document) -> bytes:
    d = new_docx()
    _styled(d, doc.title, "Title")
    if doc.line_items:
        _parties(d, world, doc)
    if doc.fields:
        if doc.kind == "form":
            d.add_paragraph("Please complete every field and return this form.")
        _fields_table(d, doc)
    if doc.line_items:
        _line_items(d, world, doc)
    if doc.paragraphs:
        if doc.kind == "itinerary":
            _styled(d, "Notes", "Heading2")
        for text in doc.paragraphs:
            d.add_paragraph(text)
    if doc.sections:
        write_sections(d, world, doc)
    for sheet in doc.sheets:
        _styled(d, sheet.name, "Heading2")
        _sheet_table(d, world, doc, sheet)
    for n, s in enumerate(doc.slides, start=1):
        _styled(d, f"{n}. {s.title}", "Heading2")
        for b in s.bullets:
            _styled(d, b, "ListBullet")
        if s.notes:
            d.add_paragraph().add_run(f"Speaker notes: {s.notes}").italic = True
    return _save(d, world, doc)


def _styled(d, text: str, style_id: str) -> None:
    """A paragraph in one of the default template's styles, set by style id: python-docx's
    look-up by style name scans styles.xml each time (about 40 ms per document)."""
    p = d.add_paragraph(text)
    p._p.style = style_id


def _save(d, world: World, doc: Document) -> bytes:
    when = world_clock(world)
    cp = d.core_properties
    cp.title, cp.author, cp.last_modified_by = doc.title, issuer(world, doc).name, ""
    cp.created = cp.modified = when
    cp.revision = 1
    buf = io.BytesIO()
    d.save(buf)
    return normalize_package(buf.getvalue(), when)


def _bold_row(table: Table, values: list[str]) -> None:
    cells = table.add_row().cells
    for c, v in zip(cells, values, strict=True):
        c.text = ""
        c.paragraphs[0].add_run(v).bold = True


def _grid(d, columns: list[str]) -> Table:
    table = d.add_table(rows=1, cols=len(columns))
    table._tbl.tblStyle_val = "TableGrid"  # see _styled
    table.alignment = WD_TABLE_ALIGNMENT.CENTER
    for c, name in zip(table.rows[0].cells, columns, strict=True):
        c.text = ""
        c.paragraphs[0].add_run(name).bold = True
    return table


def _parties(d, world: World, doc: Document) -> None:
    table = d.add_table(rows=1, cols=2)
    for cell, label, party in zip(
        table.rows[0].cells,
        ("From", "To"),
        (issuer(world, doc), recipient(world, doc)),
        strict=True,
    ):
        cell.text = ""
        cell.paragraphs[0].add_run(label).bold = True
        for line in party.lines() if party else []:
            cell.add_paragraph(line)


def _fields_table(d, doc: Document) -> None:
    table = d.add_table(rows=0, cols=2)
    table._tbl.tblStyle_val = "TableGrid"  # see _styled
    for k, v in doc.fields.items():
        label, value = table.add_row().cells
        label.text = ""
        label.paragraphs[0].add_run(k).bold = True
        value.text = v if v or doc.kind != "form" else FORM_BLANK


def _line_items(d, world: World, doc: Document) -> None:
    d.add_paragraph(f"All amounts in {doc.currency or world.currency}.")
    table = _grid(d, ["Description", "Quantity", "Unit price", "Amount"])
    for li in doc.line_items:
        cells = table.add_row().cells
        values = [
            li.description,
            quantity_text(world, li.quantity),
            money(world, li.unit_price),
            money(world, li.amount),
        ]
        for j, (c, v) in enumerate(zip(cells, values, strict=True)):
            c.text = v
            if j:
                c.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.RIGHT
    sub = subtotal(doc)
    total = doc.total if doc.total is not None else sub
    _bold_row(table, ["", "", "Subtotal", money(world, sub)])
    if doc.tax_rate:
        _bold_row(table, ["", "", f"Tax ({doc.tax_rate:.0%})", money(world, cents(total - sub))])
    _bold_row(table, ["", "", "Total", money(world, total)])


def _sheet_table(d, world: World, doc: Document, sheet: Sheet) -> None:
    table = _grid(d, sheet.columns)
    money_cols = {j for j in range(len(sheet.columns)) if is_money_column(doc, sheet, j)}
    for row in sheet.rows:
        cells = table.add_row().cells
        for j, (c, v) in enumerate(zip(cells, row, strict=True)):
            if v is None:
                c.text = ""
            elif isinstance(v, int | float) and not isinstance(v, bool):
                c.text = money(world, v) if j in money_cols else plain_number(v)
                c.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.RIGHT
            else:
                c.text = str(v)
