"""Planted weaknesses: scripted-teacher mistakes that depend on what it acts on.

Plain noise (``harness.policies.Noise``) spreads mistakes evenly; a planted weakness makes
one kind of situation go wrong far more often (small targets, non-ASCII text, long tasks,
one app), so a diagnoser can be measured on whether it finds exactly those. Each weakness
has a name the diagnoser's knowledge-level findings are matched against (``key``).
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from guiforge.envs.actions import GRID, Action
from guiforge.envs.base import Observation
from guiforge.envs.targets import element_at


class Weaknesses(BaseModel):
    """Per-situation mistake rates (0 disables one). Configured as ``rollouts.weaknesses``."""

    model_config = ConfigDict(extra="forbid")

    small_target_px: int = Field(default=24, ge=1, le=400, description="a target smaller than this (either side) is small")
    small_target_misclick: float = Field(default=0.0, ge=0, le=1, description="misclick rate on small targets")
    non_ascii_wrong_value: float = Field(default=0.0, ge=0, le=1,
                                         description="wrong value rate when typing text with non-ASCII characters")
    long_task_steps: int = Field(default=10, ge=1, le=100, description="a task past this many steps is long")
    long_task_early_stop: float = Field(default=0.0, ge=0, le=1,
                                        description="per step past long_task_steps: stop early")
    weak_app: str | None = Field(default=None, description="the app the teacher handles badly")
    weak_app_misclick: float = Field(default=0.0, ge=0, le=1, description="misclick rate on every action in weak_app")
    weak_action: str | None = Field(default=None, description="an action type the teacher gets wrong (type, click, ...)")
    weak_action_rate: float = Field(default=0.0, ge=0, le=1,
                                    description="per weak action: a wrong value (type) or a misclick (pointer)")

    def planted(self) -> list[str]:
        """The keys of the weaknesses switched on (what a diagnoser should report)."""
        out = []
        if self.small_target_misclick:
            out.append(f"target_size:<{self.small_target_px}px")
        if self.non_ascii_wrong_value:
            out.append("text:non_ascii")
        if self.long_task_early_stop:
            out.append(f"task_length:>{self.long_task_steps}")
        if self.weak_app and self.weak_app_misclick:
            out.append(f"app:{self.weak_app}")
        if self.weak_action and self.weak_action_rate:
            out.append(f"action_type:{self.weak_action}")
        return out

    @property
    def active(self) -> bool:
        return bool(self.planted())


def _box_at(obs: Observation, action: Action) -> list[float] | None:
    target = element_at(obs, action)
    return (target or {}).get("box")


def _offset(action: Action, rng: random.Random, width: int, height: int) -> Action:
    """The same pointer action 30-60 px off its point, so it lands beside its target."""
    dx, dy = (rng.choice([-1, 1]) * rng.randint(30, 60) for _ in range(2))
    gx = round(dx * GRID / max(width - 1, 1))
    gy = round(dy * GRID / max(height - 1, 1))
    return action.model_copy(update={"x": min(max(action.x + gx, 0), GRID), "y": min(max(action.y + gy, 0), GRID)})


def apply_weaknesses(w: Weaknesses, action: Action, obs: Observation, step_index: int, apps: list[str],
                     rng: random.Random, perturb) -> tuple[Action | None, str | None]:
    """``(action, None)`` with a planted mistake applied (or unchanged), or ``(None, why)``
    when the teacher stops early. ``perturb(text) -> text`` makes a plausible wrong value."""
    if w.long_task_early_stop and step_index >= w.long_task_steps and action.type not in ("answer", "terminate") \
            and rng.random() < w.long_task_early_stop:
        return None, "long_task"
    pointer = action.x is not None and action.y is not None and action.type != "scroll"
    if w.weak_action == action.type and rng.random() < w.weak_action_rate:
        if action.type == "type" and action.text:
            return action.model_copy(update={"text": perturb(action.text, rng)}), None
        if pointer and obs.width:
            return _offset(action, rng, obs.width, obs.height), None
    if pointer and obs.width:
        if w.weak_app and w.weak_app in apps and rng.random() < w.weak_app_misclick:
            return _offset(action, rng, obs.width, obs.height), None
        box = _box_at(obs, action) if w.small_target_misclick else None
        if box and min(box[2], box[3]) < w.small_target_px and rng.random() < w.small_target_misclick:
            return _offset(action, rng, obs.width, obs.height), None
    if w.non_ascii_wrong_value and action.type == "type" and action.text and not action.text.isascii() \
            and rng.random() < w.non_ascii_wrong_value:
        return action.model_copy(update={"text": _drop_non_ascii(action.text, rng, perturb)}), None
    return action, None


def _drop_non_ascii(text: str, rng: random.Random, perturb) -> str:
    """What a keyboard map without the characters types: the non-ASCII letters go missing."""
    stripped = "".join(ch for ch in text if ch.isascii())
    return stripped if stripped != text else perturb(text, rng)


def describe(w: Weaknesses) -> dict[str, Any]:
    return {"planted": w.planted(), **w.model_dump()}
