"""What the RL side shares: the runtime task of an RL prompt row (rebuilt from its
``task_json`` and ``world_json``), one process-wide environment manager, and reading actions
out of a completion written in the export's action format and coordinates."""

from __future__ import annotations

import atexit
import json
import threading
from typing import Any

from guiforge.envs import EnvManager, default_factories
from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.export.target import Target
from guiforge.harness.formats.guiforge_json import json_objects as _json_objects

_lock = threading.Lock()
_manager = None


def shared_manager(instances: int = 2):
    """The environment manager every reward call and environment of this process uses
    (warm instances carry over between batches); closed at exit."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = EnvManager(default_factories(), max_instances=instances)
            atexit.register(_manager.close)
        return _manager


def runtime_task(task_json: str | dict, world_json: str | dict | None) -> tuple[TaskSpec, str | None]:
    """(TaskSpec, variant) for an RL row: s0 is rebuilt from the world by the preparers."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.tasks.materialize import task_spec
    from guiforge.worlds.model import World

    task = json.loads(task_json) if isinstance(task_json, str) else dict(task_json)
    if world_json is None:
        raise ValueError(f"task {task.get('task_id')}: no world_json: the reward needs the task's world to rebuild s0")
    world = World.model_validate_json(world_json) if isinstance(world_json, str) else World.model_validate(world_json)
    return task_spec(task, world), task.get("variant")


def env_spec_for(domain: str, variant: str | None, phone_screenshots: str | None = "css") -> EnvSpec:
    # heavy: faker, jinja2, imported when this runs
    from guiforge.gates.package_gate import env_spec

    return env_spec(domain, variant, phone_screenshots)


def completion_replies(completion: Any, action_format: str = "guiforge") -> list[str]:
    """The replies of a TRL completion, one action each, in order: each assistant message
    of a conversational completion (or the whole string); in the harness's own format, each
    JSON object of those, so one message may carry several actions."""
    if isinstance(completion, str):
        texts = [completion]
    else:
        texts = []
        for m in completion or []:
            if m.get("role") != "assistant":
                continue
            content = m.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts.append("".join(p.get("text") or "" for p in content if p.get("type") == "text"))
    if action_format != "guiforge":
        return texts
    replies = []
    for text in texts:
        objects = [o for o in _json_objects(text) if isinstance(o, dict)]
        # no JSON at all: the text itself, so that the codec says what is wrong with it
        replies += [json.dumps(o, ensure_ascii=False) for o in objects] if objects else ([text] if text.strip() else [])
    return replies


def read_action(reply: str | dict[str, Any], domain: str, variant: str | None, width: int, height: int,
                coords: str, action_format: str = "guiforge") -> Action:
    """One reply (text, or for the harness's format a parsed object) as a canonical action,
    read with the export's codec and convention; ValueError says what is wrong with it."""
    if isinstance(reply, dict):
        reply = json.dumps(reply, ensure_ascii=False)
    target = Target(action_format, coords)
    return target.decode(reply, domain, variant, (width, height) if width and height else None)[1]
