"""Every skill card speaks in enough voices (issue 24): at least MIN_PHRASINGS English
phrasings, no two alike, and each localized phrasing asks about the same things as the
English ones (it uses no parameter the English phrasings do not), so a task said in German
is the same task."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import meta

from guiforge.skills.loader import load_cards
from guiforge.skills.realism import MIN_PHRASINGS, card_phrasings
from guiforge.skills.templating import environment

SKILLS = Path(__file__).resolve().parents[2] / "skills"


@pytest.fixture(scope="module")
def cards():
    return load_cards(SKILLS)


def _names(text: str) -> set[str]:
    return meta.find_undeclared_variables(environment().parse(text))


def test_every_card_has_enough_distinct_english_phrasings(cards):
    stats = card_phrasings(cards.values())
    assert stats["below_min"] == [], f"cards with fewer than {MIN_PHRASINGS} phrasings: {stats['below_min']}"
    assert stats["mean_en"] >= MIN_PHRASINGS
    repeated = [cid for cid, c in cards.items() if len({p.strip().lower() for p in c.instructions}) < len(c.instructions)]
    assert repeated == []


def test_localized_phrasings_ask_about_what_the_english_ones_do(cards):
    strays = []
    for cid, card in cards.items():
        english = set().union(*(_names(p) for p in card.instructions))
        strays += [(cid, lang, sorted(_names(p) - english))
                   for lang, phrasings in card.localized.items() for p in phrasings if _names(p) - english]
    assert strays == []
