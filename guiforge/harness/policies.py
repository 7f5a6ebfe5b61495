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

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.harness.formats import ModelReply, ToolCall
from guiforge.harness.parser import format_reply
from guiforge.lake.fingerprint import fingerprint
from guiforge.models.base import Message, ModelClient
from guiforge.models.loop import run
from guiforge.teacher.mistakes import (
    Mistake,
    focused_field,
    label,
    neighbour,
    noticed,
    point_at,
    similar_name,
    target_of,
    wrong_row_value,
)
from guiforge.teacher.reference import GroundingError, Planned, ReferenceProgram
from guiforge.teacher.thoughts import StepContext, ThoughtWriter
from guiforge.teacher.weaknesses import Weaknesses, apply_weaknesses


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
    name, default guiforge JSON), ``format_options`` (the codec's settings: a tool version),
    ``coords`` (a convention, default the codec's own) and ``coord_options`` (min_pixels,
    max_pixels, factor for resized coordinates; resize and max_edge: how images are sized
    before they are sent)."""

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
        self.format_options = {"tool_version": config.tool_version}
        self.coord_options = {"min_pixels": config.min_pixels, "max_pixels": config.max_pixels,
                              "factor": config.resize_factor, "resize": config.image_resize,
                              "max_edge": config.max_edge}

    def act(self, turn: TurnInput) -> Reply:
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

    misclick: float = Field(default=0.05, ge=0, le=1, description="per pointer action: the neighbouring row or "
                            "a look-alike item (only where the screen has an element scan)")
    recover: float = Field(default=0.5, ge=0, le=1, description="when the next screen shows a mistake: undo and redo")
    skip: float = Field(default=0.02, ge=0, le=1)
    wrong_value: float = Field(default=0.08, ge=0, le=1, description="per typed text: a value from the wrong row")
    early_stop: float = Field(default=0.015, ge=0, le=1)
    malformed: float = Field(default=0.02, ge=0, le=1, description="a reply that does not parse")
    missed_scroll: float = Field(default=0.1, ge=0, le=1, description="per scroll to reveal: the wrong way first")
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
    """Follows the task's reference solution, grounded on the live screen, thinking aloud
    about what it sees, making the mistakes people make (:mod:`guiforge.teacher.mistakes`)
    and, when the next screen shows one, undoing it."""

    reference: list[dict]
    domain: str
    variant: str | None
    noise: Noise
    seed: int
    task_id: str
    instruction: str = ""
    name: str = "offline:scripted-teacher"
    weaknesses: Weaknesses | None = None  # planted, situation-dependent mistakes (teacher/weaknesses.py)
    apps: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list, init=False)  # mistakes and corrections, by turn
    _program: ReferenceProgram = field(init=False)
    _queue: list = field(default_factory=list, init=False)  # (action, thought) or obs -> (action, thought)
    _mistake: Mistake | None = field(default=None, init=False)
    _rng: random.Random = field(init=False)
    _scale: float = field(init=False)
    _finished: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._program = ReferenceProgram(self.reference, self.domain, self.variant)
        self._rng = random.Random(fingerprint([self.seed, self.task_id, "teacher"]))
        self._writer = ThoughtWriter(random.Random(fingerprint([self.seed, self.task_id, "thoughts"])),
                                     self.instruction)
        task_rng = random.Random(fingerprint([self.task_id, "difficulty"]))  # same for every sample
        self._scale = max(0.0, 1 + self.noise.spread * (2 * task_rng.random() - 1))

    def _p(self, rate: float) -> bool:
        return self._rng.random() < min(1.0, rate * self._scale)

    def _say(self, action: Action, obs: Observation, planned: Planned | None, target: dict | None = None) -> str:
        step = planned.step if planned and planned.step else {}
        if planned is not None and step.get("thought") and not planned.detour:
            return f"{self._writer._see(obs)} {step['thought']}"  # the card's own words for this step
        ctx = StepContext(step, planned.step_index if planned else 0, planned.total if planned else 0,
                          self.instruction, planned.detour if planned else False)
        return self._writer.write(action, obs, ctx, target if target is not None else target_of(obs, action),
                                  self._program.values)

    def _reply(self, action: Action, thought: str) -> Reply:
        if action.type in ("answer", "terminate"):
            self._finished = True
        return Reply(format_reply(thought, action))

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

    def _event(self, turn: int, event: str, kind: str) -> None:
        self.events.append({"turn": turn, "event": event, "kind": kind})

    def act(self, turn: TurnInput) -> Reply:
        obs = turn.observation
        if turn.retry_error is None and self._p(self.noise.malformed):
            return Reply('{"thought": "I will continue", "action": {"type": "click", "x": ')
        if self._finished:
            return self._reply(Action(type="terminate", status="success"), "The task is complete.")
        if turn.retry_error is None and self._mistake is not None:
            mistake, self._mistake = self._mistake, None
            if self._rng.random() < self.noise.recover and noticed(mistake, obs):
                self._queue = self._corrections(mistake, obs) + self._queue
                if self._queue:
                    self._event(turn.step_index, "correction", mistake.kind)
        if self._queue:
            item = self._queue.pop(0)
            action, thought = item(obs) if callable(item) else item
            return self._reply(action, thought)
        if self._p(self.noise.early_stop):
            return self._reply(Action(type="terminate", status="success"),
                               f"{self._writer._see(obs)} I believe that is everything, so I'll stop here.")
        try:
            planned = self._program.send(obs)
            while planned is not None and planned.action.type not in ("answer", "terminate") and self._p(self.noise.skip):
                planned = self._program.send(obs)  # skipped: its effect never happens
        except GroundingError as exc:
            return self._reply(Action(type="terminate", status="failure"),
                               f"{self._writer._see(obs)} I cannot find what I need on screen "
                               f"({str(exc)[:80]}), so I'll stop and report that it failed.")
        if planned is None:
            return self._reply(Action(type="terminate", status="success"),
                               self._say(Action(type="terminate", status="success"), obs, None))
        return self._act_on(planned, obs, turn.step_index)

    def _act_on(self, planned: Planned, obs: Observation, turn: int) -> Reply:
        action = planned.action
        if self.weaknesses is not None and self.weaknesses.active:
            weak, _ = apply_weaknesses(self.weaknesses, action, obs, turn, self.apps, self._rng, perturb_text)
            if weak is None:  # a planted early stop
                return self._reply(Action(type="terminate", status="success"),
                                   f"{self._writer._see(obs)} I believe that is everything, so I'll stop here.")
            if weak is not action:  # a planted mistake: never noticed, so the diagnoser can find it
                self._event(turn, "mistake", "planted")
                return self._reply(weak, self._say(weak, obs, planned))
        if action.x is not None and action.type not in ("scroll", "swipe") and self._p(self.noise.misclick):
            slip = self._pointer_slip(planned, obs, turn)
            if slip is not None:
                return slip
        elif action.type in ("scroll", "swipe") and planned.detour and self._p(self.noise.missed_scroll):
            return self._wrong_scroll(planned, obs, turn)
        elif action.type in ("type", "answer", "call_tool") and self._p(self.noise.wrong_value):
            return self._wrong_input(planned, obs, turn)
        return self._reply(action, self._say(action, obs, planned))

    def _pointer_slip(self, planned: Planned, obs: Observation, turn: int) -> Reply | None:
        action = planned.action
        target = target_of(obs, action)
        if target is not None:
            pickers = [("neighbour", neighbour), ("similar_name", similar_name)]
            self._rng.shuffle(pickers)
            for kind, pick in pickers:
                wrong = pick(obs, target)
                if wrong is None:
                    continue
                x, y = point_at(wrong)
                slip = action.model_copy(update={"x": x, "y": y})
                self._mistake = Mistake(kind, turn, target, wrong, obs.debug.get("path"), extra={"planned": planned})
                self._event(turn, "mistake", kind)
                return self._reply(slip, self._say(slip, obs, planned, wrong))  # it believes it is right
        # No safe look-alike, or no element geometry (the desktop, where a point off target can
        # land on a toolbar button nothing undoes): no slip here.
        return None

    def _wrong_scroll(self, planned: Planned, obs: Observation, turn: int) -> Reply:
        action = planned.action
        if action.type == "scroll":
            wrong = action.model_copy(update={"direction": "up" if action.direction == "down" else "down"})
        else:
            wrong = action.model_copy(update={"y": action.y2, "y2": action.y})
        self._mistake = Mistake("wrong_scroll", turn, None, None, obs.debug.get("path"), extra={"planned": planned})
        self._event(turn, "mistake", "wrong_scroll")
        return self._reply(wrong, self._say(wrong, obs, planned))

    def _wrong_input(self, planned: Planned, obs: Observation, turn: int) -> Reply:
        action = planned.action
        scanned = bool(obs.debug.get("elements"))
        if action.type == "type" and scanned and action.text and "\n" not in action.text:
            typed = wrong_row_value(obs, action.text, self._rng) or perturb_text(action.text, self._rng)
            self._mistake = Mistake("wrong_row_value", turn, None, None, obs.debug.get("path"),
                                    correct_text=action.text, typed=typed, extra={"planned": planned})
            self._event(turn, "mistake", "wrong_row_value")
            slip = action.model_copy(update={"text": typed})
            return self._reply(slip, self._say(slip, obs, planned))
        slip = self._wrong_value(action)
        kind = "wrong_tool_argument" if action.type == "call_tool" else "wrong_value"
        if slip != action:
            self._event(turn, "mistake", kind)
            if action.type == "call_tool":  # its output is on screen next turn: checked, then redone
                self._mistake = Mistake("wrong_tool_argument", turn, None, None, None, extra={"planned": planned})
        return self._reply(slip, self._say(slip, obs, planned))

    def _corrections(self, mistake: Mistake, obs: Observation) -> list:
        """What a person does on seeing the mistake: undo it, then do the step again."""
        planned: Planned = mistake.extra["planned"]
        if mistake.kind in ("neighbour", "similar_name"):
            back = Action(type="back")
            why = (f"This opened {label(mistake.wrong)}, not {label(mistake.intended)} — I picked the wrong "
                   f"{'row' if mistake.kind == 'neighbour' else 'item with a similar name'}. I'll go back.")
            return [(back, why), lambda now: self._redo_pointer(planned, mistake, now)]
        if mistake.kind == "wrong_row_value":
            field_el = focused_field(obs)
            if field_el is None:
                return []
            fix = f"The field shows {mistake.typed!r}, but it should be {mistake.correct_text!r}; I took the wrong value."
            if self.domain == "mobile":
                gx, gy = point_at(field_el)
                select = (Action(type="long_press", x=gx, y=gy), fix + " I'll select what I typed to replace it.")
            else:
                select = (Action(type="hotkey", keys=["ctrl", "a"]), fix + " I'll select it all to replace it.")
            return [select, (planned.action, f"Now I'll type the right value, {mistake.correct_text!r}.")]
        if mistake.kind == "wrong_scroll":
            d = "down" if planned.action.type == "swipe" or planned.action.direction == "down" else "up"
            return [(planned.action, f"That scrolled the wrong way and the list did not move toward what I "
                                     f"need; I'll scroll {d} instead.")]
        if mistake.kind == "wrong_tool_argument":
            return [(planned.action, "Checking the call I just made, one argument does not match the task; "
                                     "the result above is for the wrong input, so I'll call it again correctly.")]
        return []

    def _redo_pointer(self, planned: Planned, mistake: Mistake, obs: Observation) -> tuple[Action, str]:
        intended = mistake.intended or {}
        again = next((e for e in obs.debug.get("elements") or []
                      if (intended.get("id") and e.get("id") == intended.get("id"))
                      or (not intended.get("id") and e.get("label") == intended.get("label"))), None)
        action = planned.action
        if again is not None:
            x, y = point_at(again)
            action = action.model_copy(update={"x": x, "y": y})
        return action, f"Back where I was. This time I'll pick {label(intended)}, the one I actually need."
