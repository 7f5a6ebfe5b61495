"""A reference step with ``when`` is left out of an instance where it renders false:
contacts.favorite_event_attendees searched and clicked the first attendee again for each
missing second and third one, so a one-attendee task ran out of steps and looped on the
search field (9 tasks of a default run rejected by the judge)."""

from __future__ import annotations

from pathlib import Path

from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import bindings, render
from guiforge.skills.loader import load_cards

SKILLS = Path(__file__).resolve().parents[2] / "skills"


def test_steps_for_attendees_an_event_does_not_have_are_left_out():
    card = load_cards(SKILLS)["contacts.favorite_event_attendees"]
    world = sample_worlds(1)[0]
    ctx = next(c for c in bindings(card, world) if c["ids"][1])  # an event with two attendees or more
    real = [i for i in ctx["ids"] if i]
    for n in (1, len(real)):
        one = {**ctx, "ids": real[:n] + ["", "", ""]}
        for domain in ("web", "mobile"):
            reference = render(card, world, one, domain, None, seed=1).reference
            assert all("when" not in s for s in reference)
            favourites = [s for s in reference if s.get("id") == "contact-favorite"]
            assert len(favourites) == n, (domain, n, reference)
            searches = [s.get("text") for s in reference if s["do"] == "type"]
            assert len(searches) == len(set(searches)) == n  # nobody searched for twice
