"""Thoughts a person would say before acting: what is on screen, and why the next action
follows from it and from the task.

The scripted teacher writes them from what it can see (the element scan: labels, roles,
boxes, focus, the app's route) and from the step of the reference it is carrying out, never
from the rubric. Phrasings are drawn from a seeded generator, so samples differ in wording
the way a model's do, while one sample stays reproducible.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.teacher.desktop_thoughts import desktop_intent, dialog_title

APP_NAMES = {"mail": "mail", "calendar": "calendar", "contacts": "contacts", "shop": "shop",
             "notes": "notes", "bank": "banking", "travel": "travel", "chat": "chat"}
VIEW_NAMES = {"inbox": "inbox", "sent": "sent folder", "drafts": "drafts", "archive": "archive",
              "compose": "compose form", "cart": "cart", "checkout": "checkout page",
              "transfer": "transfer form", "transactions": "transaction list", "search": "search page"}

# What pressing a button with this word in its label is for: a reason a person would give.
PURPOSES = [
    (r"\bsend\b", "send it off"), (r"\breply\b", "start a reply"), (r"\bforward\b", "forward it"),
    (r"\barchive\b", "move it out of the inbox"), (r"\bsave\b", "keep the change"),
    (r"\bsearch\b", "narrow down what is shown"), (r"\bcompose\b|\bnew\b", "start a new one"),
    (r"\badd to cart\b", "put it in the cart"), (r"\bcheckout\b|\bpay\b|\bplace order\b", "complete the purchase"),
    (r"\btransfer\b", "move the money"), (r"\bdelete\b|\bremove\b", "get rid of it"),
    (r"\bedit\b", "change its details"), (r"\bpin\b", "keep it at the top"), (r"\bfavou?rite\b", "mark it"),
    (r"\battach", "add the file"), (r"\binvite\b|\battendee", "include the right people"),
    (r"\bclose\b|\bdismiss\b|\bnot now\b|\baccept\b|\bgot it\b", "get it out of the way"),
    (r"\bback\b", "return to the previous view"), (r"\bconfirm\b|\bok\b|\bdone\b", "confirm it"),
]

_OPENERS = ["", "Looking at the screen, ", "Right now ", "OK — ", "At this point "]


def _cap(text: str) -> str:
    """Upper-case the first letter only (str.capitalize would lower the rest)."""
    return text[:1].upper() + text[1:]


@dataclass
class StepContext:
    """Where a planned action sits in the task: its reference step and its neighbours."""

    step: dict[str, Any]
    index: int
    total: int
    instruction: str = ""
    detour: bool = False  # an extra action the step needs (a scroll to reveal, a clear)


def _words(text: str, n: int = 8) -> str:
    words = " ".join(str(text).split()).split(" ")
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


def _quote(label: str) -> str:
    return f"\u201c{_words(label, 10)}\u201d"


def screen_name(obs: Observation) -> str:
    """The screen as a person names it: 'the mail app's inbox', 'the home screen'."""
    if obs.debug.get("document"):
        name = str(obs.debug["document"]).rsplit("/", 1)[-1]
        dialog = dialog_title(obs)
        return f"LibreOffice with {name} open" + (" beside a terminal" if obs.debug.get("variant") == "hybrid" else "") \
            + (f", the “{dialog}” dialog in front" if dialog else "")
    if "calls" in obs.debug:
        return "the tool console" + (f" after {obs.debug['calls']} call(s)" if obs.debug["calls"] else "")
    if obs.text is not None and not obs.debug.get("elements"):
        return "the terminal"
    path = obs.debug.get("path")
    if isinstance(path, str):
        path = [p for p in path.split("/") if p and ":" not in p]
    if not path:
        return "the home screen" if obs.debug.get("elements") else "the screen"
    return app_place(path)


def app_place(path: list[str]) -> str:
    """Where an apps' route (``["mail", "inbox", ...]``) is, in words: the app, its view, an item."""
    app = APP_NAMES.get(path[0], path[0])
    if len(path) == 1:
        return f"the {app} app"
    view = VIEW_NAMES.get(path[1])
    if view:
        return f"the {app} app's {view}" + (" with one item open" if len(path) > 2 else "")
    return f"an item in the {app} app"


