"""The default run's worlds without a lake: personas of one seed, each paired with a scenario
that suits its occupation the way the worlds stage pairs them (the fitting scenario used
least in its shard of personas, in rotation). ``guiforge stats --realism --sample N`` and the
realism tests measure these, so a figure about "the default 64 worlds" needs no pipeline run."""

from __future__ import annotations

from guiforge.errors import GuiforgeError
from guiforge.lake.fingerprint import fingerprint
from guiforge.worlds.dsl import Scenario
from guiforge.worlds.model import Persona, World
from guiforge.worlds.personas import build_personas
from guiforge.worlds.scenarios import load_scenarios, suitable_scenarios
from guiforge.worlds.template_builder import build_world

SHARD = 8  # the default pipeline's personas.shard_size: the rotation restarts per shard


def pair_scenarios(personas: list[Persona], scenarios: dict[str, Scenario],
                   offset: int = 0) -> list[tuple[Persona, Scenario]]:  # fmt: skip
    """One scenario per persona: among those that suit it, the one this batch used least,
    ties broken by a rotation that starts at ``offset``."""
    used = dict.fromkeys(scenarios, 0)
    out = []
    for i, persona in enumerate(personas):
        names = [s.id for s in suitable_scenarios(persona, scenarios)] or list(scenarios)
        turn = offset + i
        name = min(names, key=lambda n: (used[n], (names.index(n) - turn) % len(names)))
        used[name] += 1
        out.append((persona, scenarios[name]))
    return out


def sample_worlds(count: int = 64, seed: int = 7) -> list[World]:
    """``count`` worlds as the default pipeline (personas seed ``seed``, one world each) builds
    them offline, with their everyday life; a world whose template cannot be built for its
    persona is left out, as the stage excludes it."""
    scenarios = dict(sorted(load_scenarios().items()))
    personas = build_personas(count, seed)
    worlds = []
    for start in range(0, count, SHARD):
        for persona, scenario in pair_scenarios(personas[start:start + SHARD], scenarios, start):
            world_id = "wld_" + fingerprint([seed, persona.persona_id, scenario.id, 0], 10)
            try:
                world = build_world(persona, scenario, seed=int(fingerprint([seed, world_id], 8), 16))
            except GuiforgeError:  # the stage records these as exclusions; a sample leaves them out
                continue
            worlds.append(world.model_copy(update={"world_id": world_id}))
    return worlds
