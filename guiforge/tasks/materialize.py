"""From a task (as stored) to the runtime TaskSpec an environment resets to. The task's
environment kind builds its initial state s0 (guiforge.envs.kind): from the task's world by
the preparers when it has one, so a task row stays small and every rebuild gives the same
state; from the task's own setup when it has none (an imported task, a task-source plugin).
Setup keys the builder does not know are kept."""

from __future__ import annotations

import json
from typing import Any

from guiforge.envs.base import Criterion, TaskSpec
from guiforge.envs.kind import EnvKind
from guiforge.envs.kinds import kind_of
from guiforge.worlds.model import World


def build_setup(domain: str, apps: list[str], setup: dict[str, Any], world: World | None,
                kind: EnvKind | None = None) -> dict[str, Any]:
    """s0 of a task of ``domain`` (built by ``kind``, else the domain's registered kind)."""
    return (kind or kind_of(domain)).setup({"apps": apps, "setup": setup}, world)


def task_spec(task: dict[str, Any], world: World | None, kind: EnvKind | None = None) -> TaskSpec:
    """``task`` is a candidate/task dict (setup, rubric as Python values or *_json strings);
    ``world`` is None for a task that has none."""

    def value(name: str, default: Any = None) -> Any:
        if name in task:
            return task[name]
        raw = task.get(f"{name}_json")
        return json.loads(raw) if raw else default

    return TaskSpec(
        task_id=task["task_id"],
        domain=task["domain"],
        apps=list(task.get("apps") or []),
        instruction=task["instruction"],
        setup=(kind or kind_of(task["domain"])).setup({**task, "setup": value("setup", {})}, world),
        rubric=[Criterion(**c) for c in value("rubric", [])],
        feasible=bool(task.get("feasible", True)),
        max_steps=int(task.get("max_steps") or 15),
        world_id=world.world_id if world is not None else task.get("world_id"),
        presentation=_presentation(task),
    )


def _presentation(task: dict[str, Any]) -> dict[str, Any]:
    value = task.get("presentation", task.get("presentation_json"))
    if isinstance(value, str):
        return json.loads(value) if value else {}
    return dict(value or {})
