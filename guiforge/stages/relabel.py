"""relabel: a new thought for every step of the accepted trajectories, checked against the
action it precedes (reason-then-act), plus what training reads: the reasoning/direct mode,
the SFT target text, the action's span in it, and Mage's one-query-per-spot rule.

An inconsistent thought (after one retry) and a repeated query stay in ``relabels`` with
their flags, and each has an ``exclusions`` row saying why SFT leaves it out; so does a
step whose relabeler call failed for good (``failed_check`` and gate ``model_failure``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from pydantic import Field

from guiforge.curation.consistency import ConsistencyFilter, DuplicateTargetFilter
from guiforge.curation.lakeread import (
    accepted_trajectories,
    fingerprints,
    images_by_sha,
    read_rows,
    task_index,
)
from guiforge.curation.progress import align
from guiforge.curation.relabeler import relabel_offline, relabel_with_model
from guiforge.curation.sft_target import assistant_text, choose_mode, mark_duplicates
from guiforge.curation.thoughts import StepContext, action_summary
from guiforge.failures import MODEL_FAILURE
from guiforge.faults import shard_faults, unit
from guiforge.filters import Drop, Filter, apply_filters
from guiforge.lake.exclusions import exclusion_row
from guiforge.models.loop import run
from guiforge.stages.base import ShardPlan, Stage, StageConfig


class RelabelConfig(StageConfig):
    accepted_from: Literal["judgments", "verifier"] = Field(
        default="judgments", description="SFT trajectories: the judge's acceptance, or the verifier's success")
    reasoning_ratio: float = Field(default=0.5, ge=0, le=1, description="share of steps trained with their thought")
    tasks_per_shard: int = Field(default=8, ge=1, le=10_000)
    model_role: str = "relabeler"
    concurrency: int = Field(default=8, ge=1, le=256, description="model relabels in flight per shard")


class RelabelerFailed(Filter):
    """A step whose relabeler call failed for good has no thought to train on."""

    gate = MODEL_FAILURE

    def check(self, row) -> Drop | None:
        if row.get("failed_check") != MODEL_FAILURE:
            return None
        return Drop(row.get("failed_reason") or "model failure", {"step_index": row.get("step_index"),
                                                                  "domain": row.get("domain")})


class RelabelStage(Stage):
    kind = "relabel"
    config_model = RelabelConfig
    description = "relabel thoughts of accepted trajectories; reason-then-act filter; SFT targets"
    config: RelabelConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def inputs(self) -> list[str]:
        tables = ["trajectories", "steps", "tasks", "images"]
        return ["judgments", *tables] if self.config.accepted_from == "judgments" else tables

    def outputs(self) -> list[str]:
        return ["relabels", "exclusions"]

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        """Steps the relabeler model failed on, out of the steps relabelled."""
        rows = outputs.get("relabels") or []
        failed = sum(r.get("failed_check") == MODEL_FAILURE for r in rows)
        return ({MODEL_FAILURE: failed} if failed else {}), len(rows)

    def plan(self, ctx) -> list[ShardPlan]:
        accepted = accepted_trajectories(ctx, self.config.accepted_from)
        by_task: dict[str, list[str]] = {}
        for r in read_rows(ctx, "trajectories", ["trajectory_id", "task_id"]):
            if r["trajectory_id"] in accepted:
                by_task.setdefault(r["task_id"], []).append(r["trajectory_id"])
        tasks = sorted(by_task)
        inputs = fingerprints(ctx, *[t for t in self.inputs() if t != "images"])
        size = self.config.tasks_per_shard
        return [ShardPlan(key=f"relabel[{tasks[i]}+{len(tasks[i:i + size])}]",
                          params={"trajectories": sorted(t for task in tasks[i:i + size] for t in by_task[task])},
                          inputs=inputs)
                for i in range(0, len(tasks), size)]

    def run(self, ctx, shard: ShardPlan):
        with shard_faults(ctx, self.name, shard.key):
            return self._run(ctx, shard)

    def _run(self, ctx, shard: ShardPlan):
        wanted = set(shard.params["trajectories"])
        trajectories = {r["trajectory_id"]: r for r in read_rows(ctx, "trajectories", None, ("trajectory_id", wanted))}
        steps = read_rows(ctx, "steps", None, ("trajectory_id", wanted))
        steps.sort(key=lambda s: (s["trajectory_id"], s["step_index"]))
        tasks = ctx.resource(f"task-index:{self.name}", lambda: task_index(ctx))
        excluded, items = [], []
        history: dict[str, list[str]] = {}
        progress = self._progress(steps, trajectories, tasks)
        for s in steps:
            key = f"{s['trajectory_id']}:{s['step_index']}"
            if s["action"] is None:
                excluded.append(exclusion_row(self.name, "no_action", s["error"] or "the step has no parsed action",
                                              key, "steps"))
                continue
            trajectory = trajectories[s["trajectory_id"]]
            task = tasks[trajectory["task_id"]]
            target = json.loads(s["target_json"]) if s.get("target_json") else None
            reference, at = progress[key]
            step_ctx = StepContext(task["instruction"], s["step_index"], trajectory["n_steps"],
                                   s["action"], target, s["image_width"], s["image_height"],
                                   tuple(history.get(s["trajectory_id"], [])),
                                   json.loads(s["screen_json"]) if s.get("screen_json") else None,
                                   reference[at] if at < len(reference) else None, tuple(reference[at + 1:]),
                                   task.get("domain"))
            history.setdefault(s["trajectory_id"], []).append(action_summary(s["action"], target))
            items.append((s, step_ctx, key))

        model = ctx.model(self.model_role)
        if model.offline:
            results = [relabel_offline(c, f"{ctx.seed}:{s['trajectory_id']}") for s, c, _ in items]
        else:
            results = self._with_model(ctx, items, images_by_sha, relabel_with_model)

        rows = []
        for (s, step_ctx, key), r in zip(items, results, strict=True):
            mode = choose_mode(s["trajectory_id"], s["step_index"], self.config.reasoning_ratio, ctx.seed)
            text, start, end = assistant_text(mode, r.thought, s["action"])
            rows.append({
                "trajectory_id": s["trajectory_id"], "step_index": s["step_index"], "thought": r.thought,
                "original_thought": s["thought"], "consistent": r.consistent, "failed_check": r.failed_check,
                "failed_reason": r.failed_reason, "attempts": r.attempts, "mode": mode, "assistant_text": text,
                "action_span_start": start, "action_span_end": end, "relabeler_model": r.model,
                "prompt_hash": r.prompt_hash, "action": s["action"], "target": step_ctx.target,
                "image_sha256": s["image_sha256"], "step_key": key,
                "domain": tasks[trajectories[s["trajectory_id"]]["task_id"]].get("domain"),
            })
        mark_duplicates(rows)  # within a shard: every sample of a task shares its first frames
        dropped = apply_filters([RelabelerFailed(), ConsistencyFilter(), DuplicateTargetFilter()], rows,
                                stage=self.name, subject="step_key", subject_table="relabels")
        keep = ("trajectory_id", "step_index", "thought", "original_thought", "consistent", "failed_check",
                "attempts", "mode", "assistant_text", "action_span_start", "action_span_end", "duplicate_target",
                "relabeler_model", "prompt_hash")
        return {"relabels": [{k: r.get(k) for k in keep} for r in rows],
                "exclusions": excluded + dropped.exclusions}

    @staticmethod
    def _progress(steps: list[dict], trajectories: dict, tasks: dict) -> dict[str, tuple[list, int]]:
        """Per step key: its task's reference and the index of the reference step it carries
        out (curation/progress.py), for what the thought says is still needed."""
        out: dict[str, tuple[list, int]] = {}
        by_trajectory: dict[str, list[dict]] = {}
        for s in steps:
            if s["action"] is not None:
                by_trajectory.setdefault(s["trajectory_id"], []).append(s)
        for trajectory_id, rows in by_trajectory.items():
            raw = tasks[trajectories[trajectory_id]["task_id"]].get("reference_json")
            reference = json.loads(raw) if raw else []
            reference = reference if isinstance(reference, list) else []
            at = align(reference, [(r["action"], json.loads(r["target_json"]) if r.get("target_json") else None)
                                   for r in rows])
            out.update({f"{r['trajectory_id']}:{r['step_index']}": (reference, i) for r, i in zip(rows, at, strict=True)})
        return out

    def _with_model(self, ctx, items, images_by_sha, relabel_with_model) -> list:

        client = ctx.client(self.model_role)
        images = images_by_sha(ctx, {s["image_sha256"] for s, _, _ in items if s["image_sha256"]})
        gate = asyncio.Semaphore(self.config.concurrency)

        async def one(s, step_ctx):
            data, media = images.get(s["image_sha256"], (None, "image/png"))
            async with gate:
                with unit(s["trajectory_id"], s["step_index"]):  # for an injected fault (guiforge.faults)
                    return await relabel_with_model(client, step_ctx, data, media)

        async def everything():
            return await asyncio.gather(*(one(s, c) for s, c, _ in items))

        return run(everything())
