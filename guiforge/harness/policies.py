"""Policies the harness drives: a model behind any provider, or the scripted teacher.

Both answer a :class:`Turn` with reply text; the harness parses every reply the same way,
so scripted and model rollouts go through one path.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from guiforge.envs.actions import GRID, Action
from guiforge.envs.base import Observation
from guiforge.harness.formats import ModelReply, ToolCall
from guiforge.harness.parser import format_reply
from guiforge.lake.fingerprint import fingerprint
from guiforge.models.base import Message, ModelClient
from guiforge.teacher.reference import GroundingError, Planned, ReferenceProgram


@dataclass
class Reply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    cost_usd: float = 0.0
    tool_calls: list[ToolCall] = field(default_factory=list)  # native tool calls (text may be "")
    reasoning: str | None = None  # reasoning fields, thinking blocks
    cached: bool = False

    def model_reply(self) -> ModelReply:
        return ModelReply(self.text, list(self.tool_calls), self.reasoning)


@dataclass
class TurnInput:
    messages: list[Message]
    observation: Observation
    step_index: int
    retry_error: str | None = None  # the parse error of this turn's previous reply
    tools: list[dict] | None = None  # the action set as native tools, for a tools format


class Policy(Protocol):
    """Answers a turn. Optional attributes the harness reads: ``action_format`` (a codec
    name, default guiforge JSON), ``coords`` (a convention, default the codec's own) and
    ``coord_options`` (min_pixels, max_pixels, factor for resized coordinates)."""

    name: str

    def act(self, turn: TurnInput) -> Reply: ...


class ModelPolicy:
    """A model through the shared client (openai-compatible or anthropic), writing actions
    in its role's action format and coordinate convention.

    ``sample`` is the sample index: it keys the call cache (k samples are k calls; a rerun
    replays each) and offsets the seed. A retry after an unusable reply skips the cache."""

    def __init__(self, client: ModelClient, sample: int | None = None):
        self.client = client
        self.sample = sample
        config = client.config
        self.name = f"{config.provider}:{config.model}"
        self.action_format = config.action_format
        self.coords = config.coords
        self.coord_options = {"min_pixels": config.min_pixels, "max_pixels": config.max_pixels,
                              "factor": config.resize_factor}

    def act(self, turn: TurnInput) -> Reply:
        from guiforge.models.loop import run

        params: dict = {} if self.sample is None else {"sample": self.sample}
        if turn.tools:
            params["tools"] = turn.tools
        completion = run(self.client.acomplete(turn.messages, use_cache=turn.retry_error is None, **params))
        calls = [ToolCall(c.get("name") or "", c.get("arguments"), c.get("id") or "") for c in completion.tool_calls]
        return Reply(completion.text, completion.input_tokens, completion.output_tokens, completion.latency_s,
                     completion.model, completion.cost_usd, calls, completion.reasoning, completion.cached)


class Noise(BaseModel):
    """Seeded mistakes, so outcomes vary per task the way a real teacher's do. Rates are per
    action, scaled per task by a factor drawn in [1 - spread, 1 + spread] (some tasks come out
    easy, some hard)."""

    model_config = ConfigDict(extra="forbid")

    misclick: float = Field(default=0.05, ge=0, le=1)
    recover: float = Field(default=0.5, ge=0, le=1, description="after a misclick, notice it and retry")
    skip: float = Field(default=0.02, ge=0, le=1)
    wrong_value: float = Field(default=0.08, ge=0, le=1, description="per typed text")
    early_stop: float = Field(default=0.015, ge=0, le=1)
    malformed: float = Field(default=0.02, ge=0, le=1, description="a reply that does not parse")
    spread: float = Field(default=0.9, ge=0, le=1)


_DIGIT = re.compile(r"\d")


def perturb_text(text: str, rng: random.Random) -> str:
    """A plausible wrong value: a changed digit, else a dropped word/character."""
    digits = [m.start() for m in _DIGIT.finditer(text)]
    if digits:
        i = rng.choice(digits)
        return text[:i] + str((int(text[i]) + rng.randint(1, 9)) % 10) + text[i + 1:]
    words = text.split()
    if len(words) > 2:
        del words[rng.randrange(len(words))]
        return " ".join(words)
    return text[:-1] if len(text) > 1 else text + "x"


@dataclass
class ScriptedTeacher:
    """Follows the task's reference solution, grounded on the live screen, with noise."""

    reference: list[dict]
    domain: str
    variant: str | None
    noise: Noise
    seed: int
    task_id: str
    name: str = "offline:scripted-teacher"
    _program: ReferenceProgram = field(init=False)
    _pending: Planned | None = field(default=None, init=False)
    _rng: random.Random = field(init=False)
    _scale: float = field(init=False)
    _finished: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._program = ReferenceProgram(self.reference, self.domain, self.variant)
        self._rng = random.Random(fingerprint([self.seed, self.task_id, "teacher"]))
        task_rng = random.Random(fingerprint([self.task_id, "difficulty"]))  # same for every sample
        self._scale = max(0.0, 1 + self.noise.spread * (2 * task_rng.random() - 1))

    def _p(self, rate: float) -> bool:
        return self._rng.random() < min(1.0, rate * self._scale)

    def _next(self, obs: Observation) -> Planned | None:
        if self._pending is not None:
            planned, self._pending = self._pending, None
            return planned
        return self._program.send(obs)

    def _wrong_value(self, action: Action) -> Action:
        """The same action with a plausible mistake in what it types, answers or passes."""
        if action.type == "type" and action.text:
            return action.model_copy(update={"text": perturb_text(action.text, self._rng)})
        if action.type == "answer" and action.answer:
            wrong = perturb_text(action.answer, self._rng)
            return action.model_copy(update={"answer": wrong, "text": wrong})
        if action.type == "call_tool" and action.text:
            call = json.loads(action.text)
            args = call.get("arguments") or {}
            keys = [k for k, v in args.items() if isinstance(v, str | int | float) and not isinstance(v, bool)]
            if keys:
                key = self._rng.choice(keys)
                value = args[key]
                args[key] = perturb_text(value, self._rng) if isinstance(value, str) else \
                    type(value)(value + self._rng.choice([-1, 1]) * max(1, abs(value) // 10))
                return action.model_copy(update={"text": json.dumps({**call, "arguments": args})})
        return action

    def act(self, turn: TurnInput) -> Reply:
        if turn.retry_error is None and self._p(self.noise.malformed):
            return Reply('{"thought": "I will continue", "action": {"type": "click", "x": ')
        if self._finished:
            return Reply(format_reply("The task is complete.", Action(type="terminate", status="success")))
        if self._p(self.noise.early_stop):
            self._finished = True
            return Reply(format_reply("I believe that is everything.", Action(type="terminate", status="success")))
        retrying = self._pending is not None
        try:
            planned = self._next(turn.observation)
            while planned is not None and planned.action.type not in ("answer", "terminate") and self._p(self.noise.skip):
                planned = self._program.send(turn.observation)  # skipped: its effect never happens
        except GroundingError as exc:
            self._finished = True
            return Reply(format_reply(f"I cannot find what I need on screen ({str(exc)[:80]}).",
                                      Action(type="terminate", status="failure")))
        if planned is None:
            self._finished = True
            return Reply(format_reply("The task is complete.", Action(type="terminate", status="success")))
        action, thought = planned.action, planned.thought
        if action.x is not None and action.type != "scroll" and self._p(self.noise.misclick):
            if self._rng.random() < self.noise.recover:
                self._pending = planned  # notice the miss next turn and redo the step
            dx, dy = (self._rng.choice([-1, 1]) * self._rng.randint(25, 70) for _ in range(2))
            action = action.model_copy(update={"x": min(max(action.x + dx, 0), GRID),
                                               "y": min(max(action.y + dy, 0), GRID)})
        elif action.type in ("type", "answer", "call_tool") and self._p(self.noise.wrong_value):
            action = self._wrong_value(action)
        if retrying:
            thought = "My last action missed its target; I'll try again. " + thought
        if action.type in ("answer", "terminate"):
            self._finished = True
        return Reply(format_reply(thought, action))