def _position(box: list[int] | None, obs: Observation) -> str:
    if not box or not obs.height:
        return ""
    cy = (box[1] + box[3] / 2) / obs.height
    return "near the top" if cy < 0.3 else "near the bottom" if cy > 0.7 else "in the middle of the screen"


def _visible_summary(obs: Observation, rng: random.Random) -> str:
    """A short remark on what else is visible: a status line, a count of list entries, focus."""
    els = obs.debug.get("elements") or []
    status = next((e for e in els if e.get("role") in ("alert", "status") and (e.get("label") or "").strip()), None)
    if status is not None:
        return f"a notice says {_quote(status['label'])}"
    rows = [e for e in els if e.get("role") in ("listitem", "row", "option", "link") or e.get("tag") == "li"]
    if len(rows) >= 3:
        return rng.choice([f"{len(rows)} entries are listed", f"there are {len(rows)} items in view",
                           f"I can see {len(rows)} entries"])
    focus = obs.debug.get("focus") or {}
    if focus.get("editable") and focus.get("label"):
        return f"the cursor is in {_quote(focus['label'])}"
    return ""


def purpose(label: str) -> str | None:
    low = label.casefold()
    return next((why for pattern, why in PURPOSES if re.search(pattern, low)), None)


def _goal(ctx: StepContext) -> str:
    goal = " ".join(ctx.instruction.split())
    if not goal:
        return "what the task asks for"
    goal = re.split(r"(?<=[.!?])\s", goal)[0].rstrip(".!?")
    return "the task: " + _words(goal[0].lower() + goal[1:], 12)


