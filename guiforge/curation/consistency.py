"""The reason-then-act consistency check (after GUI-Libra's filter): a thought must agree
with the action taken, and name only what the screen shows. Five checks, in order; the
first that fails names the reason:

- ``verb``: the thought's first action verb fits the action type (no "type" before a click);
- ``element``: an element the thought names in quotes is the one under the action's point;
- ``text``: text the thought quotes for typing is exactly the text typed (a closing Enter
  aside);
- ``direction``: a scroll or swipe names its direction;
- ``grounding``: where the frame has an element scan, every quoted text is on the screen
  (an element's label or value, the focused field, a dialog), typed or answered by this
  action, or in the task; and no quoted text is noise or a debug string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from guiforge.curation.phrases import direction
from guiforge.envs.screen_facts import readable
from guiforge.filters import Drop, Filter

# Verb families: a thought's first verb must come from its action's family.
FAMILIES: dict[str, tuple[str, ...]] = {
    "point": ("click", "tap", "press", "select", "choose", "open", "hit", "double-click", "right-click",
              "long-press", "pick", "toggle", "check", "focus"),
    "type": ("type", "enter", "write", "fill", "input"),
    "scroll": ("scroll", "swipe"),
    "drag": ("drag", "move"),
    "key": ("press", "hit", "use", "enter"),
    "nav": ("go", "navigate", "open", "visit", "return", "head", "press"),
    "wait": ("wait", "pause"),
    "answer": ("answer", "report", "reply", "say", "respond", "give"),
    "end": ("finish", "stop", "end", "complete", "done", "terminate", "say"),
    "run": ("run", "execute", "use"),
    "call": ("call", "use", "invoke", "query"),
}
ACTION_FAMILY = {
    "click": "point", "tap": "point", "double_click": "point", "right_click": "point", "long_press": "point",
    "type": "type", "scroll": "scroll", "swipe": "scroll", "drag": "drag", "key": "key", "hotkey": "key",
    "goto": "nav", "back": "nav", "home": "nav", "open_app": "nav", "enter": "key", "wait": "wait",
    "answer": "answer", "terminate": "end", "bash": "run", "call_tool": "call",
}
_ALL_VERBS = sorted({v for vs in FAMILIES.values() for v in vs}, key=len, reverse=True)
_VERB = re.compile(r"\b(?:I'll|I will|I should|I need to|I can|let me|I'm going to|now I|I)\s+(" +
                   "|".join(map(re.escape, _ALL_VERBS)) + r")\b", re.I)
_QUOTED = re.compile(r"\u201c([^\u201d]+)\u201d|\"([^\"]+)\"")
_DIRECTIONS = ("up", "down", "left", "right")


def quoted(thought: str) -> list[str]:
    return [a or b for a, b in _QUOTED.findall(thought)]


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().casefold().rstrip(".\u2026")


def screen_texts(screen: Mapping[str, Any] | None, target: Mapping[str, Any] | None) -> list[str] | None:
    """What a thought may quote from a frame with an element scan; None for a frame without
    one (the desktop, the terminal, the tools), where only the noise check applies."""
    if not screen or not screen.get("elements"):
        return None
    out = [e.get("label") or "" for e in screen["elements"]] + [e.get("value") or "" for e in screen["elements"]]
    out += [screen.get(k) or "" for k in ("focus", "dialog", "document", "pointed")]
    out.append((target or {}).get("label") or "")
    return [_norm(s) for s in out if s]


def _grounded(quote: str, allowed: Iterable[str]) -> bool:
    q = _norm(quote).rstrip(".…")
    return any(q in s or (len(s) > 3 and s in q) for s in allowed)


def check_consistency(thought: str, action: Mapping[str, Any], target: Mapping[str, Any] | None,
                      screen: list[str] | None = None, context: Iterable[str] = ()) -> str | None:
    """None when ``thought`` agrees with ``action``, else ``'<check>: <why>'``. ``screen``
    (:func:`screen_texts`) and ``context`` (the instruction, the reference's texts) turn on
    the grounding check."""
    t = action.get("type") or ""
    family = ACTION_FAMILY.get(t)
    verbs = [m.group(1).lower() for m in _VERB.finditer(thought)]
    if family and family not in ("end", "answer"):
        if not verbs:
            return f"verb: the thought says no action verb for a {t}"
        if verbs[0] not in FAMILIES[family]:
            return f"verb: the thought says {verbs[0]!r} but the action is {t}"
    quotes = quoted(thought)
    if t == "type":
        typed = " ".join((action.get("text") or "").split())  # a thought is one line: compare words
        if quotes and typed not in [" ".join(q.split()) for q in quotes]:
            return f"text: the thought types {quotes[-1]!r} but the action typed {action.get('text')!r}"
    elif family == "point" and quotes and target:
        label = _norm(target.get("label") or "")
        if label and not any(_norm(q) in label or label in _norm(q) for q in quotes):
            return f"element: the thought names {quotes[0]!r} but the point is on {target.get('label')!r}"
        if not label:
            return f"element: the thought names {quotes[0]!r} but the point is on an unlabeled element"
    if t in ("scroll", "swipe"):
        want = direction(dict(action))
        said = [d for d in _DIRECTIONS if re.search(rf"\b{d}\b", thought, re.I)]
        if want not in said:
            return f"direction: the action scrolls {want} but the thought says {said[0] if said else 'no direction'}"
    own = {_norm(str(action.get(k) or "")) for k in ("text", "answer")} - {""}
    for quote in quotes:
        if _norm(quote) in own or _norm(quote).rstrip("\n") in own:
            continue
        # without an element scan the text came off the pixels: hold it to OCR's stricter bar
        plausible = readable(quote, ocr=screen is None) or re.fullmatch(r"[A-Z][A-Za-z]+", quote.strip())
        if not plausible:
            return f"grounding: the thought quotes {quote!r}, which is not readable text"
        if screen is not None and not _grounded(quote, [*screen, *(_norm(c) for c in context if c)]):
            return f"grounding: the thought quotes {quote!r}, which is not on the screen"
    return None


class ConsistencyFilter(Filter):
    """Drops a relabel whose thought disagrees with its action (reason = the failed check)."""

    gate = "consistency"

    def check(self, row: Mapping[str, Any]) -> str | Drop | None:
        if row.get("consistent"):
            return None
        return Drop(row.get("failed_reason") or row.get("failed_check") or "inconsistent",
                    {"failed_check": row.get("failed_check"), "step_index": row.get("step_index")})


class DuplicateTargetFilter(Filter):
    """Mage's rule: one query per target location per screenshot; the repeats are dropped."""

    gate = "duplicate_target"

    def check(self, row: Mapping[str, Any]) -> str | Drop | None:
        if not row.get("duplicate_target"):
            return None
        return Drop(f"repeats the query of {row.get('duplicate_of')} at the same spot on the same frame",
                    {"step_index": row.get("step_index"), "image_sha256": row.get("image_sha256")})
