"""The side-damage check (guiforge.verify.side_effects): the final state against s0, per app,
record and field and per file and unit, with what the task may change derived from its
rubric and its card's ``changes:``; planted side errors (guiforge.verify.plant) fail it.
These run on app state JSON and real office files; the package gate's proof in the real
environments is in test_side_damage_gate.py."""

from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest
from docx import Document
from openpyxl import Workbook, load_workbook

from guiforge.skills.card import SkillCard
from guiforge.verify.contract import Criterion, FinalState
from guiforge.verify.plant import plant_side_error
from guiforge.verify.runner import score_rubric
from guiforge.verify.side_effects import (
    CRITERION_ID,
    derive_allowances,
    side_damage,
    side_damage_criterion,
)
from guiforge.verify.state_diff import diff_apps

S0 = {
    "mail": {
        "me": {"name": "Ana", "email": "ana@example.com"},
        "inbox": [{"id": "e1", "subject": "Invoice 2041", "from": "bo@x.com", "read": False},
                  {"id": "e2", "subject": "Lunch", "from": "cy@x.com", "read": True}],
        "sent": [],
        "drafts": [{"id": "d1", "subject": "Quote", "to": ["bo@x.com"], "body": "Total 120"}],
    },
    "contacts": {"contacts": [{"id": "c1", "name": "Bo", "phone": "+1 555 0101", "email": "bo@x.com",
                               "updated": "2025-01-01T00:00:00"},
                              {"id": "c2", "name": "Cy", "phone": "+1 555 0102", "email": "cy@x.com",
                               "updated": "2025-01-01T00:00:00"}]},
    "chat": {"threads": [{"id": "t1", "messages": [{"id": "m1", "text": "hi"}], "unread": 2}]},
}

SEND_DRAFT = [
    {"id": "sent", "check": {"fn": "record_count", "path": "mail.sent", "where": {"id": "d1"}, "min": 1}},
    {"id": "gone", "check": {"fn": "record_count", "path": "mail.drafts", "where": {"id": "d1"}, "min": 0, "max": 0}},
]
UPDATE_PHONE = [
    {"id": "phone", "check": {"fn": "record_mentions", "path": "contacts.contacts", "where": {"id": "c1"},
                              "field": "phone", "value": "555 0199", "kind": "digits"}},
]


def sent_draft(apps: dict) -> dict:
    out = copy.deepcopy(apps)
    draft = out["mail"]["drafts"].pop(0)
    out["mail"]["sent"].append({**draft, "date": "2025-06-18T09:00:00"})
    return out


def state(apps: dict, initial: dict | None = S0) -> FinalState:
    return FinalState(apps=apps, initial_apps=initial)


def damage(final: dict, rubric: list[dict], extra: list | None = None) -> list[str]:
    return [c.describe() for c in side_damage(state(final), derive_allowances(rubric) + (extra or []))]


def test_the_diff_names_records_fields_and_nested_records():
    final = copy.deepcopy(S0)
    final["contacts"]["contacts"][1]["phone"] = "+1 555 0103"
    final["chat"]["threads"][0]["messages"].append({"id": "m2", "text": "yo"})
    del final["mail"]["inbox"][1]
    final["notes"] = {"notes": [{"id": "n1", "text": "new"}]}  # an app the task did not seed starts empty
    found = {(c.kind, c.path) for c in diff_apps(S0, final)}
    assert found == {("changed", "contacts.contacts[c2].phone"), ("added", "chat.threads[t1].messages[m2]"),
                     ("removed", "mail.inbox[e2]"), ("added", "notes.notes[n1]")}


def test_the_expected_change_passes_and_anything_else_fails():
    done = sent_draft(S0)
    assert damage(done, SEND_DRAFT) == []
    wrong_digit = copy.deepcopy(done)
    wrong_digit["mail"]["inbox"][1]["subject"] = "Lunch 2"
    assert damage(wrong_digit, SEND_DRAFT) == ["mail.inbox[e2].subject changed from 'Lunch' to 'Lunch 2'"]
    extra_email = copy.deepcopy(done)
    extra_email["mail"]["sent"].append({"id": "s9", "subject": "Message body", "to": ["bo@x.com"]})
    assert [d.split(" (")[0] for d in damage(extra_email, SEND_DRAFT)] == ["mail.sent[s9] added"]
    other_app = copy.deepcopy(done)
    other_app["contacts"]["contacts"].pop()
    assert damage(other_app, SEND_DRAFT)


