"""Where a trajectory stands in its task's reference solution, step by step: which reference
step each action carries out, so a thought can say what the task still needs after it.

The actions are matched to the reference's UI-level steps (``{do: click, id: ...}``,
``{do: type, text: ...}``, a desktop recipe such as ``{do: save}``) by what they do: the
element under the point, the text typed, the keys pressed. An action that matches none
(a scroll to reveal, a pop-up closed, a mistake undone) stays with the step in progress.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

LOOKAHEAD = 3  # reference steps an action may jump ahead (a skipped wait, an unneeded click)

# Desktop recipes, told apart by the keys that start them or the text they type.
_DESKTOP_KEYS = {"save": ("ctrl+s",), "sort": ("alt+d",), "sheet": ("ctrl+pagedown",), "close": ("ctrl+w",),
                 "find": ("ctrl+f",), "replace_all": ("ctrl+h",), "outline": ("alt+v",), "open": ("ctrl+o",),
                 "slide": ("pagedown", "ctrl+end", "ctrl+home", "home")}


def _fold(text: Any) -> str:
    return " ".join(str(text or "").split()).casefold()


def _pattern(text: str) -> re.Pattern:
    """A reference text as a pattern: ``${name}`` (a value read on screen) matches anything."""
    parts = re.split(r"\$\{[A-Za-z_]\w*\}", text)
    return re.compile(".*".join(re.escape(_fold(p)) for p in parts), re.S)


def _keys(action: Mapping[str, Any]) -> str:
    if action.get("type") == "enter":
        return "enter"
    return "+".join(str(k).lower() for k in action.get("keys") or [])


def matches(step: Mapping[str, Any], action: Mapping[str, Any], target: Mapping[str, Any] | None) -> bool:
    """Whether ``action`` (on ``target``) carries out the reference ``step``, or part of it."""
    verb, kind = step.get("do"), action.get("type")
    target = target or {}
    if verb == "open" and step.get("app"):
        return kind in ("goto", "open_app") and _fold(action.get("app") or action.get("text")) == _fold(step["app"])
    if verb == "goto":
        return kind == "goto"
    pointer = kind in ("click", "tap", "double_click", "right_click", "long_press") and bool(target)
    if pointer and verb in ("click", "double_click", "right_click", "select", "type"):
        if step.get("id") and target.get("id") == step["id"]:
            return True
        if step.get("id") and verb == "select" and str(target.get("id") or "").startswith(f"{step['id']}-option-"):
            return True
        if step.get("label") and _fold(step["label"]) in _fold(target.get("label")):
            return True
    if verb == "type":
        return kind == "type" and bool(_pattern(str(step.get("text", ""))).fullmatch(_fold(action.get("text"))))
    if verb == "key" or verb == "hotkey":
        want = "+".join(str(k).lower() for k in step.get("keys") or [])
        return kind in ("key", "hotkey", "enter", "back") and (_keys(action) == want or (want == "back" and kind == "back"))
    if verb == "scroll":
        return kind in ("scroll", "swipe")
    if verb == "answer":
        return kind == "answer"
    if verb == "terminate":
        return kind == "terminate"
    if verb == "bash":
        return kind == "bash"
    if verb == "call_tool":
        return kind == "call_tool" and f'"name": "{step.get("name")}"' in (action.get("text") or "")
    if verb == "cell":
        text = _fold(action.get("text"))
        values = [_fold(v) for v in (step.get("values") or ([step["value"]] if "value" in step else []))]
        return kind == "type" and (text.rstrip() == _fold(step.get("ref")) or text.strip() in values)
    if verb == "open" and step.get("file"):
        return (kind == "hotkey" and _keys(action) == "ctrl+o") or \
            (kind == "type" and _fold(step["file"]) in _fold(action.get("text")))
    if verb in _DESKTOP_KEYS:
        return kind in ("key", "hotkey") and _keys(action) in _DESKTOP_KEYS[verb]
    return False


def align(reference: Sequence[Mapping[str, Any]], steps: Sequence[tuple[Mapping[str, Any], Mapping | None]]) -> list[int]:
    """For each (action, target) of a trajectory, the index of the reference step it carries
    out or is on the way to (``len(reference)`` once past the end)."""
    out, at = [], 0
    for action, target in steps:
        hit = None
        ahead = 0
        for j in range(at, len(reference)):
            if matches(reference[j], action, target):
                hit = j
                break
            if reference[j].get("do") != "read":  # reading costs no action: it never counts
                ahead += 1
                if ahead > LOOKAHEAD:
                    break
        if hit is not None:
            at = hit
        out.append(min(at, len(reference)))
    return out
