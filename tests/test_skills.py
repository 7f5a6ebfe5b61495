"""Skill cards: validation errors name file, line and field; binding and rendering are
pure functions of (card, world, seed); the instruction gates and near-duplicate removal."""

from __future__ import annotations

import textwrap

import pytest

from guiforge.errors import ConfigError
from guiforge.gates.text_gates import leaks, near_duplicates, unknown_entities
from guiforge.paths import SKILLS_DIR
from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import instantiate, select_balanced
from guiforge.skills.loader import load_card, load_cards

GOOD = """\
id: notes.sample
domains: [web, mobile]
apps: [notes]
description: Create a note named after a contact.
params:
  who:
    each: "world.contacts"
    where: "who.role != ''"
instructions:
  - "Create a note titled \\"Call {{ who.name }}\\"."
  - "Add a note called \\"Call {{ who.name }}\\"."
rubric:
  - id: created
    check: {fn: state_contains, path: "notes.notes[*].title", text: "Call {{ who.name }}"}
reference:
  - {do: open, app: notes}
"""


def card_file(tmp_path, text: str, name: str = "sample"):
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


BAD = [
    (GOOD.replace("domains: [web, mobile]", "domains: [web, tv]"), ":2: domains.1: "),
    (GOOD.replace("max_steps", "x") + "colour: red\n", ":17: colour: unknown key"),
    (GOOD.replace("fn: state_contains", "fn: looks_right"), ":14: rubric.0.check.fn: unknown check 'looks_right'"),
    (GOOD.replace('"who.role != \'\'"', '"who.role !="'), ":8: params.who.where: Jinja syntax error"),
    (GOOD.replace("{do: open, app: notes}", "{do: teleport, app: notes}"), "reference"),
    (GOOD.replace('  - "Add a note called \\"Call {{ who.name }}\\"."\n', ""), "instructions: List should have at least 2"),
    (GOOD.replace("id: notes.sample", "id: mail.sample"), ":1: id: is 'mail.sample' but the file says 'notes.sample'"),
]


@pytest.mark.parametrize("text, expected", BAD)
def test_bad_cards_name_file_line_and_field(tmp_path, text, expected):
    path = card_file(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_card(path, tmp_path)
    message = str(err.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message, message


def test_binding_and_rendering_are_deterministic(tmp_path):
    card = load_card(card_file(tmp_path, GOOD), tmp_path)
    world = sample_worlds(1)[0]
    first = instantiate(card, world, seed=3)
    again = instantiate(card, world, seed=3)
    assert [c.as_dict() for c in first] == [c.as_dict() for c in again]
    assert 1 <= len(first) <= card.max_per_world
    c = first[0]
    name = c.binding["who"].split("=", 1)[1]
    contact = world.contact(name)
    assert contact.name in c.instruction and c.rubric[0]["check"]["text"] == f"Call {contact.name}"
    assert {x.domain for x in first} <= {"web", "mobile"}


def test_shipped_cards_all_load():
    cards = load_cards(SKILLS_DIR)
    assert "mail.reply_invoice_total" in cards


def test_a_world_gets_tasks_spread_over_domains(tmp_path):
    cards = load_cards(SKILLS_DIR)
    worlds = sample_worlds(4)
    for world in worlds:
        pool = [c for card in cards.values() for c in instantiate(card, world, 1)]
        picked = select_balanced(pool, 8, seed=1)
        domains = [c.domain for c in picked]
        assert len(picked) == min(8, len(pool))
        if len({c.domain for c in pool}) > 1 and len(picked) > 1:
            assert len(set(domains)) > 1


def test_leaks_match_numbers_in_any_format():
    assert leaks("Reply with the total (412.50 EUR) to Anna", ["412.50"]) == ["412.50"]
    assert leaks("Reply with 412,50 € to Anna", ["412.50"]) == ["412.50"]
    assert leaks("Reply with the invoice total to Anna", ["412.50"]) == []
    assert leaks("Book the Lyon flight", ["Lyon"]) == ["Lyon"]


def test_unknown_entities_are_caught():
    world_text = '{"contacts": [{"name": "Anna Berg", "email": "anna@berg.se"}], "subject": "Q3 budget"}'
    assert unknown_entities('Reply to "Q3 budget" from anna@berg.se', world_text) == []
    assert unknown_entities('Reply to "Q4 forecast" from bob@nowhere.org', world_text) == ["Q4 forecast", "bob@nowhere.org"]


def test_near_duplicates_keep_the_smallest_id():
    items = [
        ("t3", "notes.a", "Create a note titled Call Anna Berg today please now"),
        ("t1", "notes.a", "Create a note titled Call Anna Berg today please now!"),
        ("t2", "notes.a", "Delete the grocery list note from last week"),
        ("t4", "mail.b", "create a NOTE titled call anna berg today please now"),
    ]
    assert near_duplicates(items) == {"t3": "t1", "t4": "t1"}


def test_desktop_tasks_spread_over_action_sets():
    """Within a domain the least-used variant comes first, so GUI-only cards (most of the
    desktop cards) do not crowd out terminal and hybrid tasks."""
    from collections import Counter

    cards = load_cards(SKILLS_DIR)
    variants, domains = Counter(), Counter()
    for world in sample_worlds(12):
        pool = [c for card in cards.values() for c in instantiate(card, world, 7)]
        for c in select_balanced(pool, 10, f"7:{world.world_id}"):
            domains[c.domain] += 1
            if c.domain == "desktop":
                variants[c.variant] += 1
    assert set(variants) == {"gui", "terminal", "hybrid"}, variants
    assert variants["gui"] <= 0.6 * sum(variants.values()), variants
    assert max(domains.values()) - min(domains.values()) <= 0.15 * sum(domains.values()), domains


def test_card_expressions_read_world_fields_and_nothing_internal():
    """The templating sandbox's fast path for model fields opens no door Jinja's sandbox keeps shut."""
    from jinja2.exceptions import SecurityError, UndefinedError

    from guiforge.envs.web.sample_world import sample_world
    from guiforge.skills.templating import evaluate

    world = sample_world()
    assert evaluate("world.me.name", {"world": world}) == world.me.name
    assert evaluate("world['me']['name']", {"world": world}) == world.me.name
    total = evaluate("world.transactions | map(attribute='amount') | sum", {"world": world})
    assert total == pytest.approx(sum(t.amount for t in world.transactions))
    for unsafe in ("world.__class__", "world.me.__dict__", "world.model_dump.__globals__"):
        with pytest.raises((SecurityError, UndefinedError)):
            evaluate(f"{unsafe}.x", {"world": world})
