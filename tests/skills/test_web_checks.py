"""The record/answer checks the web and mobile cards use, and the reference-program
additions they rely on (``read`` with ``${name}``, prefix options, clearing a field by touch).

Pure functions over a FinalState; no browser."""

from __future__ import annotations

import pytest

from guiforge.envs.base import FinalState, Observation
from guiforge.teacher.reference import GroundingError, ReferenceProgram
from guiforge.verify.checks import CHECKS, matching, mentions, mentions_time

APPS = {
    "calendar": {"events": [
        {"id": "ev1", "title": "Talk rehearsal", "start": "2025-06-23T14:00:00", "end": "2025-06-23T14:45:00",
         "attendees": [{"name": "Priscilla Adinolfi", "email": "p.adinolfi@x.it"}, {"name": "Arturo G", "email": "a.g@x.it"}]},
        {"id": "ev2", "title": "Flight home", "start": "2025-07-18T12:30:00", "end": "2025-07-18T15:50:00", "attendees": []},
    ]},
    "shop": {"catalog": [
        {"sku": "A", "name": "Wireless mouse", "category": "Electronics", "price": 27.99, "rating": 4.1, "stock": 5},
        {"sku": "B", "name": "USB-C charger", "category": "Electronics", "price": 19.5, "rating": 4.8, "stock": 0},
        {"sku": "C", "name": "Headphones", "category": "Electronics", "price": 210.0, "rating": 4.8, "stock": 2},
        {"sku": "D", "name": "Notebook", "category": "Office", "price": 9.0, "rating": 3.9, "stock": 9},
    ], "orders": [{"items": [{"sku": "A", "qty": 1}], "total": 30.23}], "cart": []},
    "chat": {"threads": [
        {"id": "ch_a", "participants": ["c_a"], "messages": [
            {"id": "ch_a-m1", "sender": "c_a", "text": "Which room? 11:00 again?", "sent_at": "2025-06-17T17:45:00"},
            {"id": "ch_a-m2", "sender": "me", "text": "Hall B, 16 July 2025 at 2:30 pm. Call 0520 131963.",
             "sent_at": "2025-06-18T09:01:00"}]},
    ]},
}


def state(answer: str | None = None, apps: dict | None = None) -> FinalState:
    return FinalState(apps=apps or APPS, answer=answer)


def run(name: str, st: FinalState | None = None, **kwargs) -> bool:
    return CHECKS[name](st or state(), **kwargs)


def test_where_lookups():
    events = "calendar.events"
    assert [r["id"] for r in matching(state(), events, {"title__contains": "REHEARSAL"})] == ["ev1"]
    assert [r["id"] for r in matching(state(), events, {"attendees[*].email": "A.G@x.it"})] == ["ev1"]
    assert [r["id"] for r in matching(state(), events, {"start__gt": "2025-07-01"})] == ["ev2"]
    assert [r["sku"] for r in matching(state(), "shop.catalog", {"stock__gt": 0, "category__ne": "Office"})] == ["A", "C"]
    assert [r["sku"] for r in matching(state(), "shop.catalog", {"sku__in": ["B", "D"]})] == ["B", "D"]
    assert len(matching(state(), "chat.threads[*].messages", {"id__startswith": "ch_a-m", "sender": "me"})) == 1
    with pytest.raises(ValueError, match="unknown lookup"):
        matching(state(), events, {"title__like": "x"})


def test_record_count_and_equals():
    assert run("record_count", path="calendar.events", where={"title": "flight home"}, min=1, max=1)
    assert not run("record_count", path="calendar.events", where={"title": "Flight"}, min=1)
    assert run("record_equals", path="calendar.events", where={"id": "ev1"}, field="attendees[*].email", value="p.adinolfi@x.it")
    assert not run("record_equals", path="calendar.events", where={"id": "ev2"}, field="attendees[*].email", value="p.adinolfi@x.it")
    assert run("record_equals", path="shop.catalog", where={"category": "Electronics"}, field="rating", value=4.8)
    assert not run("record_equals", path="shop.catalog", where={"category": "Electronics"}, field="rating", value=4.8,
                   expect="all")
    assert not run("record_equals", path="shop.catalog", where={"category": "Garden"}, field="rating", value=4.8, expect="all")
    # value_from: the value a task could not know in advance, read from the same final state
    assert run("record_equals", path="shop.catalog", field="sku", value_from="shop.orders[-1].items[0].sku")
    assert not run("record_equals", path="shop.catalog", field="sku", value_from="shop.orders[5].items[0].sku")


def test_record_mentions_kinds():
    msgs = "chat.threads[*].messages"
    mine = {"sender": "me"}
    assert run("record_mentions", path=msgs, where=mine, field="text", value="2025-07-16", kind="date")
    assert run("record_mentions", path=msgs, where=mine, field="text", value="14:30", kind="time")
    assert not run("record_mentions", path=msgs, where=mine, field="text", value="11:00", kind="time")
    assert run("record_mentions", path=msgs, where=mine, field="text", value="0520131963", kind="digits")
    assert run("record_mentions", path=msgs, where=mine, field="text", value=["hall b", "16 July"])
    assert not run("record_mentions", path=msgs, where=mine, field="text", value=["hall b", "Room 2"])
    assert run("record_mentions", path="calendar.events", where={"id": "ev1"}, field="attendees",
               value=["p.adinolfi@x.it", "a.g@x.it"])
    assert run("record_mentions", path="shop.catalog", field="price", kind="number", value_from="shop.catalog[0].price")