class ThoughtWriter:
    """Writes the thought for one planned action of the scripted teacher."""

    def __init__(self, rng: random.Random, instruction: str = ""):
        self.rng = rng
        self.instruction = instruction

    def _see(self, obs: Observation) -> str:
        opener = self.rng.choice(_OPENERS)
        where = screen_name(obs)
        extra = _visible_summary(obs, self.rng)
        verb = "I am looking at" if where.startswith(("LibreOffice", "the terminal", "the tool")) else "I am on"
        text = f"{opener}{verb} {where}" + (f", and {extra}" if extra else "")
        return _cap(text) + "."

    def write(self, action: Action, obs: Observation, ctx: StepContext, target: dict[str, Any] | None,
              read_values: dict[str, str] | None = None) -> str:
        see = self._see(obs)
        act = self._intent(action, obs, ctx, target, read_values or {})
        return f"{see} {act}"

    def _intent(self, action: Action, obs: Observation, ctx: StepContext, target: dict[str, Any] | None,
                read_values: dict[str, str]) -> str:
        r = self.rng
        t = action.type
        label = " ".join(((target or {}).get("label") or ctx.step.get("label") or "").split())
        where = _position((target or {}).get("box"), obs)
        first, last = ctx.index == 0, ctx.index >= ctx.total - 1
        if obs.debug.get("document") and action.type in ("click", "key", "hotkey", "type", "wait"):
            said = desktop_intent(action, obs, ctx.step, r, last)  # LibreOffice: menus, dialogs, shortcuts
            if said:
                return said
        if t in ("goto", "open_app"):
            app = action.app or action.text or ctx.step.get("app") or "the app"
            return r.choice([f"For {_goal(ctx)} — I first need the {app} app, so I'll open it.",
                             f"Everything I need for this lives in the {app} app, so I'll switch there first.",
                             f"The {app} app is where this starts; I'll open it and look for what the task mentions."])
        if t in ("scroll", "swipe") and ctx.detour:
            want = ctx.step.get("label") or ctx.step.get("option") or ctx.step.get("id", "").replace("-", " ") \
                or "what I am looking for"
            d = action.direction or ("down" if (action.y2 or 0) < (action.y or 0) else "up")
            return r.choice([f"I don't see {_quote(str(want))} among what is shown, so I'll scroll {d} to look further.",
                             f"{_cap(_quote(str(want)))} is not visible yet; scrolling {d} should bring more of the list into view."])
        if t in ("scroll", "swipe"):
            d = action.direction or ("down" if (action.y2 or 0) < (action.y or 0) else "up")
            return f"The part I need is further {d} the page, so I'll scroll {d} to bring it into view."
        if t in ("click", "tap", "double_click", "long_press", "right_click"):
            verb = {"click": "click", "tap": "tap", "double_click": "double-click", "long_press": "long-press",
                    "right_click": "right-click"}[t]
            if ctx.step.get("do") == "type" and ctx.detour is False and ctx.step.get("text") is not None:
                return r.choice([f"To enter the value I'll {verb} the {_quote(label or 'input')} field first so it has the cursor.",
                                 f"The {_quote(label or 'input')} field {where or 'is on screen'}; I'll {verb} it to start typing there."])
            if ctx.step.get("do") == "select":
                option = ctx.step.get("option")
                if option and label and str(option).casefold() in label.casefold():
                    return f"The list is open and {_quote(label)} is the option the task calls for, so I'll {verb} it."
                return f"I'll {verb} the {_quote(label or 'dropdown')} dropdown to see its options, since the right choice is in there."
            why = purpose(label)
            if why is None:
                why = "finish the task" if last else ("get started on " + _goal(ctx)) if first else "get to the next part of the task"
            spot = f" {where}" if where and r.random() < 0.6 else ""
            return r.choice([f"I can see {_quote(label or 'the control')}{spot}; I'll {verb} it to {why}.",
                             f"Next I'll {verb} {_quote(label or 'the control')}{spot}, which should {why}.",
                             f"{_cap(_quote(label or 'The control'))} is what I need here, so I'll {verb} it to {why}."])
        if t == "type":
            text = action.text or ""
            source = next((k for k, v in read_values.items() if v and v in text), None)
            field = (obs.debug.get("focus") or {}).get("label") or label or "the field"
            because = f", the value I read earlier ({source.replace('_', ' ')})" if source else \
                (" as the task asks" if text and text.casefold() in self.instruction.casefold() else "")
            return r.choice([f"The cursor is in {_quote(field)}, so I'll type {text[:60]!r}{because}.",
                             f"Now I'll enter {text[:60]!r} into {_quote(field)}{because}.",
                             f"{_cap(_quote(field))} is ready for input; I'll write {text[:60]!r}{because}."])
        if t in ("key", "hotkey", "enter"):
            keys = "+".join(action.keys or ["enter"])
            if ctx.detour:
                return f"There is old text in the field; I'll press {keys} to clear it before typing the new value."
            return r.choice([f"I'll press {keys} to confirm what I entered and move on.",
                             f"Pressing {keys} should submit this and take me to the next part of the task."])
        if t == "back":
            return "This screen is done with, so I'll go back to the previous one to continue."
        if t == "wait":
            return "The screen is still updating, so I'll wait a moment before acting."
        if t == "answer":
            ans = action.answer or ""
            return r.choice([f"The screen shows what the question needs, so I can answer now: {ans[:80]}.",
                             f"I have found it on screen; the answer to {_goal(ctx)} is {ans[:80]}."])
        if t == "terminate":
            if action.status == "infeasible":
                return "What the task asks for does not exist here, so it cannot be done; I'll report it as infeasible."
            return r.choice(["I can see the change in place on the screen, so everything the task asked for is done.",
                             "The last step went through and the screen confirms it, so the task is complete."])
        if t == "bash":
            cmd = action.text or ""
            return r.choice([f"In the terminal I'll run `{cmd[:70]}` to get what the task needs from the files.",
                             f"The next command is `{cmd[:70]}`; its output tells me whether the files are right."])
        if t == "call_tool":
            name = ctx.step.get("name") or "the"
            return r.choice([f"The {name} tool can work this out exactly, so I'll call it with the values from the task.",
                             f"Rather than guess, I'll ask the {name} tool, which gives the figure the task needs."])
        return f"I'll {t.replace('_', ' ')} next to move {_goal(ctx)} forward."
