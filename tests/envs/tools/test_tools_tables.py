"""Table operations on real CSV and XLSX files (written with openpyxl)."""

from __future__ import annotations

import csv

import pytest
from openpyxl import Workbook
from tools_helpers import ok, run

from guiforge.envs.tools import ToolContext

SALES = [
    ["order_id", "region", "customer_id", "amount", "date"],
    ["A-1", "North", "C1", 120.5, "2025-01-03"],
    ["A-2", "South", "C2", 80, "2025-01-05"],
    ["A-3", "North", "C3", 310, "2025-01-02"],
    ["A-4", "East", "C1", 45.25, "2025-01-09"],
    ["A-5", "South", "C9", None, "2025-01-07"],
]


@pytest.fixture
def files(ctx: ToolContext) -> ToolContext:
    wb = Workbook()
    ws = wb.active
    ws.title = "Cover"
    ws.append(["Quarterly sales"])
    sheet = wb.create_sheet("Sales")
    for row in SALES:
        sheet.append(row)
    wb.save(ctx.workspace / "sales.xlsx")
    with (ctx.workspace / "customers.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["customer_id", "name", "amount"], ["C1", "Acme", "1,200"],
                                 ["C2", "Globex", "7"], ["C3", "Initech", "3.5"]])
    return ctx


def test_list_sheets_and_read(files: ToolContext):
    assert ok(files, "list_sheets", path="sales.xlsx") == ["Cover", "Sales"]
    t = ok(files, "read_table", path="sales.xlsx", sheet="Sales", limit=2)
    assert t["columns"] == SALES[0] and t["rows"] == SALES[1:3]
    assert t["total_rows"] == 5 and t["truncated"] is True
    c = ok(files, "read_table", path="customers.csv")
    assert c["rows"][0] == ["C1", "Acme", 1200]  # grouped thousands read as a number
    wrong = run(files, "read_table", path="sales.xlsx", sheet="Summary")
    assert not wrong.ok and "sheets: Cover, Sales" in wrong.error


def test_filter_and_write_output(files: ToolContext):
    t = ok(files, "filter_rows", path="sales.xlsx", sheet="Sales", column="amount", op=">", value=100,
           output="big.csv")
    assert [r[0] for r in t["rows"]] == ["A-1", "A-3"] and t["written_to"] == "big.csv"
    with (files.workspace / "big.csv").open() as f:
        assert list(csv.reader(f))[1:] == [["A-1", "North", "C1", "120.5", "2025-01-03"],
                                           ["A-3", "North", "C3", "310", "2025-01-02"]]
    north = ok(files, "filter_rows", path="big.csv", column="Region", op="==", value="north")
    assert north["total_rows"] == 2  # column and text matches are case-insensitive
    bad = run(files, "filter_rows", path="big.csv", column="price", op=">", value=1)
    assert not bad.ok and "no column 'price'" in bad.error


def test_sort_puts_empty_cells_last(files: ToolContext):
    t = ok(files, "sort_rows", path="sales.xlsx", sheet="Sales", by=["amount"], descending=True)
    assert [r[0] for r in t["rows"]] == ["A-3", "A-1", "A-2", "A-4", "A-5"]
    t = ok(files, "sort_rows", path="sales.xlsx", sheet="Sales", by=["region", "date"])
    assert [r[0] for r in t["rows"]] == ["A-4", "A-3", "A-1", "A-2", "A-5"]


def test_group_sum_and_stats(files: ToolContext):
    groups = ok(files, "group_sum", path="sales.xlsx", sheet="Sales", by="region", column="amount",
                output="by_region.csv")
    assert {g["key"]: (g["sum"], g["count"]) for g in groups} == {
        "North": (430.5, 2), "South": (80.0, 2), "East": (45.25, 1)}
    assert (files.workspace / "by_region.csv").read_text().splitlines()[0] == "region,sum_amount,count"
    s = ok(files, "column_stats", path="sales.xlsx", sheet="Sales", column="amount")
    assert (s["count"], s["empty"], s["numeric"], s["sum"], s["min"], s["max"]) == (5, 1, 4, 555.75, 45.25, 310)
    assert s["mean"] == pytest.approx(138.9375) and s["median"] == pytest.approx(100.25)
    text = ok(files, "column_stats", path="sales.xlsx", sheet="Sales", column="region")
    assert (text["distinct"], text["min"], text["max"], text["sum"]) == (3, "East", "South", None)


def test_join_inner_and_left(files: ToolContext):
    inner = ok(files, "join_tables", left="sales.xlsx", left_sheet="Sales", right="customers.csv",
               on="customer_id")
    assert inner["columns"] == SALES[0] + ["name", "amount_right"]
    assert [(r[0], r[5]) for r in inner["rows"]] == [("A-1", "Acme"), ("A-2", "Globex"),
                                                     ("A-3", "Initech"), ("A-4", "Acme")]
    left = ok(files, "join_tables", left="sales.xlsx", left_sheet="Sales", right="customers.csv",
              on="customer_id", how="left", output="joined.csv")
    assert left["total_rows"] == 5 and left["rows"][-1][5] is None


def test_write_csv_round_trips(files: ToolContext):
    ok(files, "write_csv", path="out/report.csv", columns=["k", "v"], rows=[["a", 1], ["b", 2.5]])
    assert ok(files, "read_table", path="out/report.csv")["rows"] == [["a", 1], ["b", 2.5]]
    ragged = run(files, "write_csv", path="x.csv", columns=["k", "v"], rows=[["a"]])
    assert not ragged.ok and "rows [0]" in ragged.error
    assert not run(files, "write_csv", path="x.txt", columns=["k"], rows=[]).ok
    assert "outside the workspace" in run(files, "write_csv", path="../x.csv", columns=["k"], rows=[]).error


def test_missing_and_non_table_files(files: ToolContext):
    (files.workspace / "photo.png").write_bytes(b"\x89PNG")
    assert "no file 'nope.csv'" in run(files, "read_table", path="nope.csv").error
    assert "not a table file" in run(files, "read_table", path="photo.png").error
    (files.workspace / "broken.xlsx").write_text("not a zip")
    assert "cannot read 'broken.xlsx' as a table" in run(files, "read_table", path="broken.xlsx").error
