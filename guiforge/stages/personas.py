"""personas: Faker-based people the worlds are built around (offline, deterministic)."""

from __future__ import annotations

from pydantic import Field

from guiforge.stages.base import ShardPlan, Stage, StageConfig


class PersonasConfig(StageConfig):
    count: int = Field(default=64, ge=0, le=1_000_000, description="personas to build")
    shard_size: int = Field(default=32, ge=1, le=100_000, description="personas per shard")


class PersonasStage(Stage):
    kind = "personas"
    config_model = PersonasConfig
    code = ("guiforge.stages.personas", "guiforge.worlds")
    description = "Faker personas: name, locale, occupation, traits, goals"
    config: PersonasConfig

    def data_files(self):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.worlds.seeds import data_dir

        return [data_dir() / "persona_seeds.yaml"]

    def inputs(self) -> list[str]:
        return []

    def outputs(self) -> list[str]:
        return ["personas"]

    def plan(self, ctx) -> list[ShardPlan]:
        n, size = self.config.count, self.config.shard_size
        return [ShardPlan(key=f"personas[{a}:{min(a + size, n)}]", params={"start": a, "stop": min(a + size, n)})
                for a in range(0, n, size)]

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.worlds.personas import build_personas

        start, stop = shard.params["start"], shard.params["stop"]
        people = build_personas(stop - start, seed=ctx.seed, start=start)
        return {"personas": [{**p.model_dump(), "builder": "faker", "model": None, "seed": ctx.seed}
                             for p in people]}
