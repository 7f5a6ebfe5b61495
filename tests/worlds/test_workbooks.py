"""Workbooks of realistic size: every default world holds a background budget workbook of
dozens of payments over three sheets whose summaries agree with its rows (and with the
world's account), scenario workbooks reach 20+ rows over several sheets, and the
consistency rules catch a workbook that does not add up."""

from __future__ import annotations

from collections import defaultdict

import pytest

from guiforge.worlds.background_docs import BUDGET_ID
from guiforge.worlds.consistency import check_world
from guiforge.worlds.realism import density_summary, world_density
from guiforge.worlds.template_builder import build_world

# scenario workbooks that are long lists, with the rows they must reach
LONG_SHEETS = {"shop_inventory": ("stock_sheet", "Stock", 21), "teaching_class": ("grades", "Grades", 20),
               "moving_house": ("boxes", "Inventory", 29), "team_offsite": ("attendees", "Attendees", 20),
               "family_event": ("guest_list", "Guests", 25), "freelance_invoicing": ("timelog", "Hours", 31),
               "job_application": ("tracker", "Applications", 19), "conference_trip": ("schedule", "Programme", 22)}  # fmt: skip


@pytest.fixture(scope="module")
def worlds(scenarios, personas_by_locale):
    """One default (background on) world per scenario, personas of different locales."""
    personas = [p for _, p in sorted(personas_by_locale.items())]
    return [build_world(personas[i % len(personas)], sc, seed=i) for i, sc in enumerate(scenarios.values())]


def _rows(world, doc_id, sheet):
    s = next(s for s in world.document(doc_id).sheets if s.name == sheet)
    return s.rows[:-1] if s.total_column else s.rows


def test_every_world_has_a_budget_workbook_whose_summaries_agree_with_its_payments(worlds):
    for w in worlds:
        doc = w.document(BUDGET_ID)
        assert doc.filename == f"budget_{w.base_date.year}.xlsx" and [s.name for s in doc.sheets] == \
            ["Transactions", "By category", "Monthly"]
        tx = _rows(w, BUDGET_ID, "Transactions")
        assert 60 <= len(tx) <= 200, len(tx)
        # each row is one of the account's payments, oldest first
        account = {(t.booked_on.isoformat(), t.payee, t.category, t.amount) for t in w.transactions}
        assert all(tuple(r) in account for r in tx) and [r[0] for r in tx] == sorted(r[0] for r in tx)
        # recomputed here from the rows, not with the module's helpers
        per_cat, n_cat = defaultdict(float), defaultdict(int)
        ins, outs = defaultdict(float), defaultdict(float)
        for day, _, cat, amount in tx:
            per_cat[cat] += amount
            n_cat[cat] += 1
            (ins if amount > 0 else outs)[day[:7]] += abs(amount)
        by_cat = {r[0]: r for r in _rows(w, BUDGET_ID, "By category")}
        assert set(by_cat) == set(per_cat) and len(by_cat) >= 5
        for cat, (_, n, total) in by_cat.items():
            assert n == n_cat[cat] and total == pytest.approx(per_cat[cat], abs=0.01), cat
        monthly = _rows(w, BUDGET_ID, "Monthly")
        assert [r[0] for r in monthly] == sorted(set(ins) | set(outs))
        for month, money_in, money_out, net in monthly:
            assert money_in == pytest.approx(ins[month], abs=0.01) and money_out == pytest.approx(outs[month], abs=0.01)
            assert net == pytest.approx(money_in - money_out, abs=0.01)
        totals = [s.rows[-1][s.columns.index(s.total_column)] for s in doc.sheets]
        assert totals[0] == pytest.approx(sum(r[3] for r in tx), abs=0.01) and len(set(totals)) == 1, totals


