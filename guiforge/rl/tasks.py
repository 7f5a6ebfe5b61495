"""What the RL side shares: the runtime task of an RL prompt row (rebuilt from its
``task_json`` and ``world_json``), one process-wide environment manager, and reading actions
out of a completion written in the export's action format and coordinates."""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from guiforge.envs import EnvManager, RunKinds
from guiforge.envs.actions import Action
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.export.target import Target
from guiforge.harness.formats.guiforge_json import json_objects as _json_objects
from guiforge.verify.runner import VerifierPool

_lock = threading.Lock()
_managers: dict[tuple, EnvManager] = {}


def run_choices(envs: str | Mapping[str, str] | None = None,
                checks: str | Sequence[str] | None = None) -> tuple[dict[str, str], tuple[str, ...]]:
    """The run's declared environment kinds (domain -> kind) and check plugins, as an RL row
    carries them (``envs_json`` and ``checks_json``, JSON or values; None: none declared)."""
    envs = json.loads(envs) if isinstance(envs, str) else envs
    checks = json.loads(checks) if isinstance(checks, str) else checks
    return dict(envs or {}), tuple(checks or ())


def shared_manager(instances: int = 2, envs: Mapping[str, str] | None = None, checks: Sequence[str] = ()):
    """The environment manager every reward call and environment of this process uses for
    one choice of kinds and check plugins (warm instances carry over between batches): the
    run's kinds serve the tasks and its verifier loads the run's checks; closed at exit."""
    key = (tuple(sorted((envs or {}).items())), tuple(checks))
    with _lock:
        manager = _managers.get(key)
        if manager is None:
            verifier = VerifierPool(checks=key[1])
            manager = _managers[key] = EnvManager(RunKinds(dict(key[0])), max_instances=instances, verifier=verifier)
            atexit.register(verifier.close)  # after the manager (atexit runs last-registered first)
            atexit.register(manager.close)
        return manager


def runtime_task(task_json: str | dict, world_json: str | dict | None,
                 envs: Mapping[str, str] | None = None) -> tuple[TaskSpec, str | None]:
    """(TaskSpec, variant) for an RL row: s0 is rebuilt from the world by the setup builder of
    the task's kind in the run (``envs``: the run's declared kinds); a task without a world
    carries its own."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.tasks.materialize import task_spec
    from guiforge.worlds.model import World

    task = json.loads(task_json) if isinstance(task_json, str) else dict(task_json)
    if world_json is None and task.get("world_id"):
        raise ValueError(f"task {task.get('task_id')}: no world_json: the reward needs the task's world to rebuild s0")
    world = None if world_json is None else World.model_validate_json(world_json) if isinstance(world_json, str) \
        else World.model_validate(world_json)
    kind = RunKinds(envs).kind(task["domain"]) if task.get("domain") else None
    return task_spec(task, world, kind), task.get("variant")  # a task without a world carries its own setup


def env_spec_for(domain: str, variant: str | None, phone_screenshots: str | None = "css",
                 envs: Mapping[str, str] | None = None) -> EnvSpec:
    """What a task acquires under the run's kinds (``envs``: the run's declared ones)."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.gates.package_gate import env_spec

    return env_spec(domain, variant, phone_screenshots, None, RunKinds(envs).kind(domain))


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
