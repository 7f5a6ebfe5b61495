"""Personas and worlds: who the data is about and everything their apps and files hold.

- ``build_personas(count, seed, start=0)``: offline Faker personas, sharding-stable.
- ``load_scenarios()`` / ``load_scenario(path)``: the YAML scenario templates (data/scenarios).
- ``build_world(persona, scenario, seed)``: the offline template world builder.
- ``check_world(world)``: consistency problems of any world (template- or LLM-built).
"""

from guiforge.worlds.consistency import Problem, check_world
from guiforge.worlds.dsl import Scenario
from guiforge.worlds.model import Persona, World
from guiforge.worlds.personas import build_personas
from guiforge.worlds.scenarios import load_scenario, load_scenarios, suitable_scenarios
from guiforge.worlds.template_builder import build_world

__all__ = [
    "Persona",
    "Problem",
    "Scenario",
    "World",
    "build_personas",
    "build_world",
    "check_world",
    "load_scenario",
    "load_scenarios",
    "suitable_scenarios",
]
