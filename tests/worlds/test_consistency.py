"""check_world catches each kind of inconsistency with the right code, and accepts the
common ways people write amounts and dates."""

from __future__ import annotations

from datetime import datetime

import pytest

from guiforge.worlds.consistency import check_world, quotes
from guiforge.worlds.model import Fact, World
from guiforge.worlds.template_builder import build_world


def codes(world: World) -> list[str]:
    return [p.code for p in check_world(world)]


def test_hand_made_world_is_consistent(world):
    assert check_world(world) == []


def _email(w: World, email_id: str):
    return next(e for e in w.emails if e.email_id == email_id)


BREAKS = {
    "unknown_address": lambda w: setattr(
        _email(w, "em_invoice"), "sender", "stranger@elsewhere.com"
    ),
    "unknown_address#cc": lambda w: _email(w, "em_claim").cc.append("ghost@example.co.uk"),
    "unknown_attachment": lambda w: _email(w, "em_invoice").attachments.append("inv_missing"),
    "unknown_attendee": lambda w: w.events[0].attendees.append("c_ghost"),
    "unknown_participant": lambda w: w.chats[0].participants.append("c_ghost"),
    "unknown_sender": lambda w: setattr(w.chats[0].messages[0], "sender", "c_hotel"),
    "unknown_author": lambda w: setattr(w.documents[0], "author", "c_ghost"),
    "event_order": lambda w: setattr(w.events[0], "end", datetime(2024, 5, 2, 8)),
    "sent_in_future": lambda w: setattr(_email(w, "em_claim"), "sent_at", datetime(2024, 5, 21, 9)),
    "invoice_line": lambda w: setattr(w.documents[0].line_items[0], "amount", 331.0),
    "invoice_total": lambda w: setattr(w.documents[0], "total", 422.5),
    "invoice_total#missing": lambda w: setattr(w.documents[0], "total", None),
    "field_total": lambda w: w.documents[0].fields.update({"Invoice total": "£400.00"}),
    "sheet_total": lambda w: w.documents[1].sheets[0].rows[-1].__setitem__(1, 450.0),
    "sheet_shape": lambda w: w.documents[1].sheets[0].rows[0].append("extra"),
    "fact_source": lambda w: setattr(w.facts[0], "value", 400.0),
    "fact_source_invalid": lambda w: setattr(w.facts[0], "source", "doc:inv_missing.total"),
    "fact_value": lambda w: setattr(w.facts[2], "value", "May 2"),
    "unknown_cite": lambda w: _email(w, "em_claim").cites.append("no_such_fact"),
    "cite_missing": lambda w: setattr(
        _email(w, "em_claim"), "body", "Claim attached, cost centre CC-1234, 2 May 2024."
    ),
    "cite_missing#chat": lambda w: setattr(
        w.chats[0].messages[1], "text", "On May 3rd, taxi was £37.25"
    ),
    "cite_missing#note": lambda w: setattr(w.notes[0], "body", "Claim £449.57 total."),
    "duplicate_address": lambda w: setattr(w.contacts[1], "email", "ADA@example.co.uk"),
    "persona_mismatch": lambda w: setattr(w, "persona_id", "per_someone_else"),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_each_break_is_caught_with_its_code(world, case):
    BREAKS[case](world)
    expected = case.split("#")[0]
    found = check_world(world)
    assert expected in [p.code for p in found], found
    assert all(p.message and "\n" not in p.message for p in found)


def test_invoice_total_message_names_document_and_numbers(world):
    world.documents[0].total = 422.5
    msg = next(p for p in check_world(world) if p.code == "invoice_total").message
    assert msg == "document inv_hotel: total 422.50 != sum of line items 343.75 + 20% tax = 412.50"


def test_email_quoting_a_different_total_than_its_attachment(world):
    em = _email(world, "em_invoice")
    em.body, em.cites = "Invoice attached. The total amount due is £421.50.\n", []
    assert codes(world) == ["quoted_total"]
    em.body = "Invoice attached: 3 nights in total, amount due £412.50.\n"
    assert codes(world) == []  # "3 nights in total" is a count, and the amount is right


def test_fact_agreeing_with_invoice_but_email_quoting_stale_number(world):
    """The LLM failure mode: the invoice was edited, the fact and the email kept the old total."""
    world.documents[0].line_items[1].amount = 46.0
    world.documents[0].line_items[1].unit_price = 46.0 / 3
    world.documents[0].total = 413.6
    world.documents[0].fields = {}
    assert {"fact_source", "quoted_total"} <= set(codes(world))


@pytest.mark.parametrize(
    "text",
    ["1234.5", "1234.50", "1,234.50", "$1,234.50", "1.234,50 €", "1 234,50 zł", "EUR 1234.50", "₹1,234.50",
     "total: 1'234.50", "(1,234.50)"],
)  # fmt: skip
def test_money_quoted_in_common_formats(text):
    assert quotes(text, Fact(key="k", kind="money", value=1234.5))


@pytest.mark.parametrize("text", ["1,234.05", "11,234.50", "1234.55", "12345.0", "1.2345"])
def test_money_not_quoted(text):
    assert not quotes(text, Fact(key="k", kind="money", value=1234.5))


def test_large_amounts_and_indian_grouping():
    fact = Fact(key="k", kind="money", value=1234567.0)
    assert (
        quotes("₹12,34,567.00", fact) and quotes("1.234.567 €", fact) and quotes("1 234 567", fact)
    )
    assert not quotes("1,234,568", fact)


@pytest.mark.parametrize(
    "text",
    ["2024-05-02", "2 May 2024", "May 2, 2024", "Thursday, 2 May 2024", "on May 2nd", "the 2nd of May", "02/05/2024",
     "2 may"],
)  # fmt: skip
def test_dates_quoted_iso_or_long(text):
    assert quotes(text, Fact(key="d", kind="date", value="2024-05-02"))


@pytest.mark.parametrize("text", ["2024-05-12", "12 May 2024", "May 20", "2024-05-021"])
def test_dates_not_quoted(text):
    assert not quotes(text, Fact(key="d", kind="date", value="2024-05-02"))


def test_numbers_and_text_quoting():
    assert quotes("we are 12 people", Fact(key="n", kind="number", value=12))
    assert not quotes("we are 120 people", Fact(key="n", kind="number", value=12))
    assert quotes("Cost centre:  cc-1234.", Fact(key="t", kind="text", value="CC-1234"))


def test_template_world_with_a_broken_invoice_is_caught(scenarios, personas_by_locale):
    w = build_world(personas_by_locale["de_DE"], scenarios["expense_report"], seed=5)
    inv = w.document("inv_hotel")
    inv.total = round(inv.total + 10, 2)
    found = codes(w)
    assert "invoice_total" in found and "fact_source" in found


ODD = {
    "nan_amount": lambda w: setattr(w.documents[0].line_items[0], "amount", float("nan")),
    "inf_total": lambda w: setattr(w.documents[0], "total", float("inf")),
    "short_total_row": lambda w: w.documents[1].sheets[0].rows.__setitem__(-1, ["Total"]),
    "text_in_total_column": lambda w: w.documents[1].sheets[0].rows[0].__setitem__(1, "412.50"),
    "bad_source_grammar": lambda w: setattr(w.facts[0], "source", "invoice total"),
    "source_on_text_cell": lambda w: setattr(
        w.facts[1], "source", "doc:claim.sheet:Expenses.sum:Item"
    ),
    "source_missing_column": lambda w: setattr(
        w.facts[1], "source", "doc:claim.sheet:Expenses.avg:Nope"
    ),
    "money_fact_as_text": lambda w: setattr(w.facts[0], "value", "£412.50"),
    "nan_fact": lambda w: setattr(w.facts[0], "value", float("nan")),
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_odd_llm_worlds_are_problems_not_crashes(world, case):
    ODD[case](world)
    found = check_world(world)
    assert found and all(isinstance(p.code, str) and p.message for p in found)
