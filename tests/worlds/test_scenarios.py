"""Scenario files: the shipped ones load; a broken one fails at load time (or, for what only
shows when building, at build time) with one line naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from guiforge.errors import ConfigError, GuiforgeError
from guiforge.worlds.scenarios import load_scenario, load_scenarios, suitable_scenarios
from guiforge.worlds.seeds import load_persona_seeds
from guiforge.worlds.template_builder import build_world

MINI = """\
id: mini
title: "Mini world for {{ me.name }}"
vars:
  nights: {randint: [1, 3]}
  rate: {money: [80, 120]}
  day: {date: [-9, -3]}
people:
  hotel: {role: front desk, relation: vendor, organization: Hotel Mini}
events:
  - id: ev_stay
    title: Stay
    start: {day: "{{ day }}", time: "15:00"}
    minutes: 60
    attendees: [hotel]
documents:
  - id: inv
    kind: invoice
    title: Invoice
    filename: invoice.pdf
    author: hotel
    line_items:
      - {description: Room, quantity: "{{ nights }}", unit_price: "{{ rate }}"}
facts:
  - {key: total, kind: money, source: doc:inv.total}
emails:
  - id: em_inv
    from: hotel
    to: [me]
    at: {day: "{{ day }}", time: [9, 12]}
    subject: Your invoice
    body: "The total is {{ facts.total | money }}."
    attachments: [inv]
    cites: [total]
"""


def write(tmp_path: Path, text: str, name: str = "mini") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_shipped_scenarios_load(scenarios):
    assert len(scenarios) >= 10
    for must in ["expense_report", "team_offsite", "job_application", "moving_house", "conference_trip",
                 "shop_inventory", "teaching_class", "family_event", "freelance_invoicing", "renovation_quotes"]:  # fmt: skip
        assert must in scenarios
    groups = set(load_persona_seeds().occupation_groups)
    for sc in scenarios.values():
        assert set(sc.suits) <= groups and sc.file.endswith(f"{sc.id}.yaml")


def test_every_persona_has_suitable_scenarios(scenarios, personas_by_locale):
    from guiforge.worlds.personas import build_personas

    for p in build_personas(80, seed=2):
        fits = suitable_scenarios(p, scenarios)
        assert len(fits) >= 3
        assert all(
            not s.suits or load_persona_seeds().group_of(p.occupation) in s.suits for s in fits
        )


def test_minimal_scenario_builds(tmp_path, personas_by_locale):
    sc = load_scenario(write(tmp_path, MINI))
    w = build_world(personas_by_locale["fr_FR"], sc, seed=1, background=False)
    assert w.fact("total").value == w.document("inv").total
    assert w.emails[0].sender.endswith("@hotel-mini.fr")


BAD = [
    # (what to replace, with what, expected field, expected line, words in the message)
    ("emails:", "emials:", "emials", 25, "unknown field"),
    ("  nights: {randint: [1, 3]}", "  nights: {randnt: [1, 3]}", "vars.nights", 4, "generator key"),
    ("  nights: {randint: [1, 3]}", "  nights: {randint: [3, 1]}", "vars.nights.randint", 4, "ascending"),
    ("    to: [me]", "    to: [manager]", "emails[0].to", 28, "unknown role 'manager'"),
    ("    cites: [total]", "    cites: [totl]", "emails[0].cites", 33, "not a fact key"),
    ("    attachments: [inv]", "    attachments: [invoice]", "emails[0].attachments", 32, "not a document id"),
    ('    body: "The total', '    body: "{{ nigths }} The total', "emails[0].body", 31, "unknown name 'nigths'"),
    ("{{ facts.total | money }}", "{{ facts.totl | money }}", "emails[0].body", 31, "facts.totl"),
    ('title: "Mini world for {{ me.name }}"', 'title: "Mini {{ me.name | }}"', "title", 2, "template syntax"),
    ("  rate: {money: [80, 120]}", "  rate: {expr: later * 2}\n  later: 3", "vars.rate.expr", 5, "declared after"),
    ("  day: {date: [-9, -3]}", "  day: {faker: no_such_provider}", "vars.day.faker", 6, "Faker provider"),
    ("    kind: invoice", "    kind: bill", "documents[0].kind", 17, "invoice"),
    ("id: mini", "id: other", "id", 1, "file name"),
    ("    attendees: [hotel]", "    attendees: [me]", "events[0].attendees", 14, "unknown role 'me'"),
    ("{key: total, kind: money, source: doc:inv.total}", "{key: total, kind: money, source: doc:bill.total}",
     "facts[0].source", 24, "names no document"),
    ("{key: total, kind: money, source: doc:inv.total}", "{key: total, kind: money}", "facts[0]", 24, "value or a source"),
    ("title: \"Mini", "suits: [astronauts]\ntitle: \"Mini", "suits[0]", 2, "unknown occupation group"),
    ("people:", "people:\n\tbad: tab", "", 8, "invalid YAML"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "field", "line", "words"), BAD, ids=[b[2] or "yaml" for b in BAD]
)
def test_bad_scenario_is_one_line_naming_file_line_field(tmp_path, old, new, field, line, words):
    assert old in MINI
    path = write(tmp_path, MINI.replace(old, new, 1))
    with pytest.raises(ConfigError) as e:
        load_scenario(path)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}:{line}: {field}"), msg
    assert words in msg
    assert isinstance(e.value, GuiforgeError) and e.value.file == str(path) and e.value.line == line


@pytest.mark.parametrize(
    ("old", "new", "field", "line", "words"),
    [
        ('quantity: "{{ nights }}"', "quantity: \"{{ 'many' }}\"", "documents[0].line_items[0].quantity", 22,
         "expected a number"),
        ('    minutes: 60', '    minutes: "{{ 1 // 0 }}"', "events[0].minutes", 13, "ZeroDivisionError"),
        ('time: "15:00"', 'time: "{{ \'25:99\' }}"', "events[0].start.time", 12, "HH:MM"),
        ('    minutes: 60', "    minutes: -30", "", None, "event_order"),
        ("{key: total, kind: money, source: doc:inv.total}", "{key: total, kind: money, source: doc:inv.field:Nope}",
         "facts[0].source", 24, "no field 'Nope'"),
    ],
)  # fmt: skip
def test_errors_found_while_building_name_field_persona_and_seed(tmp_path, personas_by_locale, old, new, field,
                                                                  line, words):  # fmt: skip
    sc = load_scenario(write(tmp_path, MINI.replace(old, new, 1)))
    persona = personas_by_locale["en_US"]
    with pytest.raises(ConfigError) as e:
        build_world(persona, sc, seed=4)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "mini.yaml")) and words in msg, msg
    assert f"persona {persona.persona_id}, seed 4" in msg
    if line:
        assert msg.startswith(f"{tmp_path / 'mini.yaml'}:{line}: {field}:"), msg


def test_empty_folder_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no scenario files"):
        load_scenarios(tmp_path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_scenario(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("  nights: {randint: [1, 3]}", "  my-nights: {randint: [1, 3]}", "vars"),
        ("  nights: {randint: [1, 3]}", "  me: {randint: [1, 3]}", "vars"),
        ("  hotel: {role:", "  Hotel Desk: {role:", "people"),
    ],
)
def test_names_must_be_identifiers(tmp_path, old, new, field):
    with pytest.raises(ConfigError, match=f"{field}: .*lowercase identifier"):
        load_scenario(write(tmp_path, MINI.replace(old, new, 1)))
