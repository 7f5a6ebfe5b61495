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
    neighbour,
    noticed,
    point_at,
    similar_name,
    target_of,
    wrong_row_value,
)
from guiforge.teacher.recovery import corrections
from guiforge.teacher.reference import GroundingError, Planned, ReferenceProgram
from guiforge.teacher.slips import (
    confirms,
    menu_neighbour,
    neighbour_cell,
    premature_answer,
    stale_value,
    tab_neighbour,
    wrong_command,
)
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
                            "tab, a look-alike item, the menu beside the one wanted (LibreOffice by mouse)")
    recover: float = Field(default=0.7, ge=0, le=1, description="when the next screen shows a mistake: undo and redo")
    # skip and early_stop are the visible causes that replaced random stops; at these rates a
    # default run still gives tasks with mixed outcomes, which RL selection needs
    skip: float = Field(default=0.15, ge=0, le=1, description="per confirming step that ends the task (Send, Save, "
                        "the format dialog): stop before it, believing the task done")
    wrong_value: float = Field(default=0.08, ge=0, le=1, description="per typed text, tool call or command: a value "
                               "from the wrong row, one typed earlier, the cell beside, a slipped digit or column")
    early_stop: float = Field(default=0.05, ge=0, le=1, description="per turn of a task that answers: answer "
                              "from what the screen shows before the step that finds the value")
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
    _typed: list = field(default_factory=list, init=False)  # texts typed so far (a stale value's source)
    _last_index: int | None = field(default=None, init=False)  # the reference step acted on last
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
                fixes = corrections(mistake, obs, self.domain)
                self._queue = fixes + self._queue
                if fixes:
                    self._event(turn.step_index, "correction", mistake.kind)
        if self._queue:
            item = self._queue.pop(0)
            action, thought = item(obs) if callable(item) else item
            return self._reply(action, thought)
        answer = self._answer_ahead()
        if answer is not None and self._p(self.noise.early_stop):
            early = self._premature(answer, obs, turn.step_index)
            if early is not None:  # else nothing to get wrong: the step as planned
                return early
        try:
            planned = self._program.send(obs)
        except GroundingError:  # what it says is for the logs, not for a thought
            return self._reply(Action(type="terminate", status="failure"),
                               f"{self._writer._see(obs)} I looked for what the next step needs and it is not on "
                               "this screen, so I'll stop and report that it failed.")
        if planned is None:
            return self._reply(Action(type="terminate", status="success"),
                               self._say(Action(type="terminate", status="success"), obs, None))
        if self._last_confirmation(planned, obs) and self._p(self.noise.skip):
            self._event(turn.step_index, "mistake", "skipped_confirmation")
            return self._reply(Action(type="terminate", status="success"),
                               f"{self._writer._see(obs)} That should be everything the task asked for, so I'll "
                               "stop here.")  # it believes so: the form or dialog is still in the last frame
        return self._act_on(planned, obs, turn.step_index)

    def _answer_ahead(self) -> str | None:
        """The answer the reference ends with while steps before it remain, else None."""
        steps = self._program.steps
        answer = next((i for i, s in enumerate(steps) if s.get("do") == "answer"), None)
        if answer is None or not self._started_steps() < answer:
            return None
        return self._program._fill(str(steps[answer].get("text", "")))

    def _started_steps(self) -> int:
        return self._last_index + 1 if self._last_index is not None else 0

    def _premature(self, answer: str, obs: Observation, turn: int) -> Reply | None:
        screen = obs.debug.get("screen")
        lines = [line.text for line in screen.lines()] if screen is not None and obs.debug.get("document") else None
        wrong = premature_answer(answer, obs, self._rng, lines)
        if wrong is None:
            return None
        self._event(turn, "mistake", "premature_answer")
        action = Action(type="answer", answer=wrong, text=wrong)
        return self._reply(action, f"{self._writer._see(obs)} The figure seems to be right here on this screen, so "
                                   f"I'll answer now: {wrong[:80]}")

    def _last_confirmation(self, planned: Planned, obs: Observation) -> bool:
        """The confirming press of the task's last state-changing step (nothing but an end after it)."""
        rest = self._program.steps[planned.step_index + 1:]
        return all(s.get("do") in ("terminate", "wait") for s in rest) and \
            confirms(planned.step, planned.action, obs)

    def _act_on(self, planned: Planned, obs: Observation, turn: int) -> Reply:
        action = planned.action
        self._last_index = planned.step_index
        if action.type == "type" and action.text:
            self._typed.append(action.text)
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
        elif action.type in ("type", "answer", "call_tool", "bash") and self._p(self.noise.wrong_value):
            return self._wrong_input(planned, obs, turn)
        return self._reply(action, self._say(action, obs, planned))

    def _pointer_slip(self, planned: Planned, obs: Observation, turn: int) -> Reply | None:
        action = planned.action
        menu = menu_neighbour(obs, action) if self.domain == "desktop" else None
        if menu is not None:  # LibreOffice by mouse: the title beside the one wanted
            slip, wrong, right = menu
            self._mistake = Mistake("wrong_menu", turn, None, None, None, extra={
                "planned": planned, "wrong_menu": wrong, "right_menu": right})
            self._event(turn, "mistake", "wrong_menu")
            return self._reply(slip, self._say(action, obs, planned))  # it believes it is right
        target = target_of(obs, action)
        if target is not None:
            pickers = [("neighbour", neighbour), ("similar_name", similar_name), ("wrong_tab", tab_neighbour)]
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
            stale = stale_value(self._typed[:-1], action.text, self._rng) if self._rng.random() < 0.5 else None
            kind = "stale_value" if stale else "wrong_row_value"
            typed = stale or wrong_row_value(obs, action.text, self._rng) or perturb_text(action.text, self._rng)
            return self._slip_typed(planned, obs, turn, kind, typed)
        if self.domain == "desktop" and action.type in ("type", "bash"):
            return self._desktop_slip(planned, obs, turn)
        slip = self._wrong_value(action)
        kind = "wrong_tool_argument" if action.type == "call_tool" else "wrong_value"
        if slip != action:
            self._event(turn, "mistake", kind)
            if action.type == "call_tool":  # its output is on screen next turn: checked, then redone
                self._mistake = Mistake("wrong_tool_argument", turn, None, None, None, extra={"planned": planned})
        return self._reply(slip, self._say(slip, obs, planned))

    def _slip_typed(self, planned: Planned, obs: Observation, turn: int, kind: str, typed: str) -> Reply:
        """Type ``typed`` where the step types its own text, remembering what it should be."""
        self._mistake = Mistake(kind, turn, None, None, obs.debug.get("path"), correct_text=planned.action.text,
                                typed=typed, extra={"planned": planned})
        self._event(turn, "mistake", kind)
        slip = planned.action.model_copy(update={"text": typed})
        return self._reply(slip, self._say(slip, obs, planned))

    def _desktop_slip(self, planned: Planned, obs: Observation, turn: int) -> Reply:
        """The desktop's slips: the cell beside in the Name Box, a digit in a cell's figure,
        a column or file name in a read-only command; else the step as planned."""
        action, step = planned.action, planned.step or {}
        if action.type == "bash":
            typed = wrong_command(action.text or "", self._rng)
            kind = "wrong_command"
        elif step.get("do") == "cell" and (action.text or "").rstrip("\n") == str(step.get("ref")):
            typed, kind = neighbour_cell(action, self._rng), "wrong_cell"
        elif step.get("do") == "cell" and "value" in step and (action.text or "").endswith("\n") \
                and any(c.isdigit() for c in action.text or ""):
            typed, kind = perturb_text(action.text.rstrip("\n"), self._rng) + "\n", "wrong_cell_value"
        else:
            typed, kind = None, ""
        if typed is None or typed == action.text:
            return self._reply(action, self._say(action, obs, planned))
        return self._slip_typed(planned, obs, turn, kind, typed)
