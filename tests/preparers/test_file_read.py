"""read_file_text on what agents leave behind: ODF files, formulas without cached values,
CSV cells, text in unknown encodings."""

from __future__ import annotations

import io
import re
import zipfile

import pytest

from guiforge.preparers.files import read_file_text, render_document

ODS_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body>
<office:spreadsheet><table:table table:name="Budget">
<table:table-row><table:table-cell><text:p>Flights</text:p></table:table-cell>
<table:table-cell table:number-columns-repeated="2"><text:p>453.46 €</text:p></table:table-cell>
<table:table-cell table:number-columns-repeated="1020"/></table:table-row>
</table:table></office:spreadsheet>
<office:text><text:h>Trip report</text:h><text:p>Total <text:span>2,000.30</text:span></text:p>
</office:text></office:body></office:document-content>"""


def test_odf_rows_expand_repeated_cells():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", ODS_CONTENT)
    text = read_file_text("budget.ods", buf.getvalue())
    assert text == "Flights\t453.46 €\t453.46 €\nTrip report\nTotal 2,000.30\n"


def test_formula_without_cached_value_reads_as_formula(worlds):
    world = worlds["expense_report"]
    _, data = render_document(world, "exp_claim")
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.startswith("xl/worksheets/"):
                body = re.sub(rb"(</f>)<v>[^<]*</v>", rb"\1<v></v>", body)
            dst.writestr(info, body)
    text = read_file_text("claim.xlsx", out.getvalue())
    assert "=SUM(D2:D" in text  # a verifier sees why the total is missing


def test_csv_cells_and_bad_text():
    assert read_file_text("a.csv", b'a,b\n"x, y",1089.98\n') == "a\tb\nx, y\t1089.98\n"
    with pytest.raises(ValueError, match="a.csv: does not parse as CSV"):
        read_file_text("a.csv", b'a,"b\nc')
    with pytest.raises(ValueError, match="notes.md: not UTF-8 text"):
        read_file_text("notes.md", "Café".encode("latin-1"))
