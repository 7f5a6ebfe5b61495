"""Quality tiers (guiforge.judge.tiers) from outcome, judge score, length against the
shortest accepted sample of the task, parse retries and final progress."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from guiforge.judge.tiers import TierPolicy, assign_tiers, worst
from guiforge.lake import Lake
from guiforge.stages.shared import read_with_optional


def _t(tid: str, task: str, n: int, success: bool | None, score: float = 0.0, fault: str | None = None) -> dict:
    return {"trajectory_id": tid, "task_id": task, "n_steps": n, "success": success, "score": score,
            "failure_kind": fault, "env_failure": fault == "env_failure"}


def _steps(progress: float, retries: int = 0) -> list[dict]:
    attempts = [{"raw": "x", "error": "bad json"}] * retries + [{"raw": "{}", "error": None}]
    return [{"step_index": 0, "progress": 0.0, "attempts_json": json.dumps(attempts)},
            {"step_index": 1, "progress": progress, "attempts_json": "[]"}]


def test_tiers_from_outcome_length_judge_retries_and_progress():
    trajectories = [_t("short", "a", 4, True), _t("near", "a", 5, True), _t("long", "a", 9, True),
                    _t("doubted", "a", 4, True), _t("retried", "a", 4, True),
                    _t("half", "a", 6, False, 0.5), _t("little", "a", 6, False, 0.2),
                    _t("crashed", "a", 2, None, fault="env_failure"), _t("other", "b", 12, True)]
    accepted = {t["trajectory_id"]: bool(t["success"]) for t in trajectories}
    scores = {"doubted": 0.7, "short": 1.0}
    steps = {"short": _steps(1.0), "near": _steps(1.0), "long": _steps(1.0), "doubted": _steps(1.0),
             "retried": _steps(1.0, retries=1), "half": _steps(0.6), "little": _steps(0.25)}
    tiers = assign_tiers(trajectories, accepted, scores, steps)
    assert tiers == {"short": "gold", "near": "gold", "long": "silver", "doubted": "silver", "retried": "silver",
                     "half": "partial", "little": "reject", "crashed": "reject", "other": "gold"}
    strict = assign_tiers(trajectories, accepted, scores, steps, TierPolicy(gold_length=1.0, partial_progress=0.7))
    assert strict["near"] == "silver" and strict["half"] == "reject"
    # a lake from before progress: the verifier's score stands in for the final progress
    assert assign_tiers([_t("old", "c", 3, False, 0.6)], {"old": False}, {}, {})["old"] == "partial"


def test_a_trajectory_is_as_good_as_its_strictest_judge():
    assert worst(["gold", "silver"]) == "silver" and worst(["gold", None]) == "gold" and worst([None]) is None


def test_a_shard_from_before_progress_reads_without_the_new_columns(tmp_path):
    """The judge reads steps' attempts_json and progress where a shard has them; a shard
    written before they existed reads without them (its tiers then use the verifier's score)."""
    old = tmp_path / "steps" / "run=r" / "part-old.parquet"
    old.parent.mkdir(parents=True)
    pq.write_table(pa.table({"trajectory_id": ["t"], "step_index": [0]}), old)
    table = read_with_optional(Lake(tmp_path), "steps/run=r/part-old.parquet", ["trajectory_id", "step_index"],
                               ["attempts_json", "progress"])
    assert table.column_names == ["trajectory_id", "step_index"]
    rows = {"t": table.to_pylist()}
    assert assign_tiers([_t("t", "x", 1, False, 0.7)], {"t": False}, {}, rows)["t"] == "partial"
