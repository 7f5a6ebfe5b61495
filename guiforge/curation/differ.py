"""The offline diagnoser's per-task half: a failed sample against a successful one of the
same task (action level), and a failed sample on its own (trajectory level).

Action level (MAI-Gym): walk both samples step by step; steps that do the same thing
(same action type on the same element, or the same text) align; a miss the sample itself
repaired on its next step is a recovered slip, not the failure; the first departure that
is not repaired is the diagnosis: wrong element, a point off its target by N px, wrong text,
a step skipped, stopped early, or another action.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

POINTER = {"click", "tap", "double_click", "right_click", "long_press", "drag", "swipe"}


@dataclass
class Step:
    index: int
    action: dict[str, Any] | None
    target: dict[str, Any] | None
    image: str | None
    error: str | None
    width: int | None
    height: int | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Step:
        target = json.loads(row["target_json"]) if row.get("target_json") else None
        return cls(row["step_index"], row["action"], target, row.get("image_sha256"), row.get("error"),
                   row.get("image_width"), row.get("image_height"))

    @property
    def type(self) -> str | None:
        return (self.action or {}).get("type")

    def pixels(self) -> tuple[float, float] | None:
        a = self.action or {}
        if a.get("x") is None or not self.width:
            return None
        return a["x"] * (self.width - 1) / 999, a["y"] * (self.height - 1) / 999


@dataclass
class Departure:
    """Where a failed sample first left a successful one, and how."""

    failure_mode: str
    step_index: int  # in the failed sample
    expected_index: int  # in the successful one
    detail: dict[str, Any] = field(default_factory=dict)
    expected: Step | None = None
    ran_out: bool = False  # the failed sample ended on a step it shared: it took no step of its own here


def _element_key(t: dict[str, Any] | None) -> tuple | None:
    if not t:
        return None
    return (t.get("id"), t.get("label"), tuple(round(v) for v in (t.get("box") or [])))


def same_step(a: Step, b: Step) -> bool:
    if a.type != b.type or a.action is None or b.action is None:
        return False
    if a.type in POINTER:
        ka, kb = _element_key(a.target), _element_key(b.target)
        if ka is not None and kb is not None:
            return ka == kb
        return abs(a.action["x"] - b.action["x"]) <= 15 and abs(a.action["y"] - b.action["y"]) <= 15
    keys = ("text", "keys", "direction", "answer", "status", "app")
    return all(a.action.get(k) == b.action.get(k) for k in keys)


def distance_to_box(point: tuple[float, float] | None, box: list[float] | None) -> int | None:
    if point is None or not box:
        return None
    x, y = point
    dx = max(box[0] - x, 0, x - (box[0] + box[2]))
    dy = max(box[1] - y, 0, y - (box[1] + box[3]))
    return round(math.hypot(dx, dy))


def _classify(f: Step, s: Step, following: Step | None) -> tuple[str, dict[str, Any]]:
    if following is not None and same_step(f, following):
        return "step_skipped", {"skipped": s.action}
    if f.type in ("terminate", "answer") and s.type not in ("terminate", "answer"):
        return "stopped_early", {"expected": s.action}
    if f.type == s.type == "type" or (f.type == s.type == "answer"):
        key = "text" if f.type == "type" else "answer"
        return "wrong_text", {"expected": s.action.get(key), "typed": f.action.get(key)}
    if f.type == s.type and f.type in POINTER:
        off = distance_to_box(f.pixels(), (s.target or {}).get("box"))
        label = (f.target or {}).get("label")
        if label and label != (s.target or {}).get("label"):
            return "wrong_element", {"clicked": label, "expected": (s.target or {}).get("label"), "off_px": off}
        return "point_off_target", {"off_px": off, "expected": (s.target or {}).get("label")}
    return "other_action", {"did": f.action, "expected": s.action}


def first_departure(failed: list[Step], success: list[Step]) -> Departure | None:
    """The first unrepaired departure of ``failed`` from ``success``, or None if it never
    departs (the failure is elsewhere: a wrong final answer the verifier caught)."""
    i = j = 0
    while i < len(failed) and j < len(success):
        f, s = failed[i], success[j]
        if same_step(f, s):
            i, j = i + 1, j + 1
            continue
        if i + 1 < len(failed) and same_step(failed[i + 1], s):  # a slip it repaired next step
            i += 1
            continue
        mode, detail = _classify(f, s, success[j + 1] if j + 1 < len(success) else None)
        return Departure(mode, f.index, s.index, detail, s)
    if j < len(success) and i >= len(failed):
        return Departure("stopped_early", failed[-1].index if failed else 0, success[j].index,
                         {"expected": success[j].action}, success[j], ran_out=True)
    return None


def trajectory_flags(steps: list[Step], status: str | None, max_steps: int | None,
                     success_lengths: list[int]) -> list[tuple[str, int, dict[str, Any]]]:
    """(failure mode, step index, detail) for what went wrong in a failed sample on its own:
    loops, early stops, the step budget, an answer too soon, env feedback errors ignored."""
    out = []
    run = 1
    for prev, cur in zip(steps, steps[1:], strict=False):
        # a loop repeats an action on a screen it did not change (three scrolls down that move are progress)
        run = run + 1 if same_step(prev, cur) and prev.image is not None and prev.image == cur.image else 1
        if run == 3:
            out.append(("loop", cur.index, {"repeated": cur.action}))
            break
    last = steps[-1] if steps else None
    shortest = min(success_lengths) if success_lengths else None
    if last is not None and last.type == "terminate" and (last.action or {}).get("status") == "success" \
            and (shortest is None or len(steps) < shortest):
        out.append(("early_stop", last.index, {"n_steps": len(steps), "successful_n_steps": shortest}))
    if max_steps and len(steps) >= max_steps and (last is None or last.type not in ("terminate", "answer")):
        out.append(("step_budget", last.index if last else 0, {"max_steps": max_steps}))
    if last is not None and last.type == "answer" and shortest is not None and len(steps) < shortest:
        out.append(("answer_too_soon", last.index, {"n_steps": len(steps), "successful_n_steps": shortest}))
    for prev, cur in zip(steps, steps[1:], strict=False):
        if prev.error and not (prev.error or "").startswith("parse failure") and same_step(prev, cur):
            out.append(("feedback_ignored", cur.index, {"error": prev.error[:200]}))
            break
    if last is not None and (last.error or "").startswith("parse failure"):
        out.append(("parse_failure", last.index, {"error": last.error[:200]}))
    return out