def test_a_field_the_checks_name_may_change_and_no_other_field_of_that_record():
    final = copy.deepcopy(S0)
    final["contacts"]["contacts"][0]["phone"] = "+1 555 0199"
    final["contacts"]["contacts"][0]["updated"] = "2025-06-18T09:00:00"  # the app's own stamp on a save
    assert damage(final, UPDATE_PHONE) == []
    final["contacts"]["contacts"][0]["email"] = "bo@y.com"  # typed into the wrong field as well
    assert damage(final, UPDATE_PHONE) == ["contacts.contacts[c1].email changed from 'bo@x.com' to 'bo@y.com'"]
    stamped = copy.deepcopy(S0)
    stamped["contacts"]["contacts"][1]["updated"] = "2025-06-18T09:00:00"  # a stamp on a record nobody may change
    assert damage(stamped, UPDATE_PHONE)


def test_what_the_apps_change_on_their_own_is_no_damage():
    final = copy.deepcopy(S0)
    final["mail"]["inbox"][0]["read"] = True  # opened
    final["chat"]["threads"][0]["unread"] = 0
    assert damage(final, []) == []
    final["mail"]["inbox"][1]["read"] = False  # marked unread on purpose: a change
    assert damage(final, [])


def test_declared_changes_cover_consequences_the_rubric_does_not_name():
    s0 = {"bank": {"accounts": [{"id": "a1", "balance": 100, "name": "Checking"}],
                   "transactions": [], "transfers": []}}
    final = copy.deepcopy(s0)
    final["bank"]["transfers"].append({"id": "tr-1", "amount": 40})
    final["bank"]["accounts"][0]["balance"] = 60
    final["bank"]["transactions"].append({"id": "tr-1-out", "category": "Transfer", "amount": -40})
    rubric = [{"id": "t", "check": {"fn": "record_count", "path": "bank.transfers", "min": 1, "max": 1}}]
    declared = [{"path": "bank.accounts", "fields": ["balance"]},
                {"path": "bank.transactions", "where": {"category": "Transfer"}}]
    assert [c.path for c in side_damage(state(final, s0), derive_allowances(rubric))] == [
        "bank.accounts[a1].balance", "bank.transactions[tr-1-out]"]
    assert side_damage(state(final, s0), derive_allowances(rubric) + declared) == []
    final["bank"]["accounts"][0]["name"] = "Checking 2"
    assert [c.path for c in side_damage(state(final, s0), derive_allowances(rubric) + declared)] == [
        "bank.accounts[a1].name"]


def test_the_criterion_fails_in_the_verifier_and_without_an_initial_state_says_why():
    rubric = [Criterion(**c) for c in [*SEND_DRAFT, side_damage_criterion(derive_allowances(SEND_DRAFT))]]
    assert score_rubric(rubric, state(sent_draft(S0))).success
    bad = sent_draft(S0)
    bad["contacts"]["contacts"][0]["phone"] = "+1 555 0109"
    result = score_rubric(rubric, state(bad))
    assert not result.success and result.criteria == {"sent": 1, "gone": 1, CRITERION_ID: 0}
    blind = score_rubric(rubric, FinalState(apps=sent_draft(S0)))
    assert blind.criteria[CRITERION_ID] == 0
    assert "no initial state" in blind.errors[0]


