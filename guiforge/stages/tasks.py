"""task_candidates: instantiate the skill cards on every world (several tasks per world,
balanced across domains), render instruction, setup, rubric and reference, and run the
file gate on the files each task's workspace will hold."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from guiforge.lake.exclusions import exclusion_row
from guiforge.plugins import PluginRef
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import load_worlds
from guiforge.stages.skills import cards_from_rows
from guiforge.tasks.candidates import candidate_row, file_problems

DOMAINS = ("web", "mobile", "desktop", "tools")


class TaskCandidatesConfig(StageConfig):
    per_world: int = Field(default=10, ge=1, le=200, description="tasks per world at most")
    domains: list[Annotated[str, PluginRef("guiforge.envs")]] = Field(
        default_factory=lambda: list(DOMAINS), description="environment kinds to make tasks for")
    paraphrase: bool = Field(default=True, description="with a task-author model configured, it rewrites each "
                                                       "instruction in a user's words (kept only if it passes the gates)")
    model_role: str = "task_author"


class TaskCandidatesStage(Stage):
    kind = "task_candidates"
    config_model = TaskCandidatesConfig
    code = ("guiforge.stages.tasks", "guiforge.stages.skills", "guiforge.stages.shared", "guiforge.skills", "guiforge.preparers",
            "guiforge.gates", "guiforge.worlds", "guiforge.tasks", "guiforge.errors")
    description = "skill cards x worlds -> rendered task candidates, file gate"
    config: TaskCandidatesConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def inputs(self) -> list[str]:
        return ["worlds", "skills"]

    def outputs(self) -> list[str]:
        return ["task_candidates", "exclusions"]

    def plan(self, ctx) -> list[ShardPlan]:
        skills = ctx.input_shards("skills")
        return [ShardPlan(key=f"tasks<{w.fingerprint}", params={"worlds": w.path, "skills": [s.path for s in skills]},
                          inputs=[w.fingerprint, *(s.fingerprint for s in skills)])
                for w in ctx.input_shards("worlds")]

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.skills.instantiate import BindingError, instantiate, select_balanced

        rows = [r for p in shard.params["skills"] for r in ctx.lake.read_shard(p).to_pylist()]
        cards = [c for _, c in sorted(cards_from_rows(rows).items())
                 if set(c.domains) & set(self.config.domains)]
        # Tasks from model-proposed cards carry the model and prompt that wrote the card.
        authors = {r["skill_id"]: r for r in rows if r.get("source") == "model"}
        out, excluded = [], []
        for world_id, world in sorted(load_worlds(ctx, shard.params["worlds"]).items()):
            pool = []
            for card in cards:
                try:
                    pool.extend(c for c in instantiate(card, world, ctx.seed) if c.domain in self.config.domains)
                except BindingError as exc:
                    excluded.append(exclusion_row(self.name, "render", str(exc), f"{world_id}:{card.id}",
                                                  "task_candidates"))
            kept = []
            for candidate in select_balanced(pool, self.config.per_world, f"{ctx.seed}:{world_id}"):
                problems = file_problems(candidate, world)
                if problems:
                    excluded.append(exclusion_row(self.name, "file", "; ".join(problems[:3]), candidate.task_id,
                                                  "task_candidates", {"problems": problems, "skill_id": candidate.skill_id}))
                    continue
                kept.append(candidate)
            excluded.extend(self.paraphrase(ctx, kept, world))
            out.extend(candidate_row(c, {"file": "pass" if c.setup.get("files") else "n/a"}, authors.get(c.skill_id))
                       for c in kept)
        return {"task_candidates": out, "exclusions": excluded}

    def paraphrase(self, ctx, candidates: list, world) -> list[dict]:
        """With a task-author model: its rewording replaces each instruction that it keeps
        gate-clean; a rejected rewording is an exclusion (the task keeps its template text)."""
        if not (self.config.paraphrase and candidates) or ctx.model(self.model_role).offline:
            return []
        # heavy: faker, jinja2, imported when this runs
        from guiforge.authoring.paraphrase import paraphrase_all

        world_text = world.model_dump_json()
        results = paraphrase_all(ctx.client(self.model_role), [(c.instruction, c.leaks, world_text) for c in candidates])
        rejected = []
        for c, p in zip(candidates, results, strict=True):
            c.paraphrase = {"model": p.model, "prompt_hash": p.prompt_hash, "template": c.instruction,
                            "accepted": p.text is not None}
            if p.text is None:
                rejected.append(exclusion_row(self.name, "paraphrase", p.reason, c.task_id, "task_candidates",
                                              {"skill_id": c.skill_id, "instruction": c.instruction}))
                continue
            c.instruction, c.voice = p.text, "model"
        return rejected
