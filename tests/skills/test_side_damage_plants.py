"""Plants the every-card gate found missing, on small real files: a sort's allowance (the data
rows may change order, and only that: calc.sort_rows allowed every cell of the data rows to
change, so a digit changed in a column the rubric does not read passed the whole rubric), and
a form's table in a Word document (writer.replace_name), a CSV's cleanup (terminal.
clean_csv_then_total allowed the whole file, so a digit changed in a clean row passed its
rubric). In each the gate could plant nothing but an extra file."""

from __future__ import annotations

from pathlib import Path

from docx import Document
from openpyxl import Workbook, load_workbook

from guiforge.verify.contract import FinalState
from guiforge.verify.plant import plant_side_error
from guiforge.verify.side_effects import derive_allowances, side_damage

ROWS = [["Registration", 1, 770.53], ["Flights", 2, 162.64], ["Hotel", 3, 160.68], ["Per diem", 4, 50.0]]
SORT = [{"file": "costs.xlsx", "rows": ["Costs!A2:D5"]}, {"file": "costs.xlsx", "cells": ["Costs!C2:C5"]}]


def write(path: Path, rows: list[list]) -> bytes:
    """A sheet with a header, the rows, an Amount formula on each row's own cells (as a sort
    in LibreOffice rewrites it) and a total row."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Costs"
    ws.append(["Item", "Quantity", "Unit cost", "Amount"])
    for i, row in enumerate(rows, start=2):
        ws.append([*row, f"=B{i}*C{i}"])
    ws.append(["Total", None, None, f"=SUM(D2:D{len(rows) + 1})"])
    wb.save(path)
    return path.read_bytes()


def sorted_state(tmp_path: Path) -> FinalState:
    ws = tmp_path / "ws"
    ws.mkdir()
    initial = {"costs.xlsx": write(ws / "costs.xlsx", ROWS)}
    write(ws / "costs.xlsx", sorted(ROWS, key=lambda r: r[2]))  # smallest unit cost first
    return FinalState(workspace=ws, initial_files=initial)


def test_rows_that_only_changed_order_are_no_damage_and_a_changed_digit_in_them_is(tmp_path):
    state = sorted_state(tmp_path)
    assert side_damage(state, SORT) == []
    wb = load_workbook(state.workspace / "costs.xlsx")
    wb["Costs"]["B3"] = 5  # a quantity no check reads, changed in the sorted rows
    wb.save(state.workspace / "costs.xlsx")
    assert "costs.xlsx!Costs!B3" in [c.path for c in side_damage(state, SORT)]
    # the same sheet under the old allowance (every cell of the rows): the digit passed
    assert side_damage(state, [{"file": "costs.xlsx", "cells": ["Costs!A2:D5"]}]) == []


def test_the_plant_finds_a_digit_in_the_sorted_rows_not_only_an_extra_file(tmp_path):
    planted = plant_side_error(sorted_state(tmp_path), SORT)
    try:
        assert planted is not None and planted.description.startswith("costs.xlsx: Costs!"), planted
        assert side_damage(planted.state, SORT)
    finally:
        planted.cleanup()


def test_a_forms_table_in_a_document_gets_the_plant_and_the_verifier_sees_it(tmp_path):
    """writer.replace_name on a registration form: the name is in a table cell, the title in
    a paragraph; the plant edits another cell of the table (not only an extra file)."""
    def form(name: str) -> bytes:
        doc = Document()
        doc.add_paragraph("Summit registration")
        table = doc.add_table(rows=3, cols=2)
        for row, (label, value) in zip(table.rows, [("Attendee", name), ("Organisation", "Galiazzo Group"),
                                                    ("Registration ID", "BK222246-R")], strict=True):
            row.cells[0].text, row.cells[1].text = label, value
        doc.save(tmp_path / "ws" / "form.docx")
        return (tmp_path / "ws" / "form.docx").read_bytes()

    (tmp_path / "ws").mkdir()
    initial = {"form.docx": form("Manuel Lombardi")}
    form("Hans Kraus")
    state = FinalState(workspace=tmp_path / "ws", initial_files=initial)
    allowances = [{"file": "form.docx", "gone": ["Manuel Lombardi"]}, {"file": "form.docx", "text": ["Hans Kraus"]},
                  {"file": "form.docx", "text": ["Summit registration"]}]
    assert side_damage(state, allowances) == []
    planted = plant_side_error(state, allowances)
    try:
        assert planted is not None and planted.description.startswith("form.docx: table 1 row 3 cell 2"), planted
        assert side_damage(planted.state, allowances)
    finally:
        planted.cleanup()


DIRTY = "Item,Quantity,Unit cost,Amount\nRegistration,1,770.53,  770.53 \n\nFlights,1,162.64,162.64\n" \
        "Flights,1,162.64,162.64\nHotel,3,160.68,\"482,04\"\nPer diem,4,12.50,50.00\n"
CLEAN = "Item,Quantity,Unit cost,Amount\nRegistration,1,770.53,770.53\nFlights,1,162.64,162.64\n" \
        "Hotel,3,160.68,482.04\nPer diem,4,12.50,50.00\nTotal,,,1465.21\n"
DIRT = [{"kind": "number_format", "line": 2, "column": "Amount", "clean": "770.53", "dirty": "  770.53 "},
        {"kind": "blank_line", "line": 3, "column": "", "clean": "", "dirty": ""},
        {"kind": "duplicate_row", "line": 5, "column": "", "clean": "", "dirty": "Flights,1,162.64,162.64"},
        {"kind": "number_format", "line": 6, "column": "Amount", "clean": "482.04", "dirty": "482,04"}]


def test_a_csv_cleanup_may_touch_its_dirty_lines_and_the_total_and_no_other_line(tmp_path):
    rubric = [{"id": k, "check": {"fn": "csv_dirt_fixed", "path": "b.csv", "dirt": DIRT, "rows": [], "kinds": [k]}}
              for k in ("number_format", "blank_line", "duplicate_row")]
    rubric += [{"id": "total", "check": {"fn": "csv_cell_equals", "path": "b.csv", "row": 4, "column": "Amount",
                                         "value": 1465.21}},
               {"id": "label", "check": {"fn": "csv_cell_equals", "path": "b.csv", "row": 4, "column": 0,
                                         "value": "Total"}}]
    allowances = derive_allowances(rubric)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "b.csv").write_text(CLEAN)
    state = FinalState(workspace=tmp_path / "ws", initial_files={"b.csv": DIRTY.encode()})
    assert side_damage(state, allowances) == []
    (tmp_path / "ws" / "b.csv").write_text(CLEAN.replace("12.50,50.00", "12.5,50"))  # the same values restyled
    assert side_damage(state, allowances) == []
    (tmp_path / "ws" / "b.csv").write_text(CLEAN.replace("Per diem,4,", "Per diem,5,"))  # a clean row's digit
    assert [c.unit for c in side_damage(state, allowances)] == ["line 5"]
