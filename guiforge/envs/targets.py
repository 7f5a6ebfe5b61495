"""Which scanned element an action lands on: the observation's element geometry (``debug``,
never shown to the policy) read at the action's point. The harness records it per step and
the scripted teacher's planted mistakes aim beside it."""

from __future__ import annotations

from typing import Any

from guiforge.envs.actions import Action, action_pixels
from guiforge.envs.base import Observation

_TARGET_KEYS = ("id", "tag", "role", "type", "label", "box")


def element_at(obs: Observation, action: Action | None) -> dict[str, Any] | None:
    """The smallest scanned element whose box holds the action's point (pixels), or None."""
    elements = obs.debug.get("elements") or []
    if action is None or action.x is None or action.y is None or not elements or not obs.width:
        return None
    point = action_pixels(action, obs.width, obs.height)
    px, py = point["x"], point["y"]
    hits = [e for e in elements if e.get("box") and e["box"][0] <= px < e["box"][0] + e["box"][2]
            and e["box"][1] <= py < e["box"][1] + e["box"][3]]
    if not hits:
        return None
    best = min(hits, key=lambda e: e["box"][2] * e["box"][3])
    return {k: best.get(k) for k in _TARGET_KEYS}
