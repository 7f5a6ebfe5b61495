"""Dense progress from a verdict: how far a state is along the rubric, which criteria a step
flipped, and a fingerprint of a final state so an unchanged state is not scored again.

progress = sum(w_j * b_j) / sum(w_j) over the *required* criteria (a graded criterion counts
its value); a verdict whose required criteria are all met (a success) has progress 1.0. A
rubric with no required criteria (a kind's own graded reward) progresses by the verdict's
score, and is 1.0 on success.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from guiforge.verify.contract import Criterion, FinalState, VerifierResult
from guiforge.verify.scoring import INFEASIBLE_CRITERION


def required_criteria(rubric: list[Criterion], feasible: bool = True) -> list[Criterion]:
    """The criteria success needs, as the verifier scores them (an infeasible task adds one)."""
    criteria = list(rubric) if feasible else [*rubric, INFEASIBLE_CRITERION]
    return [c for c in criteria if c.required]


def progress_of(required: list[Criterion], verdict: VerifierResult) -> float:
    """The weighted fraction of ``required`` that ``verdict`` meets, in [0, 1]."""
    if verdict.success:
        return 1.0
    total = sum(c.weight for c in required)
    if not total:
        return round(min(max(float(verdict.score), 0.0), 1.0), 6)
    met = sum(c.weight * min(max(float(verdict.criteria.get(c.id, 0)), 0.0), 1.0) for c in required)
    return round(met / total, 6)


def flips(before: dict[str, int | float], after: dict[str, int | float]) -> dict[str, list[int | float]]:
    """criterion id -> [value before, value after] for each criterion the step changed."""
    return {k: [before.get(k, 0), v] for k, v in after.items() if before.get(k, 0) != v}


def undoes(required: list[Criterion], before: dict[str, int | float], after: dict[str, int | float]) -> bool:
    """Whether a step took back a required criterion that was met (or partly met) before it."""
    return any(after.get(c.id, 0) < before.get(c.id, 0) for c in required)


def state_key(state: FinalState) -> str:
    """A fingerprint of everything a check may read in ``state`` (s0 never changes within an
    episode, so it is left out): equal keys, equal verdicts."""
    h = hashlib.sha256()
    # a command's wall time is no check's business and differs with the load: left out, so a
    # state seen again is a cache hit
    terminal = [{k: v for k, v in r.items() if k != "duration_s"} for r in state.terminal or []]
    h.update(json.dumps([state.apps, state.answer, state.status, terminal], sort_keys=True,
                        default=str).encode())
    if state.workspace is not None:
        for path in sorted(Path(state.workspace).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(state.workspace)).encode())
                h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def step_progress(progress: float, before: float, changed: dict[str, Any], regressed: bool) -> dict[str, Any]:
    """A step row's progress columns."""
    return {"progress": progress, "progress_delta": round(progress - before, 6),
            "criteria_flips_json": json.dumps(changed, sort_keys=True) if changed else None,
            "undoes_progress": regressed}
