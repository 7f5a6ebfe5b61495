"""Load and validate skill cards. Every error is one line naming the file, the line and
the field: a schema error, a check that does not exist, a template that does not parse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError
from pydantic import ValidationError

from guiforge.errors import ConfigError
from guiforge.skills.card import SkillCard
from guiforge.skills.templating import environment
from guiforge.verify.registry import CHECKS
from guiforge.yamlfile import describe_validation_error, line_of, load_yaml, parse_yaml


def _strings(value: Any, loc: tuple) -> list[tuple[tuple, str]]:
    if isinstance(value, str):
        return [(loc, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, (*loc, k))]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _strings(v, (*loc, i))]
    return []


def load_card(path: Path, root: Path | None = None) -> SkillCard:
    data, lines = load_yaml(path)
    card = validate_card(data, lines, str(path))
    expected = f"{path.parent.name}.{path.stem}"
    if root is not None and card.id != expected:
        raise ConfigError(str(path), "id", f"is {card.id!r} but the file says {expected!r} (skills/<app>/<skill>.yaml)",
                          line_of(lines, ("id",)))
    return card


def parse_card(text: str, name: str) -> SkillCard:
    """A card from YAML text (a model's proposal): the same checks as a card on disk."""
    data, lines = parse_yaml(text, name)
    return validate_card(data, lines, name)


def validate_card(data, lines: dict, name: str) -> SkillCard:
    if not isinstance(data, dict):
        raise ConfigError(name, "", "a skill card must be a YAML mapping")
    try:
        card = SkillCard.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc, name, lines) from None
    for i, criterion in enumerate(card.rubric):
        fn = criterion.check["fn"]
        if fn not in CHECKS:
            raise ConfigError(name, f"rubric.{i}.check.fn", f"unknown check {fn!r}; known: {', '.join(CHECKS.names())}",
                              line_of(lines, ("rubric", i, "check", "fn")))
    env = environment()
    templated = {k: data.get(k) for k in ("params", "instructions", "context", "localized", "setup", "rubric",
                                           "reference", "answer", "leak_check")}
    for loc, text in _strings(templated, ()):
        try:
            if loc[0] == "params" and loc[-1] in ("each", "value", "where"):
                env.compile_expression(text)
            else:
                env.parse(text)
        except TemplateSyntaxError as exc:
            field = ".".join(map(str, loc))
            raise ConfigError(name, field, f"Jinja syntax error: {exc.message}", line_of(lines, loc)) from None
    return card


def load_cards(root: Path) -> dict[str, SkillCard]:
    cards: dict[str, SkillCard] = {}
    for path in sorted(root.glob("*/*.yaml")):
        card = load_card(path, root)
        if card.id in cards:
            raise ConfigError(str(path), "id", f"{card.id!r} is defined twice")
        cards[card.id] = card
    return cards
