"""Worlds for the file-preparer tests: the real scenario templates built for personas of
several locales (comma decimals, symbols after the amount, ₹ and zł), once per session."""

from __future__ import annotations

import pytest

from guiforge.paths import SCENARIOS_DIR
from guiforge.worlds.model import Fact, World
from guiforge.worlds.personas import build_personas
from guiforge.worlds.scenarios import load_scenarios
from guiforge.worlds.template_builder import build_world

# scenario -> persona locale: every document kind and every money convention appears
PLAN = {
    "expense_report": "de_AT",
    "conference_trip": "en_IN",
    "job_application": "en_US",
    "freelance_invoicing": "pl_PL",
    "teaching_class": "pt_BR",
    "shop_inventory": "en_GB",
    "family_event": "fr_FR",
    "moving_house": "es_ES",
    "renovation_quotes": "sv_SE",
    "team_offsite": "nl_NL",
}
# fact sources whose value is written in the document itself (the others are computed from
# it: row counts, averages, counts of a value)
STATED = (
    ".total",
    ".subtotal",
    ".tax",
    ".field:",
    ".find:",
    ".argmax:",
    ".argmin:",
    ".min:",
    ".max:",
)


@pytest.fixture(scope="session")
def worlds() -> dict[str, World]:
    scenarios = load_scenarios(SCENARIOS_DIR)
    personas: dict = {}
    wanted, i = set(PLAN.values()), 0
    while not wanted <= set(personas) and i < 300:  # persona i depends only on (seed, i)
        p = build_personas(1, seed=11, start=i)[0]
        personas.setdefault(p.locale, p)
        i += 1
    return {
        sid: build_world(personas[loc], scenarios[sid], seed=i)
        for i, (sid, loc) in enumerate(PLAN.items())
        if sid in scenarios
    }


def _stated_facts(world: World, document_id: str) -> list[Fact]:
    prefix = f"doc:{document_id}."
    return [
        f
        for f in world.facts
        if f.source.startswith(prefix) and any(s in f.source[len(prefix) - 1 :] for s in STATED)
    ]


@pytest.fixture(scope="session")
def stated_facts():
    """(world, document_id) -> the world's facts whose value that document writes down."""
    return _stated_facts
