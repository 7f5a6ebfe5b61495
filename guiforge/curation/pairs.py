"""Step-level preference pairs from the k samples of one task (rows of ``preference_pairs``).

Where a failed sample and a successful one share a prefix and then depart (the diagnose
stage's first departure, curation/differ.py), the successful sample's action at that step is
*chosen* and the failed sample's *rejected*, in the context the failed sample saw there: the
export rebuilds that prompt from the failed sample's steps, the way SFT rows are built.

The two actions must answer the same situation: the failed sample took the same steps before
(no repaired slip in between) or saw the very same frame. The chosen step is never one the
environment refused nor a deliberate teacher mistake, and both steps carry an action (a parse
failure has nothing to compare). Each failed sample of a task with mixed outcomes gets one
pair (against the success it follows longest) or a reason it has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guiforge.curation.diagnosis import TaskSamples, describe_departure
from guiforge.curation.differ import Departure, Step, first_departure
from guiforge.lake.fingerprint import fingerprint


@dataclass(frozen=True)
class NoPair:
    """A failed sample of a mixed task that gave no pair, and why."""

    trajectory_id: str
    reason: str


@dataclass
class _Candidate:
    success: dict[str, Any]
    departure: Departure
    rejected: Step
    shared_steps: int  # steps of the successful sample before the departure
    same_screen: bool


def _canonical(action: dict[str, Any] | None) -> str:
    return json.dumps({k: v for k, v in (action or {}).items() if v is not None}, sort_keys=True, ensure_ascii=False)


def _candidate(failed: list[Step], success: dict, steps: list[Step], mistakes: set[int]) -> _Candidate | str:
    """The pair ``failed`` makes with one successful sample, or why it makes none."""
    d = first_departure(failed, steps)
    if d is None:
        return "it never departs from a successful sample (its failure is in the end state, not a step)"
    if d.ran_out:
        return f"it ended at step {d.step_index} on a step the successful sample also took (no action of its own)"
    position = {s.index: n for n, s in enumerate(failed)}
    rejected = failed[position[d.step_index]]
    chosen = d.expected
    if rejected.action is None:
        return f"its step {d.step_index} has no parsed action (parse failure)"
    if chosen is None or chosen.action is None or chosen.error:
        return f"the successful sample's step {d.expected_index} did not execute cleanly"
    if chosen.index in mistakes:
        return f"the successful sample's step {d.expected_index} is a deliberate teacher mistake"
    shared = next(n for n, s in enumerate(steps) if s.index == chosen.index)
    same_screen = rejected.image is not None and rejected.image == chosen.image
    if position[d.step_index] != shared and not same_screen:
        return (f"it repaired a slip before departing at step {d.step_index} and saw another screen than the "
                "successful sample there")
    return _Candidate(success, d, rejected, shared, same_screen)


def pair_id(task_id: str, rejected: str, step_index: int, chosen: str, chosen_index: int) -> str:
    return "pair_" + fingerprint([task_id, rejected, step_index, chosen, chosen_index], 14)


def task_pairs(ts: TaskSamples, mistakes: dict[str, set[int]], round_: int = 0
               ) -> tuple[list[dict[str, Any]], list[NoPair]]:
    """The ``preference_pairs`` rows of one task, and every failed sample left without one.
    ``mistakes``: trajectory_id -> the step indices the teacher got wrong on purpose."""
    successes = sorted(ts.successes, key=lambda t: t["sample_index"])
    if not successes or not ts.failures:
        return [], []
    task = ts.task
    rows, none, seen = [], [], {}
    for failed in sorted(ts.failures, key=lambda t: t["sample_index"]):
        steps = ts.steps.get(failed["trajectory_id"], [])
        found = [_candidate(steps, s, ts.steps.get(s["trajectory_id"], []), mistakes.get(s["trajectory_id"], set()))
                 for s in successes]
        candidates = [c for c in found if isinstance(c, _Candidate)]
        if not candidates:
            none.append(NoPair(failed["trajectory_id"], next(c for c in found if isinstance(c, str))))
            continue
        # the success it follows longest, on the same screen where one is, the first sample on a tie
        best = max(candidates, key=lambda c: (c.shared_steps, c.same_screen, -c.success["sample_index"]))
        d, chosen, rejected = best.departure, best.departure.expected, best.rejected
        key = (rejected.image, best.shared_steps, _canonical(chosen.action), _canonical(rejected.action))
        if key in seen:
            none.append(NoPair(failed["trajectory_id"], f"the same choice on the same screen as pair {seen[key]}"))
            continue
        pid = pair_id(task["task_id"], failed["trajectory_id"], rejected.index, best.success["trajectory_id"],
                      chosen.index)
        seen[key] = pid
        rows.append({
            "pair_id": pid, "task_id": task["task_id"], "domain": task.get("domain"), "skill_id": task.get("skill_id"),
            "chosen_trajectory_id": best.success["trajectory_id"], "rejected_trajectory_id": failed["trajectory_id"],
            "step_index": rejected.index, "chosen_step_index": chosen.index, "shared_steps": best.shared_steps,
            "same_screen": best.same_screen, "image_sha256": rejected.image, "failure_mode": d.failure_mode,
            "reason": describe_departure(d), "detail_json": json.dumps(d.detail, ensure_ascii=False, default=str),
            "chosen_action": chosen.action, "rejected_action": rejected.action,
            "chosen_score": best.success.get("score"), "rejected_score": failed.get("score"), "round": round_,
        })
    return rows, none
