"""Background life: dense worlds that keep the scenario intact and stay consistent."""

from __future__ import annotations

import re
from collections import Counter

from guiforge.worlds.background import with_background
from guiforge.worlds.consistency import check_world
from guiforge.worlds.realism import TARGETS, density_summary, rule_failures, world_density
from guiforge.worlds.template_builder import build_world


def test_dense_worlds_keep_the_scenario_and_pass_the_check(scenarios, personas_by_locale):
    worlds = []
    for i, (_loc, p) in enumerate(sorted(personas_by_locale.items())):
        sc = list(scenarios.values())[i % len(scenarios)]
        bare = build_world(p, sc, seed=i, background=False)
        w = build_world(p, sc, seed=i)
        assert {p.code for p in check_world(w)} <= {"occupation_scenario", "self_employed_manager"}
        # the scenario's own content is untouched and comes first among contacts
        assert w.contacts[: len(bare.contacts)] == bare.contacts
        for label in ("emails", "events", "transactions", "documents", "facts"):
            ids = {getattr(x, "email_id", None) or getattr(x, "event_id", None)
                   or getattr(x, "transaction_id", None) or getattr(x, "document_id", None)
                   or getattr(x, "key", None) for x in getattr(w, label)}  # fmt: skip
            bare_ids = {getattr(x, "email_id", None) or getattr(x, "event_id", None)
                        or getattr(x, "transaction_id", None) or getattr(x, "document_id", None)
                        or getattr(x, "key", None) for x in getattr(bare, label)}  # fmt: skip
            assert bare_ids <= ids, label
        # no background person shares a first name with a scenario person: bindings stay unique
        firsts = Counter(c.name.split()[0] for c in w.contacts if c.relation != "newsletter")
        scenario_firsts = {c.name.split()[0] for c in bare.contacts}
        assert all(firsts[f] == Counter(c.name.split()[0] for c in bare.contacts)[f] for f in scenario_firsts)
        # nothing sent after 'today'
        assert all(e.sent_at.date() <= w.base_date for e in w.emails)
        worlds.append(w)
    summary = {r["metric"]: r for r in density_summary(worlds)}
    for metric, target in TARGETS.items():
        assert summary[metric]["mean"] >= target, (metric, summary[metric])
    assert summary["categories"]["min"] >= 5 and summary["calendar_days"]["min"] >= 60


def test_background_is_deterministic_and_differs_between_worlds(scenarios, personas_by_locale):
    p = personas_by_locale["de_DE"]
    a = build_world(p, scenarios["moving_house"], seed=1, background=False)
    assert with_background(a) == with_background(a)
    b = build_world(p, scenarios["moving_house"], seed=2, background=False)
    names_a = {c.name for c in with_background(a).contacts}
    names_b = {c.name for c in with_background(b).contacts}
    assert len(names_a & names_b) < 10


def test_near_misses_two_bills_from_one_supplier_and_a_moved_meeting(scenarios, personas_by_locale):
    w = build_world(personas_by_locale["en_GB"], scenarios["family_event"], seed=3)
    bill_no = re.compile(r"\b(?:INV|RE|BILL|FA)-\d{6}\b")
    bills = Counter(e.sender for e in w.emails if bill_no.search(e.subject))
    assert bills and max(bills.values()) >= 2
    moved = [e for e in w.emails if e.subject.startswith("Moved: ")]
    assert len(moved) == 1
    title = moved[0].subject.removeprefix("Moved: ")
    assert [e.title for e in w.events].count(title) == 1  # the calendar has only the new slot
    # every bill e-mail that was paid has its payment in the account with the same number
    for e in w.emails:
        if m := bill_no.search(e.subject):
            assert any(t.memo == f"Invoice {m.group(0)}" for t in w.transactions), m.group(0)


def test_rule_failures_count_rules_from_exclusions():
    rows = [
        {"subject_table": "worlds", "gate": "consistency", "reason": "vat_rate: x",
         "details_json": '{"rules": ["vat_rate", "currency"]}'},
        {"subject_table": "worlds", "gate": "consistency", "reason": "vat_rate: y",
         "details_json": '{"rules": ["vat_rate"]}'},
        {"subject_table": "tasks", "gate": "leak", "reason": "z", "details_json": "{}"},
    ]  # fmt: skip
    out = rule_failures(rows)
    assert out[0] == {"rule": "vat_rate", "worlds": 2, "example": "vat_rate: x"}
    assert [r["rule"] for r in out] == ["vat_rate", "currency"]


def test_world_density_counts(world):
    d = world_density(world)
    assert d["contacts"] == len(world.contacts) and d["emails"] == len(world.emails)
    assert d["threads"] <= d["emails"]