def test_scenario_workbooks_are_long_lists_over_several_sheets(worlds):
    for w in worlds:
        if w.scenario in LONG_SHEETS:
            doc_id, sheet, least = LONG_SHEETS[w.scenario]
            assert len(_rows(w, doc_id, sheet)) >= least, (w.scenario, len(_rows(w, doc_id, sheet)))
            assert len(w.document(doc_id).sheets) >= 2, w.scenario
    density = [world_density(w) for w in worlds]
    assert sum(d["sheets_per_workbook"] for d in density) / len(density) >= 2
    assert min(d["max_sheet_rows"] for d in density) >= 60  # the budget's Transactions
    assert all(d["mean_sheet_rows"] >= 10 for d in density), [(d["scenario"], d["mean_sheet_rows"]) for d in density]


def test_realism_summary_reports_sheets_per_workbook_and_rows_per_sheet(worlds):
    summary = {r["metric"]: r for r in density_summary(worlds)}
    for metric in ("workbooks", "sheets_per_workbook", "mean_sheet_rows", "max_sheet_rows"):
        assert summary[metric]["worlds"] == len(worlds), metric
    d = world_density(worlds[0])
    books = [doc for doc in worlds[0].documents if doc.sheets]
    sheets = [s for doc in books for s in doc.sheets]
    assert d["workbooks"] == len(books) and d["sheets_per_workbook"] == round(len(sheets) / len(books), 2)
    assert d["mean_sheet_rows"] == round(sum(len(s.rows) for s in sheets) / len(sheets), 1)
    assert summary["sheets_per_workbook"]["meets_target"] and summary["max_sheet_rows"]["meets_target"]


def test_shop_summaries_agree_with_the_stock_sheet(worlds):
    w = next(w for w in worlds if w.scenario == "shop_inventory")
    stock = _rows(w, "stock_sheet", "Stock")
    for cat, products, units, value in _rows(w, "stock_sheet", "By category"):
        mine = [r for r in stock if r[2] == cat]
        assert (products, units) == (len(mine), sum(r[4] for r in mine))
        assert value == pytest.approx(sum(r[6] for r in mine), abs=0.01)
    ordered = _rows(w, "stock_sheet", "To order")
    assert [r[1] for r in ordered] == [r[1] for r in stock if r[8] == "yes"]


def test_the_consistency_check_names_a_budget_that_does_not_add_up(worlds):
    w = worlds[0]
    assert not {p.code for p in check_world(w)} & {"budget_rows", "budget_summary"}
    doc = w.document(BUDGET_ID)
    by_cat = doc.sheets[1]
    rows = [list(r) for r in by_cat.rows]
    rows[0][2] = round(rows[0][2] + 10, 2)
    broken = doc.model_copy(update={"sheets": [doc.sheets[0], by_cat.model_copy(update={"rows": rows}), doc.sheets[2]]})
    bad = w.model_copy(update={"documents": [broken if d.document_id == BUDGET_ID else d for d in w.documents]})
    assert "budget_summary" in {p.code for p in check_world(bad)}
    tx = doc.sheets[0]
    rows = [list(r) for r in tx.rows]
    rows[3][1] = "Somebody Else Ltd"
    broken = doc.model_copy(update={"sheets": [tx.model_copy(update={"rows": rows}), *doc.sheets[1:]]})
    bad = w.model_copy(update={"documents": [broken if d.document_id == BUDGET_ID else d for d in w.documents]})
    problems = [p for p in check_world(bad) if p.code == "budget_rows"]
    assert problems and "row 5" in problems[0].message and "Somebody Else Ltd" in problems[0].message


def test_budget_workbook_is_deterministic(scenarios, personas_by_locale):
    p = personas_by_locale["fr_FR"]
    a = build_world(p, scenarios["moving_house"], seed=4).document(BUDGET_ID)
    b = build_world(p, scenarios["moving_house"], seed=4).document(BUDGET_ID)
    assert a == b
    assert build_world(p, scenarios["moving_house"], seed=4, background=False).documents[-1].document_id != BUDGET_ID
