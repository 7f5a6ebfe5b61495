"""Quality tiers: where each trajectory goes in training, finer than accepted or not.

- ``gold``: accepted, near the shortest accepted sample of its task (``gold_length`` times
  its steps at most), the judge's score at least ``gold_judge_score`` (where a judge scored
  it) and no more than ``gold_parse_retries`` replies that failed to parse;
- ``silver``: accepted, but longer, doubted by the judge or retried;
- ``partial``: not accepted, no fault, and its final progress (the required criteria it met,
  ``steps.progress``; the verifier's score on lakes from before progress) at least
  ``partial_progress``: data for continued pre-training or weighting;
- ``reject``: everything else, faults included.

The judge stage writes the tier beside acceptance (``judgments.quality_tier``): a judge shard
holds every sample of a task, which the length rule compares. Exports compute the same tiers
where a lake has no tier column (verifier acceptance, or judgments from before tiers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from guiforge.failures import is_fault

TIERS = ("gold", "silver", "partial", "reject")
TIER_RANK = {t: i for i, t in enumerate(TIERS)}  # best first


class TierPolicy(BaseModel):
    """The thresholds between the tiers."""

    model_config = ConfigDict(extra="forbid")
    gold_length: float = Field(default=1.25, ge=1.0, description="gold: at most this many times the steps of the "
                                                                 "task's shortest accepted sample")
    gold_judge_score: float = Field(default=0.8, ge=0, le=1, description="gold: the judge's score at least this")
    gold_parse_retries: int = Field(default=0, ge=0, description="gold: at most this many unparsable replies")
    partial_progress: float = Field(default=0.5, ge=0, le=1, description="partial: final progress at least this "
                                                                         "(not accepted)")


def parse_retries(steps: Iterable[dict[str, Any]]) -> int:
    """Replies of a trajectory that failed to parse (``steps.attempts_json``)."""
    return sum(1 for s in steps for a in json.loads(s.get("attempts_json") or "[]") if a.get("error"))


def final_progress(trajectory: dict[str, Any], steps: list[dict[str, Any]]) -> float | None:
    """The last step's progress; the verifier's score where steps carry none (older lakes)."""
    last = max(steps, key=lambda s: s["step_index"]) if steps else None
    if last is not None and last.get("progress") is not None:
        return last["progress"]
    return trajectory.get("score")


def assign_tiers(trajectories: list[dict[str, Any]], accepted: dict[str, bool], judge_scores: dict[str, float | None],
                 steps: dict[str, list[dict[str, Any]]], policy: TierPolicy | None = None) -> dict[str, str]:
    """trajectory_id -> tier. ``trajectories`` holds every sample of each task it names (the
    length rule compares them); ``accepted`` and ``judge_scores`` by trajectory_id."""
    policy = policy or TierPolicy()
    shortest: dict[str, int] = {}
    for t in trajectories:
        if accepted.get(t["trajectory_id"]):
            n = t.get("n_steps") or 0
            shortest[t["task_id"]] = min(n, shortest.get(t["task_id"], n))
    out = {}
    for t in trajectories:
        tid, mine = t["trajectory_id"], steps.get(t["trajectory_id"], [])
        if is_fault(t):
            out[tid] = "reject"
        elif accepted.get(tid):
            score = judge_scores.get(tid)
            near = (t.get("n_steps") or 0) <= shortest[t["task_id"]] * policy.gold_length
            sure = score is None or score >= policy.gold_judge_score
            clean = parse_retries(mine) <= policy.gold_parse_retries
            out[tid] = "gold" if near and sure and clean else "silver"
        else:
            progress = final_progress(t, mine)
            out[tid] = "partial" if progress is not None and progress >= policy.partial_progress else "reject"
    return out


def worst(tiers: Iterable[str | None]) -> str | None:
    """The lowest of several judges' tiers (a trajectory is as good as its strictest judge)."""
    known = [t for t in tiers if t in TIER_RANK]
    return max(known, key=TIER_RANK.__getitem__) if known else None
