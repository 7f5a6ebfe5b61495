"""From a task (as stored: a recipe over its world) to the runtime TaskSpec an environment
resets to. The initial state s0 is rebuilt from the world by the preparers, so a task row
stays small and every rebuild gives the same state."""

from __future__ import annotations

import base64
import json
from typing import Any

from guiforge.envs.base import Criterion, TaskSpec
from guiforge.worlds.model import World


def _files(world: World, spec: Any) -> dict[str, Any]:
    if not spec:
        return {}
    # heavy: PIL, docx, lxml, numpy, openpyxl, pptx, reportlab, imported when this runs
    from guiforge.preparers.files import prepare_workspace

    return prepare_workspace(world, spec)


def _tools_file(data: Any) -> Any:
    if not isinstance(data, bytes):
        return data
    try:
        return data.decode("utf-8") if b"\x00" not in data else {"base64": base64.b64encode(data).decode()}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def build_setup(domain: str, apps: list[str], setup: dict[str, Any], world: World) -> dict[str, Any]:
    if domain in ("web", "mobile"):
        # heavy: faker, jinja2 (the worlds package), imported when this runs
        from guiforge.preparers.web_apps import web_setup

        return web_setup(world, apps=setup.get("apps") or apps, start=setup.get("start"))
    if domain == "tools":
        # The tools env takes text as is and binary files (xlsx, pdf, png...) as base64.
        files = {name: _tools_file(data) for name, data in _files(world, setup.get("files")).items()}
        out: dict[str, Any] = {"world": json.loads(world.model_dump_json()), "files": files}
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
        presentation=_presentation(task),
    )


def _presentation(task: dict[str, Any]) -> dict[str, Any]:
    value = task.get("presentation", task.get("presentation_json"))
    if isinstance(value, str):
        return json.loads(value) if value else {}
    return dict(value or {})
