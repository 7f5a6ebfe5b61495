"""Checks the per-app card tests share: how often cards bind, and instructions that pass
the text gates (no answer given away, only entities the world has)."""

from __future__ import annotations

from guiforge.skills.instantiate import bindings


def binding_rates(cards: dict, worlds: list) -> dict[str, float]:
    """card id -> the share of ``worlds`` the card binds on; asserts the floor every
    app's cards meet (each on half the worlds, three quarters on average)."""
    rates = {card.id: sum(bool(bindings(card, w)) for w in worlds) / len(worlds) for card in cards.values()}
    assert min(rates.values()) >= 0.5, rates
    assert sum(rates.values()) / len(rates) >= 0.75, rates
    return rates


def assert_text_gates_pass(card, world, candidate) -> None:
    from guiforge.gates.text_gates import leaks, unknown_entities

    assert not leaks(candidate.instruction, candidate.leaks), f"{candidate.skill_id}: {candidate.instruction}"
    assert not unknown_entities(candidate.instruction, world.model_dump_json()), \
        f"{candidate.skill_id}: {candidate.instruction}"
