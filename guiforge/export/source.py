"""What an export reads from the lake: the accepted trajectories of one run, their steps
(each with the prompt the policy saw, by reference), relabels, the RL pool, the preference
pairs with the steps of both their samples, and the lineage
rows (tasks, worlds, judgments) every exported row points back to.

Acceptance: when the run has judgments, a trajectory is exported when its judgments accept
it (``judgments.accepted``); without judgments, when its verifier succeeded (and the card
says so). A trajectory that met a fault (``failure_kind``) is never exported. Every
trajectory or step left out is an ``exclusions`` row with its reason.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from guiforge.errors import GuiforgeError
from guiforge.failures import failure_kind, is_fault
from guiforge.judge.tiers import assign_tiers, worst
from guiforge.lake.exclusions import exclusion_row
from guiforge.lake.manifests import all_entries
from guiforge.lake.runlog import provenance_records
from guiforge.lake.store import Lake

STAGE = "export"
# The columns an export keys on, by table: the contract the stages that write these tables
# keep (the export stage declares it; the compile step checks every producer writes them).
READS: dict[str, list[str]] = {
    "trajectories": ["trajectory_id", "task_id", "sample_index", "success", "score", "env_failure", "harness_json"],
    "steps": ["trajectory_id", "step_index", "image_sha256", "action", "prompt_json", "raw_output"],
    "tasks": ["task_id", "domain", "instruction"],
    "worlds": ["world_id", "persona_id", "scenario", "builder", "model", "prompt_hash"],
    "judgments": ["trajectory_id", "accepted", "judge", "accept_reason", "accept_policy"],
    "relabels": ["trajectory_id", "step_index"],
    "rl_tasks": ["task_id", "domain", "rank", "world_id"],
    "preference_pairs": ["pair_id", "task_id", "chosen_trajectory_id", "rejected_trajectory_id", "step_index",
                         "chosen_step_index", "chosen_action", "rejected_action", "failure_mode", "reason"],
}


@dataclass
class Source:
    run_id: str
    acceptance: str = "verifier"  # "judgments" | "verifier"
    trajectories: list[dict[str, Any]] = field(default_factory=list)  # accepted, in a stable order
    steps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # trajectory_id -> its steps, in order
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    worlds: dict[str, dict[str, Any]] = field(default_factory=dict)  # world_id -> persona_id, scenario, builder...
    judgments: dict[str, dict[str, Any]] = field(default_factory=dict)  # trajectory_id -> the accepting judgment
    tiers: dict[str, str] = field(default_factory=dict)  # trajectory_id -> quality tier (guiforge.judge.tiers)
    partial: list[dict[str, Any]] = field(default_factory=list)  # not accepted, tier partial, in a stable order
    valid: list[dict[str, Any]] = field(default_factory=list)  # every trajectory with an outcome (no fault)
    relabels: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    rl_tasks: list[dict[str, Any]] = field(default_factory=list)
    first_steps: dict[str, dict[str, Any]] = field(default_factory=dict)  # task_id -> step 0 of a trajectory
    first_harness: dict[str, dict[str, Any]] = field(default_factory=dict)  # task_id -> that trajectory's harness
    # step-level preference pairs (the preference_pairs stage), with both samples and their steps
    pairs: list[dict[str, Any]] = field(default_factory=list)
    pair_trajectories: dict[str, dict[str, Any]] = field(default_factory=dict)
    pair_steps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    raw_bytes: dict[str, int] = field(default_factory=dict)  # the lake's bytes per table (this run)
    envs: dict[str, str] = field(default_factory=dict)  # the run's declared environment kinds (envs:)
    checks: list[str] = field(default_factory=list)  # the run's declared check plugins (checks:)

    def exclude(self, gate: str, reason: str, subject_id: str, table: str, **details: Any) -> None:
        self.exclusions.append(exclusion_row(STAGE, gate, reason, subject_id, table, details))


def pick_run(lake: Lake, run_id: str | None, table: str = "trajectories",
             rows: str = "trajectories", missing: str = "run the pipeline's rollouts first") -> str:
    """The run to export: ``run_id`` if it wrote ``table``, else the only run that did.
    ``rows`` names the rows in the messages, ``missing`` says how to make some."""
    runs = lake.runs(table)
    if run_id:
        if run_id not in runs:
            raise GuiforgeError(f"{lake.root}: --run-id: run {run_id!r} has no {rows} "
                                f"(runs with {rows}: {', '.join(runs) or 'none'}); {missing}")
        return run_id
    if not runs:
        raise GuiforgeError(f"{lake.root}: no {rows} to export: {missing}")
    if len(runs) > 1:
        raise GuiforgeError(f"{lake.root}: several runs have {rows} ({', '.join(runs)}): choose one with --run-id")
    return runs[0]


def run_choices(lake: Lake, run_id: str) -> tuple[dict[str, str], list[str]]:
    """The environment kinds and check plugins the run declared (its latest provenance
    record: a resume may have declared them anew); none when no record was written."""
    records = provenance_records(lake, run_id)
    config = ((records[-1].get("pipeline") or {}).get("config") or {}) if records else {}
    envs = config.get("envs") or {}
    # env hosts (a list, or a mapping with ``hosts``) say where instances ran, not which kinds
    kinds = {} if isinstance(envs, list) or "hosts" in envs else dict(envs)
    return kinds, list(config.get("checks") or [])


def _rows(lake: Lake, table: str, run_id: str, columns: list[str] | None = None) -> list[dict[str, Any]]:
    return lake.read_table(table, run_id=run_id, columns=columns).to_pylist()


def _table_bytes(lake: Lake, table: str, run_id: str) -> int:
    return sum(lake.fs.size(f.path) for f in lake.shard_files(table, run_id))


def _trajectory_image_bytes(lake: Lake, run_id: str) -> int:
    """The run's frames less the grounding stage's screens (not frames of any step)."""
    grounding = sum(e.body["outputs"]["images"].get("bytes", 0) for e in all_entries(lake, run_id)
                    if "grounding" in e.body.get("outputs", {}) and "images" in e.body["outputs"])
    return max(_table_bytes(lake, "images", run_id) - grounding, 0)


def read_images(lake: Lake, hashes: set[str], run_id: str | None = None) -> dict[str, dict[str, Any]]:
    """sha256 -> {data, width, height, format} for the frames asked for (any run: a frame is
    stored once, by the first run that saw it)."""
    out: dict[str, dict[str, Any]] = {}
    if not hashes:
        return out
    wanted = list(hashes)
    for shard in lake.shard_files("images", None):
        table = lake.read_shard(shard.path)
        table = table.filter(pc.is_in(table.column("sha256"), value_set=pa.array(wanted)))
        for row in table.to_pylist():
            out.setdefault(row["sha256"], row)
        if len(out) == len(hashes):
            break
    return out


def _accepted(src: Source, trajectories: list[dict], judgments: list[dict]) -> list[dict]:
    if judgments:
        src.acceptance = "judgments"
        by_traj: dict[str, list[dict]] = defaultdict(list)
        for j in judgments:
            by_traj[j["trajectory_id"]].append(j)
        kept = []
        for t in trajectories:
            verdicts = by_traj.get(t["trajectory_id"])
            if is_fault(t):  # whatever a judgment says: a fault has no outcome to learn from
                src.exclude("acceptance", f"{failure_kind(t).replace('_', ' ')}: no outcome", t["trajectory_id"],
                            "trajectories")
            elif not verdicts:
                src.exclude("acceptance", "not judged", t["trajectory_id"], "trajectories")
            elif not all(j["accepted"] for j in verdicts):
                refused = next(j for j in verdicts if not j["accepted"])
                src.exclude("acceptance", f"not accepted by {refused['judge']}: "
                            f"{refused.get('accept_reason') or refused.get('accept_policy') or 'rejected'}",
                            t["trajectory_id"], "trajectories", judge=refused["judge"])
            else:
                src.judgments[t["trajectory_id"]] = verdicts[0]
                kept.append(t)
        return kept
    src.acceptance = "verifier"
    kept = []
    for t in trajectories:
        if is_fault(t):
            src.exclude("acceptance", f"{failure_kind(t).replace('_', ' ')}: no outcome", t["trajectory_id"],
                        "trajectories")
        elif not t["success"]:
            src.exclude("acceptance", f"verifier did not succeed (score {t['score']})", t["trajectory_id"],
                        "trajectories")
        else:
            kept.append(t)
    return kept


def load_source(lake: Lake, run_id: str | None = None) -> Source:
    run = pick_run(lake, run_id)
    src = Source(run)
    src.envs, src.checks = run_choices(lake, run)
    trajectories = sorted(_rows(lake, "trajectories", run), key=lambda t: (t["task_id"], t["sample_index"]))
    judgments = _rows(lake, "judgments", run) if "judgments" in lake.tables() else []
    accepted = _accepted(src, trajectories, judgments)

    src.tasks = {t["task_id"]: t for t in _rows(lake, "tasks", run)}
    src.worlds = {w["world_id"]: w for w in _rows(lake, "worlds", run, READS["worlds"])}
    steps_by: dict[str, list[dict]] = defaultdict(list)
    for s in _rows(lake, "steps", run):
        steps_by[s["trajectory_id"]].append(s)
    for v in steps_by.values():
        v.sort(key=lambda s: s["step_index"])
    src.trajectories = [t for t in accepted if t["task_id"] in src.tasks]
    for t in accepted:
        if t["task_id"] not in src.tasks:
            src.exclude("lineage", "task not in this run's tasks table", t["trajectory_id"], "trajectories")
    src.tiers = tiers_of(trajectories, accepted, judgments, steps_by)
    src.partial = [t for t in trajectories if src.tiers.get(t["trajectory_id"]) == "partial" and t["task_id"] in src.tasks]
    src.valid = [t for t in trajectories if not is_fault(t) and t["task_id"] in src.tasks]
    src.steps = {t["trajectory_id"]: steps_by.get(t["trajectory_id"], []) for t in src.valid}
    if "relabels" in lake.tables():
        src.relabels = {(r["trajectory_id"], r["step_index"]): r for r in _rows(lake, "relabels", run)}
    if "preference_pairs" in lake.tables():
        src.pairs = sorted(_rows(lake, "preference_pairs", run), key=lambda p: (p["task_id"], p["pair_id"]))
        ids = {p[k] for p in src.pairs for k in ("chosen_trajectory_id", "rejected_trajectory_id")}
        src.pair_trajectories = {t["trajectory_id"]: t for t in trajectories if t["trajectory_id"] in ids}
        src.pair_steps = {tid: steps_by.get(tid, []) for tid in ids}
    if "rl_tasks" in lake.tables():
        src.rl_tasks = sorted(_rows(lake, "rl_tasks", run), key=lambda r: (r["domain"] or "", r["rank"] or 0,
                                                                            r["task_id"]))
    # s0's frame for the RL prompts: step 0 of the task's first trajectory (s0 is rebuilt
    # the same way every reset, so any trajectory's first frame is the task's)
    by_task = {}
    for t in sorted(trajectories, key=is_fault):  # a fault's first frame may be its last sound one
        first = steps_by.get(t["trajectory_id"])
        if first and first[0]["step_index"] == 0 and t["task_id"] not in by_task:
            by_task[t["task_id"]] = first[0]
            src.first_harness[t["task_id"]] = harness_of(t)
    src.first_steps = by_task
    src.raw_bytes = {"steps": _table_bytes(lake, "steps", run), "images": _trajectory_image_bytes(lake, run)}
    return src


def tiers_of(trajectories: list[dict], accepted: list[dict], judgments: list[dict],
             steps: dict[str, list[dict]]) -> dict[str, str]:
    """trajectory_id -> quality tier: the judge stage's (``judgments.quality_tier``, the
    strictest judge's), else computed here with the export's acceptance (a lake without
    judgments, or with judgments from before tiers)."""
    written: dict[str, list[str | None]] = defaultdict(list)
    for j in judgments:
        written[j["trajectory_id"]].append(j.get("quality_tier"))
    if judgments and all(all(v) for v in written.values()):
        return {t["trajectory_id"]: worst(written.get(t["trajectory_id"], [])) or "reject" for t in trajectories}
    kept = {t["trajectory_id"] for t in accepted}
    scores: dict[str, float | None] = {}
    for j in judgments:
        if j.get("score") is not None:
            scores[j["trajectory_id"]] = min(j["score"], scores.get(j["trajectory_id"]) or 1.0)
    return assign_tiers(trajectories, {t["trajectory_id"]: t["trajectory_id"] in kept for t in trajectories},
                        scores, steps)


def task_world_json(lake: Lake, run_id: str, world_ids: set[str]) -> dict[str, str]:
    """world_id -> world_json for the worlds the RL pool needs (the reward rebuilds s0)."""
    if not world_ids:
        return {}
    table = lake.read_table("worlds", run_id=run_id, columns=["world_id", "world_json"])
    return {w: j for w, j in zip(table.column("world_id").to_pylist(), table.column("world_json").to_pylist(),
                                 strict=True) if w in world_ids}


def harness_of(trajectory: dict[str, Any]) -> dict[str, Any]:
    return json.loads(trajectory.get("harness_json") or "{}")
