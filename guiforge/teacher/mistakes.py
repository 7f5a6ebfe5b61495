"""Mistakes a person makes, and how they notice and undo them, for the scripted teacher.

Uniform noise (a point 50 px off, a digit changed at random) teaches nothing a real agent
meets. These are the slips people make on real screens: the neighbouring row of a list,
an item whose name looks like the one wanted, a value copied from the wrong row, a scroll
the wrong way. Each is made on what the screen shows (the element scan), and each can be
noticed on the next screen (the route changed, the field holds the wrong text) and undone
(go back, select and retype, scroll the other way), so trajectories show recovery.

A mistake is only ever made where undoing it is possible: never on a control that sends,
pays, deletes or saves.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from guiforge.envs.actions import GRID, Action
from guiforge.envs.base import Observation

# Controls whose effect cannot be taken back by going back: never clicked by mistake.
_FINAL = re.compile(r"send|pay|delete|remove|archive|save|confirm|transfer|buy|order|checkout|submit|"
                    r"discard|pin|favou?rite|accept|decline|move|add|invite|post|reply|forward", re.I)
_VALUE = re.compile(r"-?\d[\d\s.,]*\d|\d")


@dataclass
class Mistake:
    """What went wrong on one turn, and what the screen looked like when it did."""

    kind: str  # neighbour | similar_name | wrong_row_value | wrong_scroll | ... (guiforge.teacher.slips)
    turn: int
    intended: dict[str, Any] | None  # the element the action was meant for
    wrong: dict[str, Any] | None  # the element it hit instead
    path: Any  # the route before the mistake
    correct_text: str | None = None
    typed: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _elements(obs: Observation) -> list[dict[str, Any]]:
    return obs.debug.get("elements") or []


def _safe(el: dict[str, Any]) -> bool:
    """An element whose click only navigates or opens (a list row, a link, a tab)."""
    label = el.get("label") or ""
    if (el.get("id") or "").startswith("gf-"):  # the browser's or phone's own bars, a pop-up: not the app's
        return False
    if el.get("disabled") or el.get("checked") is not None or el.get("tag") in ("input", "textarea", "select"):
        return False
    return bool(label.strip()) and not _FINAL.search(label)


def _centre(el: dict[str, Any]) -> tuple[float, float]:
    x, y, w, h = el["box"]
    return x + w / 2, y + h / 2


def target_of(obs: Observation, action: Action) -> dict[str, Any] | None:
    """The scanned element a grounded pointer action aims at (its grid point is the centre)."""
    if action.x is None:
        return None
    return next((e for e in _elements(obs) if e.get("grid") == [action.x, action.y]), None)


def neighbour(obs: Observation, target: dict[str, Any]) -> dict[str, Any] | None:
    """The row just above or below the target in the same column of a list."""
    if not _safe(target) or not target.get("box"):
        return None
    tx, ty = _centre(target)
    _, _, tw, th = target["box"]
    rows = [e for e in _elements(obs) if e is not target and e.get("box") and _safe(e)
            and abs(_centre(e)[0] - tx) < tw / 4 and abs(e["box"][2] - tw) < tw / 4
            and 0 < abs(_centre(e)[1] - ty) < 2.5 * th and e.get("label") != target.get("label")]
    return min(rows, key=lambda e: abs(_centre(e)[1] - ty), default=None)


def similar_name(obs: Observation, target: dict[str, Any]) -> dict[str, Any] | None:
    """Another visible item whose label shares a distinctive word with the target's."""
    if not _safe(target):
        return None
    words = {w for w in re.findall(r"[^\W\d_]{4,}", (target.get("label") or "").casefold())}
    best, score = None, 0
    for e in _elements(obs):
        if e is target or not _safe(e) or e.get("label") == target.get("label"):
            continue
        shared = len(words & set(re.findall(r"[^\W\d_]{4,}", (e.get("label") or "").casefold())))
        if shared > score:
            best, score = e, shared
    return best


def wrong_row_value(obs: Observation, text: str, rng: random.Random) -> str | None:
    """A value of the same shape from another element on screen (the amount of the row
    above, another person's name), the way a value gets copied from the wrong row."""
    if not text:
        return None
    number = bool(_VALUE.fullmatch(text.strip()))
    pool = []
    for e in _elements(obs):
        label = " ".join((e.get("label") or "").split())
        if number:
            pool += [m.group(0) for m in _VALUE.finditer(label) if m.group(0) != text and len(m.group(0)) > 1]
        elif 0 < len(label.split()) <= max(3, len(text.split())) and label.casefold() != text.casefold() \
                and label[:1].isupper() == text[:1].isupper() and not _FINAL.search(label):
            pool.append(label)
    return rng.choice(sorted(set(pool))) if pool else None


def point_at(el: dict[str, Any]) -> tuple[int, int]:
    gx, gy = el["grid"]
    return min(max(gx, 0), GRID), min(max(gy, 0), GRID)


def noticed(mistake: Mistake, obs: Observation) -> bool:
    """Whether the screen after the mistake shows it: another route, or the wrong text."""
    if mistake.kind in ("neighbour", "similar_name"):
        return obs.debug.get("path") != mistake.path
    if mistake.kind in ("wrong_row_value", "stale_value"):
        focused = next((e for e in _elements(obs) if e.get("focused")), None)
        return focused is not None and (focused.get("value") or "").endswith(mistake.typed or "\0")
    if mistake.kind == "wrong_tab":  # the other view is up, and the tab wanted is still there to press
        intended = mistake.intended or {}
        return any(e.get("label") == intended.get("label") for e in _elements(obs))
    # in view: the list, the tool's or the command's output, the Name Box's address, the
    # cell's figure, the open menu's items
    return mistake.kind in ("wrong_scroll", "wrong_tool_argument", "wrong_command", "wrong_cell",
                            "wrong_cell_value", "wrong_menu")


def focused_field(obs: Observation) -> dict[str, Any] | None:
    return next((e for e in _elements(obs) if e.get("focused") and e.get("grid")), None)


def label(el: dict[str, Any] | None) -> str:
    return "\u201c" + " ".join(((el or {}).get("label") or "it").split())[:60] + "\u201d"