@pytest.mark.parametrize(("text", "value", "ok"), [
    ("at 14:30", "14:30", True), ("2:30 pm", "14:30", True), ("2.30PM", "14:30", True), ("14h30", "14:30", True),
    ("2 pm sharp", "14:00", True), ("2pm", "14:00", True), ("at 14h", "14:00", True), ("11 a.m.", "11:00", True),
    ("12 am", "00:00", True), ("12:15 pm", "12:15", True),
    ("11 students", "11:00", False), ("2 amazing talks", "02:00", False), ("4:30 pm", "14:30", False),
    ("2025-06-14 30", "14:30", False),
])
def test_mentions_time(text, value, ok):
    assert mentions_time(text, value) is ok


def test_mentions_other_kinds():
    assert mentions("total 1.234,50 €", 1234.5, "number")
    assert mentions("on July 16th", "2025-07-16", "date")
    assert mentions("+31 (0)20 555 0101", "31020 5550101", "digits")
    assert not mentions("no digits here", "", "digits")
    with pytest.raises(ValueError):
        mentions("x", "y", "colour")


def test_answer_checks():
    assert run("answer_mentions", state("It starts 23 June at 2 PM"), value="14:00", kind="time")
    assert run("answer_mentions", state("23 June or 24 June"), value=["2025-06-23", "2025-06-24"], kind="date")
    assert not run("answer_mentions", state("23 June"), value=["2025-06-23", "2025-06-24"], kind="date")
    assert not run("answer_mentions", state(None), value="x")
    # the answer is compared with a value the verifier reads from the final state
    assert run("answer_matches_state", state("It's $27.99"), path="shop.catalog", where={"name": "wireless mouse"},
               field="price")
    assert run("answer_matches_state", state("9.00"), path="shop.catalog", field="price", agg="min")
    assert run("answer_matches_state", state("two, 2"), path="shop.catalog", where={"stock__gt": 0, "category": "Electronics"},
               agg="count")
    assert not run("answer_matches_state", state("27.99"), path="shop.catalog", where={"name": "Desk"}, field="price")


def test_record_is_extreme():
    in_stock = {"category": "Electronics", "stock__gt": 0}
    assert run("record_is_extreme", path="shop.catalog", where=in_stock, by="price", key="sku",
               target="shop.orders[-1].items[*].sku")
    # out-of-stock B is cheaper but excluded; C is the best-rated in stock (tied with B)
    assert not run("record_is_extreme", path="shop.catalog", where={"category": "Electronics"}, by="price", key="sku",
                   target="shop.orders[-1].items[*].sku")
    apps = {**APPS, "shop": {**APPS["shop"], "cart": [{"sku": "C"}]}}
    assert run("record_is_extreme", state(apps=apps), path="shop.catalog", where=in_stock, by="rating", key="sku",
               target="shop.cart[*].sku", mode="max")
    assert not run("record_is_extreme", path="shop.catalog", where=in_stock, by="rating", key="sku",
                   target="shop.cart[*].sku", mode="max")


# -- reference programs ------------------------------------------------------------------------
def obs(*elements: dict) -> Observation:
    return Observation(debug={"elements": [{"grid": [500, 500 + i], **e} for i, e in enumerate(elements)], "path": "/x"})


def test_read_then_fill():
    steps = [{"do": "read", "label": "nonstop", "pattern": r"^Select (.+?) at ", "as": "flight"},
             {"do": "type", "id": "title", "text": "Flight ${flight}"}]
    program = ReferenceProgram(steps, "web")
    screen = obs({"id": "s1", "label": "Select Meridian MD123 at 6:05 AM, nonstop, for €99.00"}, {"id": "title", "label": "Title"})
    first = program.send(screen)
    assert first.action.type == "click" and first.step_index == 1  # the read step costs no action
    typed = program.send(screen)
    assert typed.action.type == "type" and typed.action.text == "Flight Meridian MD123"


def test_read_leaves_other_placeholders_and_names_a_mismatch():
    program = ReferenceProgram([{"do": "type", "text": "echo ${HOME}"}], "web")
    assert program.send(obs()).action.text == "echo ${HOME}"  # a shell's variable, not a read value
    program = ReferenceProgram([{"do": "read", "label": "Select", "pattern": r"for (\d+)$", "as": "x"}], "web")
    with pytest.raises(GroundingError, match="does not match"):
        program.send(obs({"id": "s", "label": "Select this"}))


def test_select_falls_back_to_an_option_that_starts_with_the_text():
    program = ReferenceProgram([{"do": "select", "id": "transfer-to", "option": "Savings"}], "web")
    assert program.send(obs({"id": "transfer-to", "label": "To"})).action.type == "click"
    menu = obs({"id": "transfer-to-option-0", "label": "Choose payee"}, {"id": "transfer-to-option-1", "label": "Savings (•••• 1234)"})
    pick = program.send(menu)
    assert (pick.action.x, pick.action.y) == (500, 501)


def test_clearing_a_field_by_touch_long_presses_it():
    program = ReferenceProgram([{"do": "type", "id": "event-start", "text": "10:00", "clear": True}], "mobile")
    screen = obs({"id": "event-start", "label": "Start"})
    kinds = [program.send(screen).action.type for _ in range(3)]
    assert kinds == ["tap", "long_press", "type"]
