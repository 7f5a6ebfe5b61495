"""Real LibreOffice (headless) opens a sample of every format the preparers write, and computes
the same SUM the preparers cache in xlsx total cells."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile

import pytest
from openpyxl import load_workbook

from guiforge.preparers.file_xlsx import recalculate_xlsx, run_soffice
from guiforge.preparers.files import build_workspace, render_document
from guiforge.worlds.formats import find_number

pytestmark = pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice not installed")


def _strip_cached_values(xlsx: bytes) -> bytes:
    """The workbook as a tool that writes formulas without values would leave it."""
    src = zipfile.ZipFile(io.BytesIO(xlsx))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.startswith("xl/worksheets/"):
                body = re.sub(rb"(</f>)<v>[^<]*</v>", rb"\1<v></v>", body)
            dst.writestr(info, body)
    return out.getvalue()


def test_libreoffice_opens_every_format(worlds, tmp_path):
    world = worlds["conference_trip"]
    budget = next(
        d for d in world.documents if d.kind == "spreadsheet" and d.sheets[0].total_column
    )
    deck = next(d for d in world.documents if d.kind == "slides")
    invoice = next(d for d in world.documents if d.kind == "invoice")
    form_world = worlds["job_application"]
    form = next(d for d in form_world.documents if d.kind == "form")
    files = build_workspace(
        world,
        {
            "documents": [
                budget.document_id,
                {"document": deck.document_id, "figures": [{"document": budget.document_id}]},
                {"document": invoice.document_id, "format": "pdf", "name": "inv_pdf.pdf"},
                {"document": invoice.document_id, "format": "xlsx", "name": "inv_xlsx.xlsx"},
            ],
            "csv": [{"document": budget.document_id, "name": "budget_csv.csv"}],
        },
    ).files
    files["form_docx.docx"] = render_document(form_world, form.document_id, "docx")[1]
    src = tmp_path / "in"
    src.mkdir()
    for name, data in files.items():
        (src / name).write_bytes(data)
    out = tmp_path / "out"
    run_soffice(
        ["--convert-to", "pdf", "--outdir", str(out), *map(str, sorted(src.iterdir()))],
        tmp_path / "profile",
        timeout_s=180,
    )
    texts = {}
    for name in files:
        pdf = out / (name.rsplit(".", 1)[0] + ".pdf")
        assert pdf.is_file(), f"LibreOffice did not open/convert {name}"
        texts[name] = subprocess.run(
            ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
        ).stdout
    total = budget.sheets[0].rows[-1][-1]
    assert find_number(texts[budget.filename], total)  # the cached SUM, as Calc shows it
    assert find_number(texts["budget_csv.csv"], total)
    assert find_number(texts["inv_xlsx.xlsx"], invoice.total)
    assert find_number(texts["inv_pdf.pdf"], invoice.total)
    assert deck.slides[-1].title in texts[deck.filename]
    assert form.fields["Reference"] in texts["form_docx.docx"]


def test_libreoffice_computes_the_cached_sum(worlds):
    world = worlds["expense_report"]
    doc = next(d for d in world.documents if d.kind == "spreadsheet" and d.sheets[0].total_column)
    sheet = doc.sheets[0]
    _, data = render_document(world, doc.document_id)
    bare = _strip_cached_values(data)
    n, col = len(sheet.rows) + 1, sheet.columns.index(sheet.total_column) + 1
    assert load_workbook(io.BytesIO(bare), data_only=True)[sheet.name].cell(n, col).value is None
    recalculated = recalculate_xlsx(bare)
    got = load_workbook(io.BytesIO(recalculated), data_only=True)[sheet.name].cell(n, col).value
    assert got == pytest.approx(sheet.rows[-1][col - 1])
    formula = load_workbook(io.BytesIO(recalculated))[sheet.name].cell(n, col).value
    assert str(formula).upper().startswith("=SUM(")
