"""Every document of real template worlds, in every format its kind allows, opens with its own
library and states the facts the world sources from it."""

from __future__ import annotations

import io
from datetime import datetime

import pytest
from docx import Document as open_docx
from openpyxl import load_workbook
from pptx import Presentation

from guiforge.preparers.files import FORMATS, build_workspace, read_file_text, render_document
from guiforge.worlds.consistency import quotes
from guiforge.worlds.formats import format_money
from guiforge.worlds.seeds import locale_info
from guiforge.worlds.sources import data_rows


def test_every_document_in_every_format_states_its_facts(worlds, stated_facts):
    """Every document in its own format; one document of each kind in every format."""
    first_of_kind: set[str] = set()
    kinds, formats, checked = set(), set(), 0
    for sid, world in worlds.items():
        for doc in world.documents:
            fmts = [None]
            if doc.kind not in first_of_kind:
                first_of_kind.add(doc.kind)
                fmts += sorted(FORMATS[doc.kind])
            for fmt in fmts:
                name, data = render_document(world, doc.document_id, fmt)
                text = read_file_text(name, data)
                assert doc.kind in ("spreadsheet", "slides") or doc.title in text, name
                for fact in stated_facts(world, doc.document_id):
                    assert quotes(text, fact), f"{sid}/{name}: lacks {fact.key}={fact.value!r}"
                    checked += 1
                kinds.add(doc.kind)
                formats.add(name.rsplit(".", 1)[1])
    assert kinds == set(FORMATS)
    assert formats == {"xlsx", "pptx", "docx", "pdf", "md", "txt", "csv"}
    assert checked > 60


def test_native_format_is_the_filename(worlds):
    world = worlds["expense_report"]
    for doc in world.documents:
        name, data = render_document(world, doc.document_id)
        assert name == doc.filename
        assert data


def test_xlsx_total_is_a_sum_formula_with_its_cached_value(worlds):
    world = worlds["expense_report"]  # de_AT: the money format puts € after the number
    doc = next(d for d in world.documents if d.kind == "spreadsheet" and d.sheets[0].total_column)
    _, data = render_document(world, doc.document_id)
    sheet = doc.sheets[0]
    values = load_workbook(io.BytesIO(data), data_only=True)[sheet.name]
    formulas = load_workbook(io.BytesIO(data))[sheet.name]
    n = len(sheet.rows) + 1  # header + data rows + total row
    col = sheet.columns.index(sheet.total_column) + 1
    total_cell = formulas.cell(row=n, column=col)
    letter = total_cell.column_letter
    assert total_cell.value == f"=SUM({letter}2:{letter}{n - 1})"
    assert values.cell(row=n, column=col).value == pytest.approx(sheet.rows[-1][col - 1])
    assert sum(r[col - 1] for r in data_rows(sheet)) == pytest.approx(sheet.rows[-1][col - 1])
    assert [c.value for c in values[1]] == sheet.columns
    assert values["A1"].font.bold and values.freeze_panes == "A2"
    assert total_cell.number_format.endswith('"€"')
    first = values.cell(row=2, column=1)
    if sheet.columns[0] == "Date":
        assert isinstance(first.value, datetime) and first.number_format == "yyyy-mm-dd"
    assert values.column_dimensions["C"].width > 10


def test_invoice_xlsx_formulas_carry_world_totals(worlds):
    world = worlds["freelance_invoicing"]
    doc = next(d for d in world.documents if d.kind == "invoice")
    _, data = render_document(world, doc.document_id, "xlsx")
    ws = load_workbook(io.BytesIO(data), data_only=True).active
    fws = load_workbook(io.BytesIO(data)).active
    cells = {
        r[2].value: (r[3].value, fws[r[3].coordinate].value)
        for r in ws.iter_rows()
        if r[2].value in ("Subtotal", "Total") or str(r[2].value).startswith("Tax")
    }
    value, formula = cells["Total"]
    assert value == pytest.approx(doc.total) and str(formula).startswith("=")
    assert str(cells["Subtotal"][1]).startswith("=SUM(")


def test_pptx_slides_notes_and_figures(worlds):
    world = worlds["conference_trip"]
    deck = next(d for d in world.documents if d.kind == "slides")
    budget = next(
        d for d in world.documents if d.kind == "spreadsheet" and d.sheets[0].total_column
    )
    ws = build_workspace(
        world,
        {
            "documents": [
                {"document": deck.document_id, "figures": [{"document": budget.document_id}]}
            ]
        },
    )
    (data,) = ws.files.values()
    prs = Presentation(io.BytesIO(data))
    slides = list(prs.slides)
    assert len(slides) == len(deck.slides) + 2  # + table slide + chart slide
    assert prs.slide_width > prs.slide_height
    for s, spec in zip(slides, deck.slides, strict=False):
        assert s.shapes.title.text == spec.title
        body = "\n".join(sh.text_frame.text for sh in s.shapes if sh.has_text_frame)
        assert all(b in body for b in spec.bullets)
        if spec.notes:
            assert s.notes_slide.notes_text_frame.text == spec.notes
    table = next(sh for sh in slides[-2].shapes if sh.has_table).table
    total = budget.sheets[0].rows[-1][-1]
    assert table.cell(len(table.rows) - 1, len(table.columns) - 1).text == format_money(
        total, locale_info(world.me.locale)
    )
    chart = next(sh for sh in slides[-1].shapes if sh.has_chart).chart
    rows = data_rows(budget.sheets[0])
    assert list(chart.plots[0].categories) == [r[0] for r in rows]
    assert list(chart.series[0].values) == pytest.approx([r[-1] for r in rows])


def test_docx_form_is_a_label_value_table(worlds):
    world = worlds["job_application"]
    form = next(d for d in world.documents if d.kind == "form")
    _, data = render_document(world, form.document_id, "docx")
    d = open_docx(io.BytesIO(data))
    assert d.paragraphs[0].text == form.title
    rows = {r.cells[0].text: r.cells[1].text for r in d.tables[0].rows}
    for k, v in form.fields.items():
        assert rows[k] == (v or "_" * 24)
    created = d.core_properties.created.replace(tzinfo=None)
    assert created == datetime.combine(world.base_date, datetime.min.time()).replace(hour=9)


def test_pdf_invoice_layout(worlds):
    world = worlds["freelance_invoicing"]  # pl_PL: '1 234,50 zł' needs a Unicode font
    doc = next(d for d in world.documents if d.kind == "invoice")
    name, data = render_document(world, doc.document_id)
    text = read_file_text(name, data)
    loc = locale_info(world.me.locale)
    total_line = next(line for line in text.splitlines() if line.strip().startswith("Total"))
    assert format_money(doc.total, loc) in total_line
    assert "zł" in total_line
    assert "INVOICE" in text and "Bill to" in text and world.me.name in text
    for li in doc.line_items:
        assert li.description in text and format_money(li.amount, loc) in text
    assert f"All amounts in {doc.currency}" in text
