"""Text composed from alternatives, the way people write the same kind of message differently
each time: a piece of a background pool (``data/life.yaml``, ``data/background.yaml``) is a
string, a list of alternatives (one is picked), or a list of such lists (one pick from each,
joined into sentences). Placeholders ``{name}`` are filled from a ``Slots`` object that
computes each value on first use from the world and remembers it, so a thread's "Friday" is
the same Friday in the first message, the reply and the calendar entry."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any

Piece = str | list  # a string, alternatives, or a list of alternative-lists (sentences)


def pick(piece: Piece, rng: random.Random) -> str:
    """One rendering (unfilled) of ``piece``: alternatives pick one, a list of lists picks one
    from each and joins the non-empty picks with a space."""
    if isinstance(piece, str):
        return piece
    if not piece:
        return ""
    if all(isinstance(p, list) for p in piece):
        return " ".join(s for s in (pick(p, rng) for p in piece) if s)
    return pick(rng.choice(piece), rng)


class Slots(dict):
    """Placeholder values: given ones, and the rest computed on first use by the makers."""

    def __init__(self, makers: dict[str, Callable[[], Any]], **given: Any):
        super().__init__(given)
        self.makers = makers

    def fresh(self, *keep: str) -> Slots:
        """New values from the same makers, keeping only ``keep`` (two offers in one
        newsletter are two products, for the same reader)."""
        return Slots(self.makers, **{k: self[k] for k in keep if k in self})

    def __missing__(self, key: str) -> Any:
        if key not in self.makers:
            raise KeyError(f"no value for placeholder {{{key}}}")
        value = self[key] = self.makers[key]()
        return value


def fill(text: str, slots: Slots) -> str:
    return text.format_map(slots) if "{" in text else text


def compose(piece: Piece, rng: random.Random, slots: Slots) -> str:
    return fill(pick(piece, rng), slots)


def placeholders(piece: Piece) -> set[str]:
    """Every placeholder name a piece can use (for checking pools when they load)."""
    if isinstance(piece, str):
        return {f.split(".")[0] for _, f, _, _ in string.Formatter().parse(piece) if f}
    return set().union(*(placeholders(p) for p in piece)) if piece else set()
