"""A reward function for TRL's GRPO: reset the task's environment, replay the completion's
actions, return the verifier's score.

TRL calls a reward function as ``f(prompts=..., completions=..., **columns)`` where every
extra column of the dataset arrives as a list with one entry per completion; the RL prompt
set guiforge exports carries ``task_json``, ``world_json``, ``domain`` and ``coords``::

    from guiforge.rl import TaskReward
    trainer = GRPOTrainer(model, reward_funcs=[TaskReward()], train_dataset=load_dataset(DIR, "rl")["train"])

A completion is one or more replies in the harness's format (``{"thought", "action"}``; a
bare action too), replayed in order until one ends the task (answer/terminate), fails to
read, or the task's step budget runs out. The reward is the verifier's verdict on the final
state: its success as 1.0 / 0.0 (``reward="success"``, the default: the measure the RL pool's
``success_rate`` was selected on, and 0 on s0, which the package gate checked) or its
weighted rubric score (``reward="score"``: partial credit, which s0 may already earn). A
fault of the environment or the verifier (guiforge.failures: crash, hang, lost page, a
verifier that times out twice) returns ``None`` (TRL leaves that sample out of this
reward), never 0.

The run's declared environment kinds (``envs:``) and check plugins (``checks:``) travel in
each row (``envs_json``, ``checks_json``): the reward replays a task on the kind that made it and
scores it with the checks its rubric names, as the run did; ``TaskReward(envs=..., checks=...)``
overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guiforge.failures import Fault
from guiforge.rl.tasks import (
    completion_replies,
    env_spec_for,
    read_action,
    run_choices,
    runtime_task,
    shared_manager,
)


@dataclass
class Replay:
    score: float | None
    success: bool | None
    actions: int
    error: str | None = None
    criteria: dict[str, int] = field(default_factory=dict)
    kind: str | None = None  # the fault that left no verdict (guiforge.failures)


def replay(task_json: str, world_json: str | None, completion: Any, coords: str = "grid999",
           phone_screenshots: str | None = "css", manager=None, acquire_timeout_s: float = 600.0,
           action_format: str = "guiforge", envs: dict[str, str] | None = None, checks: tuple[str, ...] = ()) -> Replay:
    """Reset the task, play the completion's actions (read with ``action_format``'s codec
    in ``coords``), evaluate; ``envs`` and ``checks``: the run's declared environment kinds
    and check plugins (the task's kind serves it, the verifier loads the checks)."""
    spec, variant = runtime_task(task_json, world_json, envs)
    manager = manager or shared_manager(envs=envs, checks=checks)
    replies = completion_replies(completion, action_format)
    actions = 0
    error = None
    try:
        with manager.acquire(env_spec_for(spec.domain, variant, phone_screenshots, envs),
                             timeout_s=acquire_timeout_s) as lease:
            obs = lease.reset(spec)
            for reply in replies[: spec.max_steps]:
                try:
                    action = read_action(reply, spec.domain, variant, obs.width, obs.height, coords, action_format)
                except ValueError as exc:
                    error = f"reply {actions}: {exc}"
                    break
                result = lease.step(action)
                actions += 1
                obs = result.observation
                if result.done:
                    break
            verdict = lease.evaluate()
    except Fault as exc:
        return Replay(None, None, actions, f"{exc.kind.replace('_', ' ')}: {exc}", kind=exc.kind)
    return Replay(verdict.score, verdict.success, actions, error, verdict.criteria)


class TaskReward:
    """The verifier's score as a GRPO reward (see the module's docstring)."""

    __name__ = "guiforge_verifier"  # TRL logs each reward under its function's name

    def __init__(self, reward: str = "success", coords: str | None = None, manager=None,
                 action_format: str | None = None, envs: dict[str, str] | None = None,
                 checks: list[str] | None = None):
        if reward not in ("success", "score"):
            raise ValueError(f"reward: {reward!r} is not 'success' or 'score'")
        self.reward = reward
        # None: each row's own `coords` / `action_format` column (what the export wrote)
        self.coords = coords
        self.action_format = action_format
        self.manager = manager
        # None: each row's own `envs_json` / `checks_json` (the run's choices, as the export wrote them)
        self.envs, self.checks = envs, checks

    def __call__(self, prompts: list, completions: list, task_json: list[str], world_json: list[str | None],
                 coords: list[str] | None = None, phone_screenshots: list[str | None] | None = None,
                 action_format: list[str] | None = None, envs_json: list[str | None] | None = None,
                 checks_json: list[str | None] | None = None, **_: Any) -> list[float | None]:
        rewards: list[float | None] = []
        for i, completion in enumerate(completions):
            convention = self.coords or (coords[i] if coords else "grid999")
            codec = self.action_format or (action_format[i] if action_format else None) or "guiforge"
            phone = phone_screenshots[i] if phone_screenshots else "css"
            envs, declared = run_choices(self.envs if self.envs is not None else envs_json[i] if envs_json else None,
                                         self.checks if self.checks is not None else checks_json[i] if checks_json else None)
            result = replay(task_json[i], world_json[i], completion, convention, phone, self.manager,
                            action_format=codec, envs=envs, checks=declared)
            if result.score is None:
                rewards.append(None)
            else:
                rewards.append(float(result.success) if self.reward == "success" else result.score)
        return rewards
