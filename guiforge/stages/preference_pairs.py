"""preference_pairs: step-level preference pairs from the k samples of each task.

Where a failed and a successful sample of one task share a prefix and then depart (the
diagnose stage's first departure), the successful sample's action is chosen and the failed
one's rejected, in the failed sample's context at that step (curation/pairs.py). Every failed
sample of a task with mixed outcomes that gives no pair is an exclusion with its reason. The
export writes the pairs for TRL's DPO trainer and LLaMA-Factory's pairwise format.
"""

from __future__ import annotations

from pydantic import Field

from guiforge.curation.diagnosis import task_samples
from guiforge.curation.lakeread import fingerprints, read_rows, task_index
from guiforge.curation.pairs import task_pairs
from guiforge.export.select import mistake_turns
from guiforge.failures import valid_sample
from guiforge.lake.exclusions import exclusion_row
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import round_of

# what the differ compares (curation.differ.Step): never the prompts or screen facts
STEP_COLUMNS = ["trajectory_id", "step_index", "image_sha256", "image_width", "image_height", "action", "error",
                "target_json"]


class PreferencePairsConfig(StageConfig):
    tasks_per_shard: int = Field(default=32, ge=1, le=10_000)


class PreferencePairsStage(Stage):
    kind = "preference_pairs"
    config_model = PreferencePairsConfig
    description = "step-level preference pairs: a successful sample's action against a failed one's where they depart"
    config: PreferencePairsConfig

    def inputs(self) -> list[str]:
        return ["trajectories", "steps", "tasks"]

    def outputs(self) -> list[str]:
        return ["preference_pairs", "exclusions"]  # exclusions: failed samples of mixed tasks with no pair

    def reads(self) -> dict[str, list[str]]:
        return {"trajectories": ["trajectory_id", "task_id", "sample_index", "success", "score",
                                 "teacher_events_json"],
                "steps": STEP_COLUMNS,
                "tasks": ["task_id", "domain", "skill_id"]}

    def plan(self, ctx) -> list[ShardPlan]:
        tasks = sorted({r["task_id"] for r in read_rows(ctx, "trajectories", ["task_id"])})
        inputs = fingerprints(ctx, *self.inputs())
        size = self.config.tasks_per_shard
        return [ShardPlan(key=f"preference_pairs[{tasks[i]}+{len(tasks[i:i + size])}]",
                          params={"tasks": tasks[i:i + size]}, inputs=inputs) for i in range(0, len(tasks), size)]

    def run(self, ctx, shard: ShardPlan):
        wanted = set(shard.params["tasks"])
        trajectories = [t for t in read_rows(ctx, "trajectories", None, ("task_id", wanted)) if valid_sample(t)]
        # only tasks with both outcomes can give a pair: read no steps for the others
        outcomes: dict[str, set[bool]] = {}
        for t in trajectories:
            outcomes.setdefault(t["task_id"], set()).add(bool(t["success"]))
        trajectories = [t for t in trajectories if len(outcomes[t["task_id"]]) == 2]
        steps = read_rows(ctx, "steps", STEP_COLUMNS, ("trajectory_id", {t["trajectory_id"] for t in trajectories}))
        tasks = ctx.resource(f"task-index:{self.name}", lambda: task_index(ctx))
        mistakes = {t["trajectory_id"]: set(mistake_turns(t)) for t in trajectories}
        pairs, excluded = [], []
        for ts in task_samples(trajectories, steps, tasks):
            rows, none = task_pairs(ts, mistakes, round_of(ctx))
            pairs += rows
            excluded += [exclusion_row(self.name, "no_pair", n.reason, n.trajectory_id, "trajectories",
                                       {"task_id": ts.task["task_id"], "domain": ts.task.get("domain"),
                                        "skill_id": ts.task.get("skill_id")}) for n in none]
        return {"preference_pairs": pairs, "exclusions": excluded}
