"""From a task (as stored: a recipe over its world) to the runtime TaskSpec an environment
resets to. The initial state s0 is rebuilt from the world by the preparers, so a task row
stays small and every rebuild gives the same state."""

from __future__ import annotations

import json
from typing import Any

from guiforge.envs.base import Criterion, TaskSpec
from guiforge.worlds.model import World


def _files(world: World, spec: Any) -> dict[str, Any]:
    if not spec:
        return {}
    from guiforge.preparers.files import prepare_workspace

    return prepare_workspace(world, spec)


def build_setup(domain: str, apps: list[str], setup: dict[str, Any], world: World) -> dict[str, Any]:
    if domain in ("web", "mobile"):
        from guiforge.preparers.web_apps import web_setup

        return web_setup(world, apps=setup.get("apps") or apps, start=setup.get("start"))
    if domain == "tools":
        out: dict[str, Any] = {"world": json.loads(world.model_dump_json()), "files": _files(world, setup.get("files"))}
        if setup.get("tools"):
            out["tools"] = setup["tools"]
        return out
    if domain == "desktop":
        return {**{k: v for k, v in setup.items() if k != "files"}, "files": _files(world, setup.get("files"))}
    raise ValueError(f"unknown domain {domain!r}")


def task_spec(task: dict[str, Any], world: World) -> TaskSpec:
    """``task`` is a candidate/task dict (setup, rubric as Python values or *_json strings)."""

    def value(name: str) -> Any:
        return task[name] if name in task else json.loads(task[f"{name}_json"])

    return TaskSpec(
        task_id=task["task_id"],
        domain=task["domain"],
        apps=list(task["apps"]),
        instruction=task["instruction"],
        setup=build_setup(task["domain"], list(task["apps"]), value("setup"), world),
        rubric=[Criterion(**c) for c in value("rubric")],
        feasible=bool(task.get("feasible", True)),
        max_steps=int(task.get("max_steps") or 15),
        world_id=world.world_id,
    )
