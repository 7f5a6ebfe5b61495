"""Grounding for scripted teachers and tests: find an element the adapter reported in
``Observation.debug["elements"]`` by id or label and turn it into a canonical action.
The policy never sees this data; a teacher uses it to say *where* "the Send button" is."""

from __future__ import annotations

from typing import Any

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation


class ElementNotFound(LookupError):
    pass


def find(obs: Observation, id: str | None = None, label: str | None = None) -> dict[str, Any]:  # noqa: A002
    """The first visible element with this id, else with this exact label, else whose
    label contains ``label`` (case-insensitive)."""
    elements = obs.debug.get("elements", [])
    if id is not None:
        for el in elements:
            if el.get("id") == id:
                return el
    if label is not None:
        want = label.casefold()
        for el in elements:
            if (el.get("label") or "").casefold() == want:
                return el
        for el in elements:
            if want in (el.get("label") or "").casefold():
                return el
    seen = ", ".join(f"{e.get('id') or '-'}:{(e.get('label') or '')[:30]}" for e in elements[:40])
    raise ElementNotFound(f"no visible element with id={id!r} label={label!r} on {obs.debug.get('path')}; visible: {seen}")


def pointer(obs: Observation, kind: str = "click", id: str | None = None, label: str | None = None,  # noqa: A002
            **extra: Any) -> Action:
    """A pointer action (click, tap, double_click, long_press, ...) at an element's centre."""
    gx, gy = find(obs, id=id, label=label)["grid"]
    return Action(type=kind, x=gx, y=gy, **extra)