def test_planted_errors_fail_every_allowance_set():
    done = sent_draft(S0)
    allowances = derive_allowances(SEND_DRAFT)
    planted = plant_side_error(state(done), allowances)
    assert planted is not None and side_damage(planted.state, allowances), planted
    assert side_damage(state(done), allowances) == []  # the reference's own state is untouched
    # even when every collection of the app may change, a digit somewhere else is found
    everything = [{"path": "mail"}, {"path": "contacts"}]
    planted = plant_side_error(state(done), everything)
    assert planted is not None and planted.description.startswith("chat."), planted.description
    assert side_damage(planted.state, everything)



def test_a_plant_is_never_an_edit_the_verifier_excuses():
    """A note whose body the task may edit, in an app holding only that note: a digit changed in
    its body leaves only the record's save stamp outside the allowances, and the verifier excuses
    a stamp beside an allowed change, so the plant must be something else (an extra note)."""
    s0 = {"notes": {"notes": [{"id": "n1", "title": "Talk", "body": "talk 21 July", "updated": "2025-06-17"}]}}
    done = copy.deepcopy(s0)
    done["notes"]["notes"][0].update(body="talk 21 July\nAsk for a receipt", updated="2025-06-18")
    allowances = derive_allowances([{"id": "line", "check": {
        "fn": "record_mentions", "path": "notes.notes", "where": {"id": "n1"}, "field": "body",
        "value": "Ask for a receipt"}}])
    planted = plant_side_error(FinalState(apps=done, initial_apps=s0), allowances)
    assert planted is not None and side_damage(planted.state, allowances), planted.description
    assert planted.description.startswith("an extra record in notes.notes"), planted.description

def _xlsx(path: Path, rows: list[list]) -> bytes:
    wb = Workbook()
    ws = wb.active
    ws.title = "Costs"
    for r in rows:
        ws.append(r)
    wb.save(path)
    return path.read_bytes()


def test_workspace_changes_per_cell_paragraph_and_file(tmp_path):
    rows = [["Item", "Amount"], ["Hotel", 420], ["Train", 88], ["Total", "=SUM(B2:B3)"]]
    doc = Document()
    for text in ("Report for June", "Spent 508 in total", "Signed: Ana"):
        doc.add_paragraph(text)
    buf = io.BytesIO()
    doc.save(buf)
    ws = tmp_path / "ws"
    ws.mkdir()
    initial = {"costs.xlsx": _xlsx(ws / "costs.xlsx", rows), "report.docx": buf.getvalue()}
    (ws / "report.docx").write_bytes(buf.getvalue())
    rubric = [{"id": "c", "check": {"fn": "xlsx_cell_equals", "path": "costs.xlsx", "sheet": "Costs", "cell": "B3",
                                    "value": 90}},
              {"id": "d", "check": {"fn": "document_contains", "path": "report.docx", "text": "510"}}]
    allowances = derive_allowances(rubric)
    fs = FinalState(workspace=ws, initial_files=initial)

    def edit_cell(cell: str, value) -> None:
        wb = load_workbook(ws / "costs.xlsx")
        wb["Costs"][cell] = value
        wb.save(ws / "costs.xlsx")

    edit_cell("B3", 90)
    (ws / ".~lock.costs.xlsx#").write_text("lock")  # LibreOffice's, not the agent's
    doc.paragraphs[1].text = "Spent 510 in total"
    doc.save(ws / "report.docx")
    assert side_damage(fs, allowances) == []
    edit_cell("B2", 421)
    assert [c.path for c in side_damage(fs, allowances)] == ["costs.xlsx!Costs!B2"]
    edit_cell("B2", 420)
    doc.paragraphs[2].text = "Signed: Anna"
    doc.save(ws / "report.docx")
    assert [c.path for c in side_damage(fs, allowances)] == ["report.docx#paragraph 3"]
    doc.paragraphs[2].text = "Signed: Ana"
    doc.save(ws / "report.docx")
    (ws / "scratch.txt").write_text("x")
    assert [c.path for c in side_damage(fs, allowances)] == ["scratch.txt"]
    (ws / "scratch.txt").unlink()
    planted = plant_side_error(fs, allowances)
    try:
        assert planted is not None and side_damage(planted.state, allowances), planted
        assert side_damage(fs, allowances) == []  # planted in a copy, never in the workspace itself
    finally:
        planted.cleanup()


