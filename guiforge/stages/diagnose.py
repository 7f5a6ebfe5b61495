"""diagnose: why samples fail, at MAI-Gym's three levels (action, trajectory, knowledge).

Per task, each failed sample is compared with a successful one of the same task; a model
diagnoser (when configured) receives the two trajectories side by side, the offline one is
a rule-based differ. One more shard aggregates over every task: failure rates per skill,
app, domain, task length, action type, target size and typed script, with the standouts.
"""

from __future__ import annotations

from pydantic import Field

from guiforge.curation.knowledge import Thresholds, rates, solved, standouts
from guiforge.failures import MODEL_FAILURE, valid_sample
from guiforge.faults import shard_faults
from guiforge.lake.exclusions import exclusion_row
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import round_of


class DiagnoseConfig(StageConfig):
    tasks_per_shard: int = Field(default=16, ge=1, le=10_000)
    small_target_px: int = Field(default=24, ge=1, le=400, description="a target smaller than this is small")
    long_task_steps: int = Field(default=10, ge=1, le=200, description="a task past this many steps is long")
    z: float = Field(default=3.0, gt=0, description="how far above the rest a group's failure rate must stand")
    min_samples: int = Field(default=8, ge=1, description="samples a group needs before it can stand out")
    model_role: str = "diagnoser"
    concurrency: int = Field(default=8, ge=1, le=256)


class DiagnoseStage(Stage):
    kind = "diagnose"
    config_model = DiagnoseConfig
    description = "failed vs successful samples: action, trajectory and knowledge-level diagnoses"
    config: DiagnoseConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def inputs(self) -> list[str]:
        return ["trajectories", "steps", "tasks"]

    def outputs(self) -> list[str]:
        return ["diagnoses", "exclusions"]  # exclusions: the pairs a model diagnoser failed on

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        """Model failures of the diagnoser, out of the rows the shard wrote."""
        excluded = outputs.get("exclusions") or []
        return ({"model_failure": len(excluded)} if excluded else {}), len(outputs.get("diagnoses") or []) + len(excluded)

    def plan(self, ctx) -> list[ShardPlan]:
        # heavy: numpy, imported when this runs
        from guiforge.curation.lakeread import fingerprints, read_rows

        tasks = sorted({r["task_id"] for r in read_rows(ctx, "trajectories", ["task_id"])})
        inputs = fingerprints(ctx, *self.inputs())
        size = self.config.tasks_per_shard
        plans = [ShardPlan(key=f"diagnose[{tasks[i]}+{len(tasks[i:i + size])}]", params={"tasks": tasks[i:i + size]},
                           inputs=inputs) for i in range(0, len(tasks), size)]
        if tasks:
            plans.append(ShardPlan(key="diagnose[knowledge]", params={"knowledge": True}, inputs=inputs))
        return plans

    def _samples(self, ctx, task_ids: set[str] | None) -> tuple[list, dict]:
        # heavy: numpy, imported when this runs
        from guiforge.curation.diagnosis import task_samples

        # heavy: numpy, imported when this runs
        from guiforge.curation.lakeread import read_rows, task_index

        where = ("task_id", task_ids) if task_ids is not None else None
        trajectories = [t for t in read_rows(ctx, "trajectories", None, where) if valid_sample(t)]
        steps = read_rows(ctx, "steps", None, ("trajectory_id", {t["trajectory_id"] for t in trajectories}))
        tasks = ctx.resource(f"task-index:{self.name}", lambda: task_index(ctx))
        return task_samples(trajectories, steps, tasks), tasks

    def run(self, ctx, shard: ShardPlan):
        with shard_faults(ctx, self.name, shard.key):
            return self._run(ctx, shard)

    def _run(self, ctx, shard: ShardPlan):
        # heavy: numpy, imported when this runs
        from guiforge.curation.diagnosis import analyse_task, knowledge_rows

        c = self.config
        round_ = round_of(ctx)
        knowledge = shard.params.get("knowledge", False)
        samples, tasks = self._samples(ctx, None if knowledge else set(shard.params["tasks"]))
        model = ctx.model(self.model_role)
        name = "offline:differ" if model.offline or knowledge else f"{model.provider}:{model.model}"
        rows, facts = [], []
        for ts in samples:
            task_rows, task_facts = analyse_task(ts, c.small_target_px, c.long_task_steps, name, round_)
            rows.extend(task_rows)
            facts.extend(task_facts)
        if knowledge:
            th = Thresholds(z=c.z, min_samples=c.min_samples)
            counted, unsolved = solved(facts)
            return {"diagnoses": knowledge_rows(standouts(counted, th), rates(facts), tasks, name, round_, unsolved)}
        excluded = []
        if not model.offline:
            # heavy: the model path (asyncio client loop, fsspec), only with a model configured
            from guiforge.curation.diagnoser import diagnose_with_model

            rows, failed = diagnose_with_model(ctx.client(self.model_role), samples, rows, round_, c.concurrency)
            excluded = [exclusion_row(self.name, MODEL_FAILURE, f"model failure: {error}", trajectory["trajectory_id"],
                                      "trajectories", {"task_id": task["task_id"], "domain": task.get("domain"),
                                                       "skill_id": task.get("skill_id")})
                        for task, trajectory, error in failed]
        return {"diagnoses": rows, "exclusions": excluded}
