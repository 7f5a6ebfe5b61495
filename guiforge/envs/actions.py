"""Canonical actions: one shape for every domain, coordinates on the 0-999 grid.

``{type, x, y, x2, y2, text, keys, direction, amount, button, app, status, answer}`` with
x/y as integers in [0, 999] (MintAct's 999x999 grid) plus the screenshot's pixel size.
Each environment kind exposes its own action set (guiforge.envs.kind); sets are never
merged. The built-in kinds' sets are below.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guiforge.envs.keys import canonical_keys
from guiforge.envs.kinds import action_set

GRID = 999

# The built-in kinds' action sets (guiforge/envs/kinds_builtin.py), by domain and variant.
ACTION_SETS: dict[str, frozenset[str]] = {
    "web": frozenset(
        {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey",
         "goto", "back", "wait", "answer", "terminate"}
    ),
    "mobile": frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "enter", "open_app", "wait",
         "answer", "terminate"}
    ),
    "desktop_gui": frozenset(
        {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey",
         "wait", "answer", "terminate"}
    ),
    "desktop_terminal": frozenset({"bash", "wait", "answer", "terminate"}),
    "desktop_hybrid": frozenset(
        {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey",
         "bash", "wait", "answer", "terminate"}
    ),
    "tools": frozenset({"call_tool", "answer", "terminate"}),
}

POINTER_ACTIONS = frozenset({"click", "double_click", "right_click", "drag", "tap", "long_press", "swipe", "scroll"})
TWO_POINT_ACTIONS = frozenset({"drag", "swipe"})


Coord = int | None


class Action(BaseModel):
    """A canonical action. Unused fields stay None so every row has the same columns."""

    model_config = ConfigDict(extra="forbid")

    type: str
    x: Coord = Field(default=None, ge=0, le=GRID)
    y: Coord = Field(default=None, ge=0, le=GRID)
    x2: Coord = Field(default=None, ge=0, le=GRID)
    y2: Coord = Field(default=None, ge=0, le=GRID)
    text: str | None = None
    keys: list[str] | None = None
    direction: Literal["up", "down", "left", "right"] | None = None
    amount: int | None = None
    button: Literal["left", "right", "middle"] | None = None
    app: str | None = None
    status: Literal["success", "failure", "infeasible"] | None = None
    answer: str | None = None

    @model_validator(mode="after")
    def _fields_for_type(self) -> Action:
        t = self.type
        if t in POINTER_ACTIONS - {"scroll"} and (self.x is None or self.y is None):
            raise ValueError(f"{t} needs x and y on the 0-{GRID} grid")
        if t in TWO_POINT_ACTIONS and (self.x2 is None or self.y2 is None):
            raise ValueError(f"{t} needs x2 and y2")
        if t in ("type", "bash", "goto") and self.text is None:
            raise ValueError(f"{t} needs text")
        if t in ("key", "hotkey") and not self.keys:
            raise ValueError(f"{t} needs keys")
        if t == "scroll" and self.direction is None:
            raise ValueError("scroll needs a direction")
        if t == "open_app" and not self.app:
            raise ValueError("open_app needs app")
        return self

    def check_domain(self, domain: str, variant: str | None = None) -> None:
        allowed = action_set(domain, variant)
        if self.type not in allowed:
            raise ValueError(
                f"action {self.type!r} is not in the {domain}{'/' + variant if variant else ''} "
                f"action set: {', '.join(sorted(allowed))}"
            )
        if self.type in ("key", "hotkey"):
            canonical_keys(self.keys or [])  # an unknown key is an error here, never a no-op in the executor

    def row(self) -> dict[str, Any]:
        """The struct stored in the ``steps.action`` column."""
        return self.model_dump()


def to_pixels(gx: int, gy: int, width: int, height: int) -> tuple[int, int]:
    """Grid point -> pixel centre. Exact to within one pixel for any screen size."""
    return (round(gx * (width - 1) / GRID), round(gy * (height - 1) / GRID))


def to_grid(px: float, py: float, width: int, height: int) -> tuple[int, int]:
    """Pixel -> nearest grid point (clamped)."""
    gx = round(px * GRID / max(width - 1, 1))
    gy = round(py * GRID / max(height - 1, 1))
    return (min(max(gx, 0), GRID), min(max(gy, 0), GRID))


def action_pixels(action: Action, width: int, height: int) -> dict[str, Any]:
    """The action with coordinates converted to pixels of a ``width`` x ``height`` frame."""
    out = action.model_dump(exclude_none=True)
    if action.x is not None and action.y is not None:
        out["x"], out["y"] = to_pixels(action.x, action.y, width, height)
    if action.x2 is not None and action.y2 is not None:
        out["x2"], out["y2"] = to_pixels(action.x2, action.y2, width, height)
    out["width"], out["height"] = width, height
    return out
