"""resynthesize: diagnoses -> new task candidates aimed at the weaknesses, for the same
gates, rollouts and curation again. ``rounds: N`` unrolls the loop into named round stages
(orchestration/rounds.py); each task carries ``parent_task_id``, ``round`` and ``diagnosis_id``.
"""

from __future__ import annotations

import json

from pydantic import Field

from guiforge.curation.lakeread import fingerprints, read_rows, task_index
from guiforge.envs.kinds import kind_of
from guiforge.lake.exclusions import exclusion_row
from guiforge.presentation import Presentation
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import round_of, world_index
from guiforge.stages.skills import cards_from_rows
from guiforge.tasks.candidates import candidate_row, file_problems


class ResynthesizeConfig(StageConfig):
    rounds: int = Field(default=1, ge=1, le=5, description="resynthesis rounds (bounded)")
    repeat: list[str] | None = Field(
        default=None, description="stages each round repeats, in the pipeline's names; default: task_gates, "
                                  "rollouts, judge, rl_select, relabel, diagnose (those present)")
    tasks_per_round: int = Field(default=24, ge=1, le=100_000, description="new candidates per round at most")
    task_share: float = Field(default=0.25, ge=0, le=1,
                              description="share of the budget for single failed tasks (the rest: standouts)")
    harder_variants: bool = Field(default=True, description="every other new task: the smallest screen, a compact "
                                                            "theme and every distractor of its domain")


class ResynthesizeStage(Stage):
    kind = "resynthesize"
    config_model = ResynthesizeConfig
    description = "diagnosed weaknesses -> new task candidates (same skill elsewhere, sibling cards)"
    config: ResynthesizeConfig

    def inputs(self) -> list[str]:
        return ["diagnoses", "tasks", "worlds", "skills"]

    def outputs(self) -> list[str]:
        return ["task_candidates", "exclusions"]

    def plan(self, ctx) -> list[ShardPlan]:
        if not ctx.input_shards("diagnoses"):
            return []
        return [ShardPlan(key=f"resynthesize[round {round_of(ctx)}]", inputs=fingerprints(ctx, *self.inputs()))]

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.curation.resynthesis import aims, new_task_id, resynthesize

        round_ = round_of(ctx)
        diagnoses = read_rows(ctx, "diagnoses")
        tasks = task_index(ctx)
        cards = cards_from_rows(read_rows(ctx, "skills"))
        worlds = world_index(ctx)
        aim_list = aims(diagnoses, cards, tasks, self.config.tasks_per_round, self.config.task_share)
        chosen, unmet = resynthesize(aim_list, cards, worlds, tasks, ctx.seed, round_)
        out, excluded = [], []
        for aim, why in unmet:
            excluded.append(exclusion_row(self.name, "no_candidate", why, aim.diagnosis_id, "diagnoses",
                                          {"weakness": aim.weakness, "cards": aim.cards}))
        for candidate, aim in chosen[: self.config.tasks_per_round]:
            base_id = candidate.task_id
            candidate.task_id = new_task_id(base_id, round_)
            problems = file_problems(candidate, worlds[candidate.world_id])
            if problems:
                excluded.append(exclusion_row(self.name, "file", "; ".join(problems[:3]), candidate.task_id,
                                              "task_candidates", {"problems": problems, "diagnosis_id": aim.diagnosis_id}))
                continue
            # every other task of an aim is a harder variant: a smaller screen, denser, every distractor
            harder = len(out) % 2 == 1 and self.config.harder_variants
            if harder:
                before = Presentation.model_validate(candidate.presentation)
                after = kind_of(candidate.domain).harder_presentation(candidate.task_id, ctx.seed, candidate.variant)
                candidate.presentation = after.as_dict()
                candidate.max_steps += after.extra_steps() - before.extra_steps()  # every distractor costs steps
            row = candidate_row(candidate, {"file": "pass" if candidate.setup.get("files") else "n/a"})
            binding = json.loads(row["binding_json"])
            row.update({"parent_task_id": aim.parent_for(candidate.skill_id, tasks), "round": round_, "diagnosis_id": aim.diagnosis_id,
                        "binding_json": json.dumps({**binding, "base_task_id": base_id, "weakness": aim.weakness,
                                                    "harder": bool(harder)},
                                                   default=str)})
            out.append(row)
        return {"task_candidates": out, "exclusions": excluded}
