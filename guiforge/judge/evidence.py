"""What a judge may see of a trajectory, and nothing else.

A :class:`JudgeView` holds the instruction, the factual action history (canonical actions,
the element under the action's point, the environment's feedback and errors) and a bounded
set of key screenshots: always the last one, then the frames where the screen changed most.
The agent's own claim (a terminate status, its thoughts), the task's app state, the rubric's
expected values and the verifier's result are left out on purpose: the agent's claim is the
main cause of false positives in published web judges, and the rest would make the judge a
copy of the verifier.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Action fields a judge sees. ``status`` is the agent's own verdict on itself and is left out,
# but for "infeasible": reporting that a task cannot be done is the agent's answer, a fact of
# the trace a judge weighs against the screens (as it weighs an ``answer``), not a claim of success.
_SHOWN_FIELDS = ("x", "y", "x2", "y2", "text", "keys", "direction", "amount", "button", "app", "answer")


@dataclass(frozen=True)
class StepFact:
    index: int
    action: dict[str, Any] | None  # canonical action less ``status``; None: the reply did not parse
    target: str | None  # the element under the action's point: "button 'Send'"
    feedback: str
    error: str | None
    image_sha256: str | None

    def line(self) -> str:
        """One line of the action history, as a prompt shows it."""
        if self.action is None:
            return f"{self.index}. (no valid action) {self.error or ''}".strip()
        a = self.action
        what = " ".join(f"{k}={json.dumps(v, ensure_ascii=False) if isinstance(v, str) else v}"
                        for k, v in a.items() if k != "type" and v is not None)
        text = f"{self.index}. {a['type']} {what}".rstrip()
        if self.target:
            text += f" on {self.target}"
        if self.error:
            text += f" -> error: {self.error[:160]}"
        elif self.feedback:
            text += f" -> {self.feedback[:160]}"
        return text


@dataclass
class JudgeView:
    trajectory_id: str
    task_id: str
    domain: str
    skill_id: str | None
    apps: list[str]
    instruction: str
    max_steps: int | None
    env_failure: bool
    steps: list[StepFact]
    key_frames: list[tuple[int, str]] = field(default_factory=list)  # (step index, sha256), in step order

    def history(self) -> str:
        return "\n".join(s.line() for s in self.steps) or "(no actions)"

    @property
    def last_action(self) -> dict[str, Any] | None:
        return self.steps[-1].action if self.steps else None


def _target_label(target_json: str | None) -> str | None:
    if not target_json:
        return None
    try:
        t = json.loads(target_json)
    except json.JSONDecodeError:
        return None
    kind = t.get("role") or t.get("tag") or "element"
    label = (t.get("label") or "").strip()
    return f"{kind} {json.dumps(label[:60], ensure_ascii=False)}" if label else kind


def step_fact(row: dict[str, Any]) -> StepFact:
    action = row.get("action")
    shown = None if action is None else {"type": action["type"], **{k: action.get(k) for k in _SHOWN_FIELDS
                                                                    if action.get(k) is not None}}
    if shown is not None and action.get("status") == "infeasible":
        shown["status"] = "infeasible"
    return StepFact(int(row["step_index"]), shown, _target_label(row.get("target_json")), row.get("feedback") or "",
                    row.get("error"), row.get("image_sha256"))


def build_view(trajectory: dict[str, Any], task: dict[str, Any], step_rows: list[dict[str, Any]]) -> JudgeView:
    """The view of one trajectory: ``trajectory`` lends only its ids and env_failure flag
    (never success, score or criteria), ``task`` only what the agent was told."""
    steps = [step_fact(r) for r in sorted(step_rows, key=lambda r: r["step_index"])]
    return JudgeView(trajectory["trajectory_id"], task["task_id"], task["domain"], task.get("skill_id"),
                     list(task.get("apps") or []), task["instruction"], task.get("max_steps"),
                     bool(trajectory.get("env_failure")), steps)


def change(a: bytes, b: bytes) -> float:
    """How much the screen changed between two frames: the mean absolute difference of their
    thumbnails (guiforge.lake.thumbs), 0-1."""
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / (255 * len(a))


def choose_key_frames(view: JudgeView, thumbs: dict[str, bytes], cap: int) -> list[tuple[int, str]]:
    """The last frame, then the frames right after the biggest screen changes, ``cap`` in all;
    in step order. A frame shown twice counts once; ``thumbs`` holds every frame there is."""
    frames = [(s.index, s.image_sha256) for s in view.steps if s.image_sha256 and s.image_sha256 in thumbs]
    if not frames or cap <= 0:
        return []
    chosen = {frames[-1][1]: frames[-1]}
    scored = []
    for (_, a), (index, b) in zip(frames, frames[1:], strict=False):
        if a != b:
            scored.append((change(thumbs[a], thumbs[b]), index, b))
    for _, index, sha in sorted(scored, key=lambda t: (-t[0], t[1])):
        if len(chosen) >= cap:
            break
        chosen.setdefault(sha, (index, sha))
    return sorted(chosen.values())
