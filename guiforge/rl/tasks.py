"""What the RL side shares: the runtime task of an RL prompt row (rebuilt from its
``task_json`` and ``world_json``), one process-wide environment manager, and reading actions
out of a completion written in the harness's reply format and the export's coordinates."""

from __future__ import annotations

import atexit
import json
import threading
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.export.coords import decode_action
from guiforge.harness.formats.guiforge_json import json_objects as _json_objects

_lock = threading.Lock()
_manager = None


def shared_manager(instances: int = 2):
    """The environment manager every reward call and environment of this process uses
    (warm instances carry over between batches); closed at exit."""
    global _manager
    with _lock:
        if _manager is None:
            from guiforge.envs import EnvManager, default_factories

            _manager = EnvManager(default_factories(), max_instances=instances)
            atexit.register(_manager.close)
        return _manager


def runtime_task(task_json: str | dict, world_json: str | dict | None) -> tuple[TaskSpec, str | None]:
    """(TaskSpec, variant) for an RL row: s0 is rebuilt from the world by the preparers."""
    from guiforge.tasks.materialize import task_spec
    from guiforge.worlds.model import World

    task = json.loads(task_json) if isinstance(task_json, str) else dict(task_json)
    if world_json is None:
        raise ValueError(f"task {task.get('task_id')}: no world_json: the reward needs the task's world to rebuild s0")
    world = World.model_validate_json(world_json) if isinstance(world_json, str) else World.model_validate(world_json)
    return task_spec(task, world), task.get("variant")


def env_spec_for(domain: str, variant: str | None, phone_screenshots: str | None = "css") -> EnvSpec:
    from guiforge.gates.package_gate import env_spec

    return env_spec(domain, variant, phone_screenshots)


def completion_text(completion: Any) -> str:
    """A TRL completion as text: a string, or conversational messages (assistant turns)."""
    if isinstance(completion, str):
        return completion
    texts = []
    for m in completion or []:
        if m.get("role") != "assistant":
            continue
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(p.get("text") or "" for p in content if p.get("type") == "text")
    return "\n".join(texts)


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object of a completion, in order (the harness parser's scan)."""
    return [o for o in _json_objects(text) if isinstance(o, dict)]


def read_action(obj: dict[str, Any], domain: str, variant: str | None, width: int, height: int,
                coords: str) -> Action:
    """One reply object ({"thought", "action"} or a bare action) as a canonical action;
    ValueError says what is wrong with it."""
    raw = obj.get("action", obj)
    if not isinstance(raw, dict) or "type" not in raw:
        raise ValueError("no action: expected {\"thought\": ..., \"action\": {\"type\": ...}}")
    raw = {k: v for k, v in raw.items() if k != "thought"}
    if width and height:
        raw = decode_action(raw, width, height, coords)
    action = Action.model_validate(raw)
    if action.type not in action_set(domain, variant):
        raise ValueError(f"{action.type!r} is not an action here; use one of: "
                         f"{', '.join(sorted(action_set(domain, variant)))}")
    return action
