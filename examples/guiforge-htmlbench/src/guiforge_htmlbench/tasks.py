"""A task-source stage: unit-conversion tasks with their own setup and no world. It writes
guiforge's ``tasks`` table directly (no skill card, no world, no gate)."""

from __future__ import annotations

import json
import random

from pydantic import Field

from guiforge.lake.fingerprint import fingerprint
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge_htmlbench import UNITS, convert


class HtmlBenchTasksConfig(StageConfig):
    count: int = Field(default=4, ge=1, le=1000, description="tasks to make")
    tolerance: float = Field(default=0.2, gt=0, le=1, description="relative error at which the reward reaches 0")


class HtmlBenchTasks(Stage):
    kind = "htmlbench_tasks"
    config_model = HtmlBenchTasksConfig
    description = "unit-conversion tasks on the htmlbench pages (no world)"
    code = ("guiforge_htmlbench",)  # this package's files enter the shard fingerprint
    config: HtmlBenchTasksConfig

    def inputs(self) -> list[str]:
        return []

    def outputs(self) -> list[str]:
        return ["tasks"]

    def plan(self, ctx) -> list[ShardPlan]:
        return [ShardPlan(key="htmlbench", params={"count": self.config.count})]

    def run(self, ctx, shard: ShardPlan) -> dict:
        rng = random.Random(ctx.seed)
        pairs = sorted(UNITS)
        rows = []
        for i in range(self.config.count):
            source, target = pairs[i % len(pairs)]
            amount = rng.randint(2, 250)
            answer = convert(amount, source, target)
            task_id = "hb_" + fingerprint([ctx.seed, i, amount, source, target], 12)
            setup = {"page": "convert.html", "query": {"amount": amount, "from": source, "to": target},
                     "answer": answer, "tolerance": self.config.tolerance}  # kept: evaluate reads them
            rubric = [{"id": "submitted", "description": "the form was submitted",
                       "check": {"fn": "htmlbench_submitted"}},
                      {"id": "close", "description": "the answer is close to the conversion", "required": False,
                       "check": {"fn": "htmlbench_close", "target": answer, "tolerance": self.config.tolerance}}]
            rows.append({
                "task_id": task_id, "world_id": None, "skill_id": "htmlbench.convert", "skill_version": "1",
                "domain": "htmlbench", "variant": None, "apps": [],
                "instruction": f"Convert {amount} {source} to {target} with the converter and submit the answer.",
                "setup_json": json.dumps(setup), "rubric_json": json.dumps(rubric), "reference_json": "[]",
                "answer": str(answer), "feasible": True, "difficulty": "easy", "max_steps": 6, "round": 0,
            })
        return {"tasks": rows}
