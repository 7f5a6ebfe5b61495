"""The offline relabeler: a thought per step, written from what the step recorded.

It reads the action that was taken, the element under the action's point (label, role,
box), the instruction and the step's place in the task, and phrases the reasoning in one
of several ways (seeded per step). It never looks at the original thought.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from guiforge.lake.fingerprint import fingerprint

OPENERS = {
    "first": ["First,", "To start,", "To begin,", "The first thing to do:"],
    "middle": ["Next,", "Now", "Then", "Moving on,", "At this point"],
    "last": ["Finally,", "Last,", "To wrap up,"],
}


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


def element_name(target: dict[str, Any] | None) -> tuple[str | None, str]:
    """(label, kind) of the element under the point: 'Send', 'button'."""
    if not target:
        return None, "spot"
    label = (target.get("label") or "").strip() or None
    if label and len(label) > 60:
        label = label[:57].rstrip() + "..."
    kind = target.get("role") or target.get("type") or target.get("tag") or "element"
    kind = {"a": "link", "input": "field", "textbox": "field", "textarea": "text box", "div": "area",
            "span": "item", "li": "list item", "td": "cell", "img": "image", "svg": "icon"}.get(kind, kind)
    return label, kind


def region(target: dict[str, Any] | None, width: int | None, height: int | None) -> str | None:
    """'near the top right' from the element's box centre, when the frame size is known."""
    box = (target or {}).get("box")
    if not box or not width or not height:
        return None
    cx, cy = (box[0] + box[2] / 2) / width, (box[1] + box[3] / 2) / height
    row = "top" if cy < 0.33 else "bottom" if cy > 0.66 else "middle"
    col = "left" if cx < 0.33 else "right" if cx > 0.66 else ""
    where = f"{row} {col}".strip() if row != "middle" or col else "centre"
    return f"near the {where}" if where != "centre" else "in the middle of the screen"


def _place(ctx: StepContext, rng: random.Random) -> str:
    if ctx.step_index == 0:
        key = "first"
    elif ctx.step_index >= ctx.n_steps - 1:
        key = "last"
    else:
        key = "middle"
    return rng.choice(OPENERS[key])


def _quote(text: str) -> str:
    return f"\u201c{text}\u201d"


def _pointer(verb: str, ctx: StepContext, rng: random.Random) -> str:
    label, kind = element_name(ctx.target)
    where = region(ctx.target, ctx.width, ctx.height)
    if label:
        thing = rng.choice([f"the {kind} {_quote(label)}", f"{_quote(label)}", f"the {_quote(label)} {kind}"])
    else:
        thing = f"the {kind}" + (f" {where}" if where else "")
    reason = rng.choice(["", f" {where}" if where and label else "", ""])
    templates = [f"I'll {verb} {thing}{reason}.", f"I need {thing}, so I'll {verb} it.",
                 f"I'll {verb} {thing}: that is what I need next.",
                 f"I should {verb} {thing}{reason}."]
    return rng.choice(templates)


def _typed(ctx: StepContext, rng: random.Random) -> str:
    text = ctx.action.get("text") or ""
    label, kind = element_name(ctx.target)
    into = f" into {_quote(label)}" if label else ""
    return rng.choice([f"I'll type {_quote(text)}{into}.", f"Now I type {_quote(text)}{into}.",
                       f"I need to enter {_quote(text)}{into}, so I'll type it."])


def _direction(a: dict[str, Any]) -> str:
    if a.get("direction"):
        return a["direction"]
    dx, dy = (a.get("x2") or 0) - (a.get("x") or 0), (a.get("y2") or 0) - (a.get("y") or 0)
    if abs(dx) > abs(dy):
        return "left" if dx < 0 else "right"
    return "up" if dy < 0 else "down"


class _Literal(random.Random):
    """The retry's phrasing: always the first, most literal option of each choice."""

    def choice(self, seq):
        return seq[0]


def write_thought(ctx: StepContext, seed: str, plain: bool = False) -> str:
    """One thought for the step; ``plain`` picks the most literal phrasing (the retry)."""
    rng = (_Literal if plain else random.Random)(fingerprint([seed, ctx.step_index, "thought"]))
    a = ctx.action
    t = a.get("type")
    if t in ("click", "tap", "double_click", "right_click", "long_press"):
        verb = {"tap": "tap", "double_click": "double-click", "right_click": "right-click",
                "long_press": "long-press"}.get(t, "click")
        body = _pointer(verb, ctx, rng)
    elif t == "type":
        body = _typed(ctx, rng)
    elif t == "scroll":
        d = _direction(a)
        body = rng.choice([f"What I need is not in view yet, so I'll scroll {d}.", f"I'll scroll {d} to see more.",
                           f"I'll scroll {d}; that should bring the rest into view."])
    elif t == "swipe":
        d = _direction(a)
        body = rng.choice([f"I'll swipe {d} to see more.", f"I'll swipe {d}, which should reveal the rest."])
    elif t == "drag":
        body = "I'll drag it to where it belongs."
    elif t in ("key", "hotkey"):
        keys = "+".join(a.get("keys") or [])
        body = rng.choice([f"I'll press {keys}.", f"I'll press {keys}; that does it in one go."])
    elif t == "goto":
        body = f"I'll go to {a.get('text')}."
    elif t in ("back", "home", "enter", "wait"):
        body = {"back": "I'll go back to the previous screen.", "home": "I'll go to the home screen.",
                "enter": "I'll press enter to submit.", "wait": "I'll wait for the screen to update."}[t]
    elif t == "open_app":
        body = f"I'll open the {a.get('app')} app."
    elif t == "bash":
        body = f"I'll run `{(a.get('text') or '').strip()[:200]}` in the terminal."
    elif t == "call_tool":
        try:
            call = json.loads(a.get("text") or "{}")
        except json.JSONDecodeError:
            call = {}
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("arguments") or {}).items())
        body = f"I'll call the {call.get('name', 'tool')} tool with {args or 'no arguments'}."
    elif t == "answer":
        body = rng.choice([f"I have what the task asks for; the answer is {_quote(a.get('answer') or '')}.",
                           f"I'll answer {_quote(a.get('answer') or '')}."])
    elif t == "terminate":
        if a.get("status") == "success":
            body = rng.choice(["Everything the task asks for is done, so I'll finish.",
                               "The task is complete; I'll finish here."])
        else:
            body = "I cannot complete this task, so I'll stop and say so."
    else:
        body = f"I'll {t}."
    if plain:
        return body
    keep_capital = body.startswith(("I ", "I'"))
    return f"{_place(ctx, rng)} {body if keep_capital else body[0].lower() + body[1:]}"
