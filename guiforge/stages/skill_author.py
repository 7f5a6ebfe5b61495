"""skill_author: with a task-author model configured, propose new skill cards from
descriptions and a few example cards. Accepted proposals join the skills table and go
through the same gates as authored cards; rejected ones land in exclusions."""

from __future__ import annotations

import random

from pydantic import Field

from guiforge.lake.exclusions import exclusion_row
from guiforge.lake.fingerprint import fingerprint
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.skills import card_row


class SkillAuthorConfig(StageConfig):
    descriptions: list[str] = Field(default_factory=list, description="skills to propose, one per line")
    examples: int = Field(default=3, ge=1, le=20, description="example cards shown to the model")
    model_role: str = "task_author"
    max_attempts: int = Field(default=3, ge=1, le=10)


class SkillAuthorStage(Stage):
    kind = "skill_author"
    config_model = SkillAuthorConfig
    code = ("guiforge.stages.skill_author", "guiforge.stages.skills", "guiforge.authoring", "guiforge.skills",
            "guiforge.models")
    description = "model-proposed skill cards (no-op with the offline provider)"
    config: SkillAuthorConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def inputs(self) -> list[str]:
        return ["skills"]

    def outputs(self) -> list[str]:
        return ["skills", "exclusions"]

    def plan(self, ctx) -> list[ShardPlan]:
        if ctx.model(self.model_role).offline or not self.config.descriptions:
            return []  # the template writer does not invent cards
        shards = ctx.input_shards("skills", reader=self.name)
        return [ShardPlan(key="skill_author", params={"paths": [s.path for s in shards]},
                          inputs=[s.fingerprint for s in shards])]

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.authoring.skill_llm import propose_cards

        rows = [r for p in shard.params["paths"] for r in ctx.lake.read_shard(p).to_pylist()]
        rng = random.Random(fingerprint([ctx.seed, "skill_author"]))
        examples = [r["card_yaml"] for r in rng.sample(rows, min(self.config.examples, len(rows)))]
        taken = {r["skill_id"] for r in rows}
        proposals = propose_cards(ctx.client(self.model_role), self.config.descriptions, examples, taken,
                                  self.config.max_attempts)
        accepted, excluded = [], []
        for p in proposals:
            if p.card is None or p.card.id in {r["skill_id"] for r in accepted}:
                reason = p.error or f"duplicate proposal id {p.card.id if p.card else ''}"
                excluded.append(exclusion_row(self.name, "card_schema", reason, fingerprint(p.description, 12),
                                              "skills", {"description": p.description, "calls": p.calls}))
                continue
            accepted.append({**card_row(p.card, p.text, "model", p.model, p.prompt_hash), "author_calls": p.calls})
        return {"skills": accepted, "exclusions": excluded}
