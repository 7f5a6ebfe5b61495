"""The card author's loop: bind cards on sample worlds, render them, and run each instance
through the same gates the pipeline uses (file, instruction, package in the real
environment). ``guiforge skills check`` prints the result per instance."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from guiforge.envs import EnvManager, default_factories
from guiforge.errors import GuiforgeError
from guiforge.gates.package_gate import PackageGate
from guiforge.gates.text_gates import leaks, speaks_to_model, unknown_entities
from guiforge.skills.card import SkillCard
from guiforge.skills.instantiate import BindingError, TaskCandidate, instantiate
from guiforge.skills.loader import load_cards
from guiforge.tasks.candidates import candidate_row, file_problems
from guiforge.tasks.materialize import task_spec
from guiforge.worlds import build_personas, build_world, load_scenarios
from guiforge.worlds.model import World


@dataclass
class InstanceReport:
    skill_id: str
    task_id: str
    world_id: str
    domain: str
    variant: str | None
    gate: str  # "pass" or the gate that rejected it
    reason: str
    seconds: float = 0.0
    instruction: str = ""


def sample_worlds(n: int, seed: int = 1) -> list[World]:
    """``n`` template worlds, rotating over every scenario."""
    scenarios = list(load_scenarios().values())
    return [build_world(p, scenarios[i % len(scenarios)], seed=seed + i)
            for i, p in enumerate(build_personas(n, seed=seed))]


def check_cards(cards: list[SkillCard], worlds: list[World], seed: int = 1, package: bool = True,
                max_instances: int = 4) -> Iterator[InstanceReport]:

    manager = None
    if package:
        manager = EnvManager(default_factories(), max_instances=1)
    try:
        for card in cards:
            produced = 0
            for world in worlds:
                if produced >= max_instances:
                    break
                try:
                    instances: list[TaskCandidate] = instantiate(card, world, seed)
                except BindingError as exc:
                    yield InstanceReport(card.id, "-", world.world_id, "-", None, "render", str(exc))
                    continue
                for c in instances[: max_instances - produced]:
                    produced += 1
                    started = time.perf_counter()

                    def report(gate: str, reason: str = "", c=c, started=started) -> InstanceReport:
                        return InstanceReport(c.skill_id, c.task_id, c.world_id, c.domain, c.variant, gate, reason,
                                              round(time.perf_counter() - started, 2), c.instruction)

                    problems = file_problems(c, world)
                    if problems:
                        yield report("file", "; ".join(problems))
                        continue
                    revealed = leaks(c.instruction, c.leaks)
                    if revealed:
                        yield report("leak", f"instruction reveals {revealed[0]!r}")
                        continue
                    to_model = speaks_to_model(c.instruction)
                    if to_model:
                        yield report("voice", f"instruction speaks to the model: {to_model!r}")
                        continue
                    missing = unknown_entities(c.instruction, world.model_dump_json())
                    if missing:
                        yield report("entities", f"instruction names {missing[0]!r}, not in the world")
                        continue
                    if manager is None:
                        yield report("pass", "package gate skipped")
                        continue
                    row = candidate_row(c)
                    verdict = PackageGate(manager).check(task_spec(row, world), json.loads(row["reference_json"]),
                                                         c.variant)
                    yield report("pass" if verdict.passed else "package", verdict.reason)
            if produced == 0:
                yield InstanceReport(card.id, "-", "-", "-", None, "binding",
                                     f"binds on none of the {len(worlds)} sample worlds")
    finally:
        if manager is not None:
            manager.close()


def load_selected(root: Path, ids: list[str]) -> list[SkillCard]:
    cards = load_cards(root)
    if not ids:
        return list(cards.values())
    selected = []
    for pattern in ids:
        matched = [c for cid, c in cards.items() if cid == pattern or cid.startswith(pattern.rstrip("*"))]
        if not matched:
            raise GuiforgeError(f"no skill card matches {pattern!r} under {root}")
        selected.extend(matched)
    return selected