def test_derivation_from_rubric_checks():
    rubric = [
        {"id": "a", "check": {"fn": "record_equals", "path": "shop.orders[-1].items", "field": "sku", "value": "X"}},
        {"id": "b", "check": {"fn": "state_equals", "path": "mail.sent[*].in_reply_to", "value": "e1"}},
        {"id": "c", "check": {"fn": "answer_mentions", "value": "3"}},
        {"id": "d", "check": {"fn": "xlsx_column_equals", "path": "a.xlsx", "column": "B", "values": [1, 2, 3]}},
        {"id": "e", "check": {"fn": "pptx_title_equals", "path": "d.pptx", "slide": 1, "text": "Q3"}},
        {"id": "f", "check": {"fn": "file_lacks", "path": "cv.docx", "text": "Old Name"}},
        {"id": "g", "check": {"fn": "glob_count", "pattern": ["pdf/*.pdf"], "count": 2}},
    ]
    assert derive_allowances(rubric) == [
        {"path": "shop.orders[*].items", "fields": ["sku"]}, {"path": "mail.sent[*].in_reply_to"},
        {"file": "a.xlsx", "cells": ["B2:B4"]}, {"file": "d.pptx", "slides": [2]},
        {"file": "cv.docx", "gone": ["Old Name"]}, {"file": "pdf/*.pdf"}]
    # a reply is a new sent record holding the checked field
    s0 = {"mail": {"sent": [{"id": "s1", "in_reply_to": None}]}}
    final = {"mail": {"sent": [*s0["mail"]["sent"], {"id": "s2", "in_reply_to": "e1"}]}}
    assert side_damage(state(final, s0), derive_allowances(rubric)) == []


def test_cards_get_the_criterion_and_may_not_write_it_themselves():
    from guiforge.skills.check import sample_worlds
    from guiforge.skills.instantiate import bindings, render
    from guiforge.skills.loader import load_cards

    cards = load_cards(Path(__file__).resolve().parents[2] / "skills")
    world = sample_worlds(1)[0]
    card = cards["bank.move_to_savings"]
    c = render(card, world, bindings(card, world)[0], "web", None, 1)
    last = c.rubric[-1]
    assert last["id"] == CRITERION_ID and last["required"]
    assert {"path": "bank.accounts", "fields": ["balance"]} in last["check"]["changes"]  # declared
    assert any(a.get("path") == "bank.transfers" for a in last["check"]["changes"])  # derived
    raw = card.model_dump()
    raw["rubric"] = [*raw["rubric"], {"id": CRITERION_ID, "check": {"fn": "no_side_damage"}}]
    with pytest.raises(ValueError, match="added to every rubric automatically"):
        SkillCard.model_validate(raw)


def test_a_plant_is_held_against_s0_not_against_the_reference_result(tmp_path):
    """A file (or record) the task adds may hold anything: an edit inside it is no side error,
    so the plant goes where s0 had something."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sales.csv").write_text("region,amount\nNorth,120\nSouth,80\n")
    initial = {"sales.csv": (ws / "sales.csv").read_bytes()}
    (ws / "result.txt").write_text("200.00\n")  # what the task writes
    allowances = derive_allowances([{"id": "r", "check": {"fn": "file_mentions_number", "path": "result.txt",
                                                          "value": 200}}])
    fs = FinalState(workspace=ws, initial_files=initial)
    assert side_damage(fs, allowances) == []
    planted = plant_side_error(fs, allowances)
    try:
        assert planted is not None and planted.description.startswith("sales.csv"), planted.description
        assert [c.file for c in side_damage(planted.state, allowances)] == ["sales.csv"]
    finally:
        planted.cleanup()
    s0 = {"mail": {"sent": []}}
    final = {"mail": {"sent": [{"id": "s1", "subject": "Total 200"}]}}
    rules = [{"path": "mail.sent"}]
    planted = plant_side_error(state(final, s0), rules)
    assert planted is None or side_damage(planted.state, rules)  # never the task's own new record
