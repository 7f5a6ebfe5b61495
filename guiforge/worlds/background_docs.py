"""Background workbooks: the spreadsheets a person keeps about their own everyday life, made
from the world's dense data so that a task on them has to scroll, filter and tell rows
apart. Today one: ``budget_<year>.xlsx``, the current account's payments ("Transactions":
Date, Payee, Category, Amount; what the bank app lists, oldest first), a "By category" and
a "Monthly" summary, both adding up to the transactions. ``check_budget(world)`` is the
consistency rule that holds them to it (``budget_rows``, ``budget_summary``). Used by
``background.with_background``."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import TYPE_CHECKING

from guiforge.worlds.model import Document, Sheet, Transaction, World
from guiforge.worlds.sources import cents

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

BUDGET_ID = "bg_budget"
MAX_ROWS = 200  # a year's worth of card payments is more than anyone scrolls through in one task
TX_COLUMNS = ["Date", "Payee", "Category", "Amount"]
CATEGORY_COLUMNS = ["Category", "Payments", "Total"]
MONTH_COLUMNS = ["Month", "Money in", "Money out", "Net"]


def add_workbooks(life: Life) -> None:
    """Append the budget workbook to ``life.documents`` (nothing when there are no payments):
    every payment of the account, the scenario's and the background's, as the bank app shows them."""
    txs = sorted([*life.world.transactions, *life.transactions], key=lambda t: (t.booked_on, t.transaction_id))
    txs = txs[-MAX_ROWS:]
    if not txs:
        return
    year = life.world.base_date.year
    taken = {d.filename.lower() for d in life.world.documents}
    filename = f"budget_{year}.xlsx" if f"budget_{year}.xlsx" not in taken else f"household_budget_{year}.xlsx"
    life.documents.append(budget_workbook(txs, f"Budget {year}", filename))


def budget_workbook(txs: list[Transaction], title: str, filename: str) -> Document:
    """The three sheets over ``txs`` (in the order given): every payment, then the sums."""
    rows = [[t.booked_on.isoformat(), t.payee, t.category or "Other", t.amount] for t in txs]
    return Document(document_id=BUDGET_ID, kind="spreadsheet", title=title, filename=filename, author="me",
                    sheets=[_with_total(Sheet(name="Transactions", columns=TX_COLUMNS, rows=rows), "Amount", "Net"),
                            by_category(rows), monthly(rows)])  # fmt: skip


def by_category(rows: list[list]) -> Sheet:
    """Categories by how much went through them, largest spending first."""
    count: dict[str, int] = defaultdict(int)
    total: dict[str, Decimal] = defaultdict(Decimal)
    for _, _, cat, amount in rows:
        count[cat] += 1
        total[cat] += Decimal(str(amount))
    out = [[c, count[c], cents(total[c])] for c in sorted(total, key=lambda c: (total[c], c))]
    return _with_total(Sheet(name="By category", columns=CATEGORY_COLUMNS, rows=out), "Total", "Net")


def monthly(rows: list[list]) -> Sheet:
    """Per calendar month: money in, money out (a positive figure, as statements print it), net."""
    ins: dict[str, Decimal] = defaultdict(Decimal)
    outs: dict[str, Decimal] = defaultdict(Decimal)
    for day, _, _, amount in rows:
        month, a = day[:7], Decimal(str(amount))
        ins[month] += max(a, Decimal(0))
        outs[month] += max(-a, Decimal(0))
    months = sorted(set(ins) | set(outs))
    out = [[m, cents(ins[m]), cents(outs[m]), cents(ins[m] - outs[m])] for m in months]
    return _with_total(Sheet(name="Monthly", columns=MONTH_COLUMNS, rows=out), "Net", "Net")


def _with_total(sheet: Sheet, column: str, label: str) -> Sheet:
    col = sheet.columns.index(column)
    last: list = [None] * len(sheet.columns)
    last[0], last[col] = label, cents(sum(Decimal(str(r[col])) for r in sheet.rows))
    return sheet.model_copy(update={"rows": [*sheet.rows, last], "total_column": column})


# -- the consistency rule -------------------------------------------------------------------
def check_budget(world: World) -> list[tuple[str, str]]:
    """(rule, message) for each way the budget workbook disagrees with the world's payments or
    with itself: every row is one of the world's transactions, and both summaries are what
    the rows add up to."""
    doc = next((d for d in world.documents if d.document_id == BUDGET_ID), None)
    if doc is None:
        return []
    sheets = {s.name: s for s in doc.sheets}
    if set(sheets) != {"Transactions", "By category", "Monthly"}:
        return [("budget_summary", f"document {BUDGET_ID}: sheets {sorted(sheets)} are not "
                                   "Transactions, By category and Monthly")]  # fmt: skip
    tx = sheets["Transactions"]
    if tx.columns != TX_COLUMNS or not tx.rows:
        return [("budget_rows", f"document {BUDGET_ID}: Transactions has columns {tx.columns}, not {TX_COLUMNS}")]
    rows = tx.rows[:-1]
    known = {(t.booked_on.isoformat(), t.payee, t.category or "Other", round(t.amount, 2))
             for t in world.transactions}  # fmt: skip
    out = [("budget_rows", f"document {BUDGET_ID} Transactions row {i + 2}: {r} is none of the world's payments")
           for i, r in enumerate(rows)
           if (r[0], r[1], r[2], round(r[3], 2) if isinstance(r[3], int | float) else r[3]) not in known]  # fmt: skip
    if out:
        return out[:3]
    want = {"Transactions": _with_total(Sheet(name="Transactions", columns=TX_COLUMNS, rows=rows), "Amount", "Net"),
            "By category": by_category(rows), "Monthly": monthly(rows)}  # fmt: skip
    for name, sheet in want.items():
        if sheets[name].rows != sheet.rows or sheets[name].columns != sheet.columns:
            got = sheets[name]
            diff = next((i for i, (a, b) in enumerate(zip(got.rows, sheet.rows, strict=False)) if a != b),
                        min(len(got.rows), len(sheet.rows)))  # fmt: skip
            out.append(("budget_summary", f"document {BUDGET_ID} sheet {name!r} row {diff + 2} does not add up "
                                          f"to the Transactions sheet"))  # fmt: skip
    return out
