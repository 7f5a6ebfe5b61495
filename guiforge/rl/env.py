"""An environment for TRL's multi-turn GRPO (``GRPOTrainer(environment_factory=GuiforgeEnv)``),
backed by guiforge's environment manager and verifiers: the same environments, action set
and reply format as collection, so RL trains the harness that collected the data.

TRL's contract (trl 1.16): the factory makes an instance per concurrent rollout; before each
rollout TRL calls ``reset(**row)`` with the dataset row (the RL prompt set's columns:
``task_json``, ``world_json``, ``coords``, ...); every public method is a tool the model may
call (typed arguments, a Google-style docstring); ``get_reward()`` scores the rollout from
the environment's own state: the verifier's success on the final state as 1.0 / 0.0, or its
weighted rubric score with ``GuiforgeEnv(reward="score")``.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

from guiforge.envs.base import EnvFailure
from guiforge.failures import Fault
from guiforge.rl.tasks import (
    completion_replies,
    env_spec_for,
    read_action,
    run_choices,
    runtime_task,
    shared_manager,
)


def _image(data: bytes | None):
    if not data:
        return None
    # heavy: PIL, imported when this runs
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        return im.convert("RGB")


class GuiforgeEnv:
    """One rollout's environment: a leased guiforge environment reset to a task's s0."""

    def __init__(self, reward: str = "success", coords: str | None = None, manager=None,
                 acquire_timeout_s: float = 600.0, action_format: str | None = None):
        self._reward = reward
        self._coords_override = coords
        self._format_override = action_format
        self._format = action_format or "guiforge"
        self._manager = manager
        self._timeout = acquire_timeout_s
        self._lease = None
        self._spec = None
        self._variant: str | None = None
        self._obs = None
        self._coords = coords or "grid999"
        self._steps = 0
        self._done = False
        self._failure: str | None = None

    def reset(self, task_json: str, world_json: str | None = None, coords: str | None = None,
              phone_screenshots: str | None = "css", action_format: str | None = None,
              envs_json: str | None = None, checks_json: str | None = None, **_: Any) -> str | None:
        """Lease an environment and reset it to the row's task. The prompt already shows s0,
        so nothing is appended to it (None)."""
        self._release()
        envs, declared = run_choices(envs_json, checks_json)  # the run's kinds and check plugins
        self._spec, self._variant = runtime_task(task_json, world_json, envs)
        self._coords = self._coords_override or coords or "grid999"
        self._format = self._format_override or action_format or "guiforge"
        self._steps, self._done, self._failure = 0, False, None
        manager = self._manager or shared_manager(envs=envs, checks=declared)
        self._lease = manager.acquire(env_spec_for(self._spec.domain, self._variant, phone_screenshots, envs),
                                      timeout_s=self._timeout)
        try:
            self._obs = self._lease.reset(self._spec)
        except EnvFailure as exc:
            self._failure = str(exc)
        return None

    def act(self, action: str) -> list:
        """Take one action on the screen, in the same format as the system prompt's actions.

        Args:
            action: One action as JSON, e.g. {"type": "click", "x": 120, "y": 48}, with coordinates in the dataset's convention.

        Returns:
            What happened: a feedback line and the screenshot after the action.
        """
        if self._lease is None or self._spec is None:
            raise RuntimeError("reset() first: no task is loaded")
        if self._done:
            return [{"type": "text", "text": "The task has ended; no more actions are taken."}]
        if self._failure:
            return [{"type": "text", "text": f"The environment failed: {self._failure}"}]
        if self._steps >= self._spec.max_steps:
            self._done = True
            return [{"type": "text", "text": f"Step budget of {self._spec.max_steps} actions used up."}]
        replies = completion_replies(action, self._format) if isinstance(action, str) else [action]
        try:
            if not replies:
                raise ValueError("not JSON: reply with one action such as {\"type\": \"click\", \"x\": 10, \"y\": 20}")
            parsed = read_action(replies[0], self._spec.domain, self._variant, self._obs.width, self._obs.height,
                                 self._coords, self._format)
        except ValueError as exc:
            return [{"type": "text", "text": f"Your action could not be used: {exc}"}]
        try:
            result = self._lease.step(parsed)
        except EnvFailure as exc:
            self._failure = str(exc)
            return [{"type": "text", "text": f"The environment failed: {exc}"}]
        self._steps += 1
        self._obs = result.observation
        self._done = result.done
        feedback = result.error or result.feedback or "done"
        content: list[dict[str, Any]] = [{"type": "text", "text": f"Step {self._steps}. Feedback: {feedback}"}]
        if result.observation.text:
            content.append({"type": "text", "text": f"Output:\n{result.observation.text[-4000:]}"})
        image = _image(result.observation.screenshot)
        if image is not None:
            content.append({"type": "image", "image": image})
        return content

    def get_reward(self) -> float | None:
        """The verifier's verdict on the final state (None after an environment or verifier
        fault: guiforge.failures)."""
        if self._lease is None:
            return None
        try:
            if self._failure:
                return None
            verdict = self._lease.evaluate()
            return float(verdict.success) if self._reward == "success" else verdict.score
        except Fault:
            return None
        finally:
            self._release()

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def __del__(self) -> None:  # a rollout abandoned mid-way gives its lease back
        with contextlib.suppress(Exception):
            self._release()
