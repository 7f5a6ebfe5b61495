"""The offline relabeler: a thought per step, written from what the step recorded.

A thought says three things, in an order and wording drawn per step (seeded): what is on
screen (the frame's facts: the place, the list in view, the field with the cursor, a
notice, the dialog in front; guiforge.envs.screen_facts), what the task still needs (the
reference steps after this one, curation/progress.py, and the instruction), and why this
action on this element (its label and role, what a control with that label is for, what
the next reference step needs). It never reads the original thought, and it quotes only
text that passed :func:`guiforge.envs.screen_facts.readable` (no OCR noise, no debug
strings): element labels come from the element under the point, checked again by the
reason-then-act filter (curation/consistency.py).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from guiforge.curation.phrases import (
    act_sentence,
    direction,
    element_name,
    goal_sentence,
    seen_sentence,
    task_sentence,
    words,
)
from guiforge.lake.fingerprint import fingerprint

MIN_WORDS, MAX_WORDS = 15, 60
# The last resort for a step that recorded almost nothing (no screen, no reference).
PADDING = ["Nothing else on the screen changes what this step should be.",
           "No other step has to come before this one.", "That is all this step needs for now."]
__all__ = ["StepContext", "action_summary", "direction", "element_name", "write_thought"]


@dataclass(frozen=True)
class StepContext:
    """What a relabeler may use: the task's instruction and the step as taken."""

    instruction: str
    step_index: int
    n_steps: int
    action: dict[str, Any]
    target: dict[str, Any] | None
    width: int | None = None
    height: int | None = None
    history: tuple[str, ...] = ()  # factual summaries of the earlier actions
    screen: dict[str, Any] | None = None  # the frame's facts (steps.screen_json)
    current: dict[str, Any] | None = None  # the reference step this action carries out or leads to
    ahead: tuple[dict[str, Any], ...] = ()  # the reference steps after it
    domain: str | None = None


class _Literal(random.Random):
    """The retry's phrasing: always the first, most literal option of each choice."""

    def choice(self, seq):
        return seq[0]

    def random(self):
        return 0.0

    def shuffle(self, x, *args):
        return None


def _fit(parts: dict[str, str], order: tuple[str, ...]) -> str:
    """The parts in ``order``, dropping the optional ones (the task's words first, then the
    screen, then the goal) while over MAX_WORDS; the act always stays."""
    keep = dict(parts)
    for name in ("task", "seen", "goal"):
        if words(" ".join(keep.values())) <= MAX_WORDS:
            break
        keep[name] = ""
    return " ".join(keep[k] for k in order if keep.get(k))


def write_thought(ctx: StepContext, seed: str, plain: bool = False) -> str:
    """One thought for the step; ``plain`` picks the most literal phrasing (the retry)."""
    rng = (_Literal if plain else random.Random)(fingerprint([seed, ctx.step_index, "thought"]))
    parts = {"act": act_sentence(ctx, rng), "seen": seen_sentence(ctx, rng), "goal": goal_sentence(ctx, rng),
             "task": task_sentence(ctx, rng)}
    order = rng.choice([("task", "seen", "goal", "act"), ("seen", "task", "act", "goal"),
                        ("task", "goal", "seen", "act"), ("seen", "act", "goal", "task"),
                        ("act", "seen", "goal", "task"), ("seen", "goal", "act", "task")])
    text = _fit(parts, order)
    if words(text) < MIN_WORDS:  # a bare screen: say what the task is
        parts["task"] = task_sentence(ctx, rng, always=True)
        text = _fit(parts, order)
    if words(text) < MIN_WORDS:
        parts["pad"] = rng.choice(PADDING)
        text = _fit(parts, (*order, "pad"))
    return re.sub(r"\s+", " ", text).strip()


def action_summary(action: dict[str, Any], target: dict[str, Any] | None) -> str:
    """A factual one-line summary of an action (the model relabeler's history)."""
    label, _ = element_name(target)
    fields = " ".join(f"{k}={v}" for k, v in action.items() if v is not None and k != "type")
    return f"{action['type']} {fields}".strip()[:140] + (f" on \u201c{label}\u201d" if label else "")
