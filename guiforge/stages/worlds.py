"""worlds: one or more worlds per persona, from scenario templates (offline) or an LLM,
each checked for internal consistency; failures go to exclusions with the reason."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field

from guiforge.errors import GuiforgeError
from guiforge.lake.exclusions import exclusion_row
from guiforge.lake.fingerprint import fingerprint
from guiforge.paths import SCENARIOS_DIR
from guiforge.stages.base import ShardPlan, Stage, StageConfig


def _dir_state(directory: Path) -> tuple:
    return (str(directory), tuple(sorted((p.name, p.stat().st_mtime_ns) for p in directory.glob("*.yaml"))))


@lru_cache(maxsize=4)
def _scenarios(state: tuple) -> dict:
    """Scenarios parsed once per process (and again only when a file changes)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.scenarios import load_scenarios

    return load_scenarios(Path(state[0]))


class WorldsConfig(StageConfig):
    scenarios: list[str] | Literal["all"] = "all"
    per_persona: int = Field(default=1, ge=1, le=50, description="worlds per persona")
    model_role: str = "world_builder"
    consistency_check: bool = True
    background: bool = Field(default=True, description="add everyday life (people, mail, calendar, payments) around the scenario")


def world_row(world, builder: str, model: str | None, prompt_hash: str | None, seed: int) -> dict:
    return {
        "world_id": world.world_id, "persona_id": world.persona_id, "scenario": world.scenario,
        "title": world.title, "base_date": world.base_date.isoformat(), "currency": world.currency,
        "n_contacts": len(world.contacts), "n_events": len(world.events), "n_emails": len(world.emails),
        "n_documents": len(world.documents), "n_facts": len(world.facts),
        "n_transactions": len(world.transactions), "n_chats": len(world.chats),
        "world_json": world.model_dump_json(), "builder": builder, "model": model,
        "prompt_hash": prompt_hash, "seed": seed,
    }


class WorldsStage(Stage):
    kind = "worlds"
    config_model = WorldsConfig
    code = ("guiforge.stages.worlds", "guiforge.worlds", "guiforge.authoring", "guiforge.models", "guiforge.errors")
    description = "scenario worlds per persona: contacts, events, facts, emails, documents"
    config: WorldsConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def preflight(self) -> None:
        self.scenarios()  # every template loads and checks; the names asked for exist

    def data_files(self) -> list[Path]:
        data = SCENARIOS_DIR.parent  # the seeds and the pools everyday life is drawn from
        return sorted(SCENARIOS_DIR.glob("*.yaml")) + [data / f for f in (
            "persona_seeds.yaml", "background.yaml", "life_work.yaml", "life_home.yaml", "wages.yaml")]

    def inputs(self) -> list[str]:
        return ["personas"]

    def outputs(self) -> list[str]:
        return ["worlds", "exclusions"]

    def scenarios(self) -> dict:
        available = _scenarios(_dir_state(SCENARIOS_DIR))
        if self.config.scenarios == "all":
            return dict(sorted(available.items()))
        missing = [s for s in self.config.scenarios if s not in available]
        if missing:
            raise GuiforgeError(
                f"stages.{self.name}.scenarios: unknown scenario(s) {missing}; available: {', '.join(sorted(available))}"
            )
        return {s: available[s] for s in self.config.scenarios}

    def plan(self, ctx) -> list[ShardPlan]:
        plans, offset = [], 0
        for shard in ctx.input_shards("personas"):
            # offset makes the scenario rotation global, so scenarios stay balanced.
            plans.append(ShardPlan(key=f"worlds<{shard.fingerprint}", params={"path": shard.path, "offset": offset},
                                   inputs=[shard.fingerprint]))
            offset += shard.rows
        return plans

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.worlds.consistency import check_world
        from guiforge.worlds.model import Persona
        from guiforge.worlds.scenarios import suitable_scenarios

        scenarios = self.scenarios()
        personas = ctx.lake.read_shard(shard.params["path"]).to_pylist()
        jobs = []
        used = dict.fromkeys(scenarios, 0)
        for i, row in enumerate(personas):
            persona = Persona.model_validate({k: row[k] for k in Persona.model_fields if k in row})
            # only scenarios that fit the occupation (a bakery owner does not teach a class)
            names = [s.id for s in suitable_scenarios(persona, scenarios)] or list(scenarios)
            for j in range(self.config.per_persona):
                # the fitting scenario this shard has used least, in rotation order: balance
                turn = shard.params["offset"] + i + j * len(personas)
                name = min(names, key=lambda n: (used[n], (names.index(n) - turn) % len(names)))
                used[name] += 1
                world_id = "wld_" + fingerprint([ctx.seed, persona.persona_id, name, j], 10)
                jobs.append((persona, scenarios[name], world_id))

        model = ctx.model(self.model_role)
        if model.offline:
            built = self._build_offline(ctx, jobs)
        else:
            # heavy: faker, jinja2, only with a model configured
            from guiforge.authoring.world_llm import build_worlds_llm

            built = build_worlds_llm(ctx.client(self.model_role), jobs, ctx.seed)
            if self.config.background:  # the model writes the scenario; everyday life is added
                from guiforge.worlds.background import with_background

                for item in built:
                    if item.world is not None:
                        item.world = with_background(item.world)

        worlds, excluded = [], []
        for item in built:
            if item.world is None:
                excluded.append(exclusion_row(self.name, item.gate, item.error, item.world_id, "worlds",
                                              {"attempts": item.attempts}))
                continue
            problems = check_world(item.world) if self.config.consistency_check else []
            if problems:
                excluded.append(exclusion_row(self.name, "consistency", "; ".join(str(p) for p in problems[:5]),
                                              item.world_id, "worlds", {"problems": [str(p) for p in problems],
                                                                        "rules": sorted({p.code for p in problems})}))
                continue
            worlds.append(world_row(item.world, item.builder, item.model, item.prompt_hash, ctx.seed))
        return {"worlds": worlds, "exclusions": excluded}

    def _build_offline(self, ctx, jobs):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.authoring.world_llm import BuiltWorld
        from guiforge.worlds.template_builder import build_world

        out = []
        for persona, scenario, world_id in jobs:
            try:
                world = build_world(persona, scenario, seed=int(fingerprint([ctx.seed, world_id], 8), 16),
                                    background=self.config.background)
            except GuiforgeError as exc:  # a template that cannot build for this persona: excluded, not fatal
                out.append(BuiltWorld(world_id, None, "template", None, None, error=str(exc), gate="build"))
                continue
            out.append(BuiltWorld(world_id, world.model_copy(update={"world_id": world_id}), "template", None, None))
        return out
