"""One rollout path for collection, evaluation and RL: reset, then per step build the
context, ask the policy, parse (retrying with the parse error fed back), execute, record;
finally evaluate. A fault of the machinery ends the episode as a row of its kind
(``env_failure``, ``model_failure``, ``verifier_failure``: no verdict, never a reward of 0);
replies that cannot be parsed end it as a ``parse_failure``, evaluated as it stands."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment as Jinja

from guiforge.envs.actions import Action, action_pixels
from guiforge.envs.base import EnvFailure, Observation, TaskSpec, VerifierResult
from guiforge.envs.kinds import kind_of
from guiforge.envs.screen_facts import screen_facts
from guiforge.envs.targets import element_at
from guiforge.failures import ENV_FAILURE, PARSE_FAILURE, Fault
from guiforge.harness.context import ContextPolicy, Observed, Turn, build_messages, shared_prefix
from guiforge.harness.formats import ActionFormat, CoordSystem, ParseError, get_format
from guiforge.harness.policies import Policy, Reply, TurnInput
from guiforge.harness.progress import ProgressCounts, ProgressTracker
from guiforge.models.base import Message, prompt_hash


@cache
def _template(name: str):
    text = resources.files("guiforge.harness").joinpath(f"prompts/{name}").read_text()
    return Jinja(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False).from_string(text)


def system_prompt(domain: str, variant: str | None = None, tools: list[str] | None = None,
                  action_format: str | ActionFormat | None = None, coords: CoordSystem | None = None) -> str:
    """The system prompt in the action format's own template: the kind's surface (what the
    agent operates), its action set in the format's vocabulary (``tools``: registry tools
    listed where the actions are tool calls) and the kind's notes after them."""
    codec = action_format if isinstance(action_format, ActionFormat) else get_format(action_format)
    coords = coords or codec.coords()
    kind = kind_of(domain)
    rendered = codec.render(domain, variant, coords)
    specs = [json.dumps({"type": "function", "function": t} if "type" not in t else t, ensure_ascii=False)
             for t in rendered.tools or []]
    prompt = _template(codec.template).render(
        surface=kind.surface_for(variant), domain=domain, variant=variant, grid=kind.points(variant),
        calls_tools="call_tool" in kind.actions(variant),
        coords=coords.describe(), actions=rendered.text, tools=tools or [], specs=specs,
    ).strip()
    notes = kind.notes_for(variant)  # none for guiforge's own kinds: their prompts stay as they were
    return f"{prompt}\n{notes}" if notes else prompt


@dataclass
class StepRecord:
    step_index: int
    screenshot: bytes | None
    image_format: str
    width: int
    height: int
    thought: str
    raw_output: str
    action: Action | None
    action_pixels: dict[str, Any] | None
    feedback: str
    error: str | None
    latency_s: float
    input_tokens: int
    output_tokens: int
    prompt_hash: str
    prefix_messages: int  # leading messages shared with the previous step's prompt
    prompt_messages: int
    # The prompt by reference: each message's role and parts, images as {"image": sha256}
    # (every screenshot is stored in `images`), so exports and relabeling rebuild it exactly.
    prompt: list[dict[str, Any]] = field(default_factory=list)
    # The element under the action's point (id, tag, role, label, box in pixels), from the
    # adapter's element scan; None where the domain reports no geometry.
    target: dict[str, Any] | None = None
    # Every reply of this step in order, each {"raw", "error", "cached"}: the retries after
    # parse failures as well as the reply that was used (raw_output is the last one).
    attempts: list[dict[str, Any]] = field(default_factory=list)
    # What the frame showed, for thoughts written later (guiforge.envs.screen_facts)
    screen: dict[str, Any] | None = None
    # The rubric on the state this step left (guiforge.verify.progress.step_progress);
    # None where the episode did not track progress
    progress: dict[str, Any] | None = None


@dataclass
class Episode:
    task_id: str
    steps: list[StepRecord] = field(default_factory=list)
    verdict: VerifierResult | None = None
    env_failure: bool = False
    failure_kind: str | None = None  # guiforge.failures: env, model, verifier or parse failure
    error: str | None = None
    wall_s: float = 0.0
    answer: str | None = None
    status: str | None = None
    system_prompt: str = ""
    action_format: str = "guiforge"
    coords: str = "grid999"
    progress: ProgressCounts | None = None  # what progress tracking cost, where it ran
    progress_s: float = 0.0

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.steps)

    @property
    def output_tokens(self) -> int:
        return sum(s.output_tokens for s in self.steps)


_FAULT_LABELS = {"env_failure": "environment failure", "model_failure": "model failure",
                 "verifier_failure": "verifier failure"}


def _observed(obs: Observation, feedback: str) -> Observed:
    return Observed(obs.screenshot, f"image/{obs.format}", obs.text, feedback)


def _summary(action: Action | None, feedback: str, error: str | None) -> str:
    if action is None:
        return f"(no valid action) {error or ''}".strip()
    fields = action.model_dump(exclude_none=True)
    what = " ".join(f"{k}={v}" for k, v in fields.items() if k != "type")
    return f"{action.type} {what}".strip()[:160] + (f" -> {error}" if error else f" -> {feedback[:80]}" if feedback else "")


def policy_coords(policy: Policy, codec: ActionFormat, obs: Observation) -> CoordSystem:
    """The policy's declared convention on this frame (pixel kinds need a screenshot; where
    there is none, no action takes a point, so the grid stands in)."""
    kind = getattr(policy, "coords", None) or codec.default_coords
    if not obs.width and kind in ("pixels", "resized"):
        kind = "grid999"
    options = {k: v for k, v in (getattr(policy, "coord_options", None) or {}).items() if v is not None}
    return codec.coords(kind, (obs.width, obs.height), **options)


def history_text(reply: Reply) -> str:
    """A reply as the assistant turn of later prompts: its text, then each native tool call
    as a ``<tool_call>`` block (which every tools format also reads); reasoning is left out,
    as chat templates leave it out of past turns."""
    calls = [json.dumps({"name": c.name, "arguments": c.arguments if not isinstance(c.arguments, str)
                         else _loads_or_raw(c.arguments)}, ensure_ascii=False) for c in reply.tool_calls]
    text = "\n".join([reply.text.strip(), *(f"<tool_call>\n{c}\n</tool_call>" for c in calls)]).strip()
    return text or "(an empty reply)"


def native_calls(reply: Reply, step: int) -> tuple[dict[str, Any], ...]:
    """The reply's tool calls to replay natively in later prompts ({"id", "name",
    "arguments"}), or () where one has arguments that are not an object (those go back as
    text, which every provider accepts)."""
    out = []
    for i, call in enumerate(reply.tool_calls):
        args = _loads_or_raw(call.arguments) if isinstance(call.arguments, str) else call.arguments
        if args is None or args == "":
            args = {}
        if not isinstance(args, dict):
            return ()
        # Our own ids, not the server's (random per call): the prompt, hence the cache key, stays
        # the same on a rerun; both APIs only need a call and its result to agree.
        out.append({"id": f"call_{step}_{i}", "name": call.name, "arguments": args})
    return tuple(out)


def assistant_turn(reply: Reply, native: bool, step: int,
                   refused: str | None = None) -> tuple[str, tuple[dict[str, Any], ...]]:
    """(text, tool calls) of a reply as a later prompt's assistant message: with native tools,
    its calls as calls and its text (reasoning left out); else all of it as text. A reply
    that was ``refused`` answers each of its calls with that, not with "Done"."""
    calls = native_calls(reply, step) if native else ()
    if refused:
        calls = tuple({**c, "result": f"Not done. {refused}"} for c in calls)
    return (reply.text.strip(), calls) if calls else (history_text(reply), ())


def _loads_or_raw(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments  # kept as the model wrote it: the retry's error says what was wrong


def _attempt(reply: Reply, error: str | None) -> dict[str, Any]:
    return {"raw": reply.model_reply().raw(), "error": error, "cached": reply.cached}


def _timed(episode: Episode, fn):
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        episode.progress_s += time.perf_counter() - t0


def check_sequence(before: Observation, after: Observation, index: int) -> None:
    """The frame a step returns must be the one taken after its action: numbered one past the
    frame the action was chosen on (Observation.seq). Anything else is a stale or foreign
    frame, which would pair a screen with the wrong action: an environment fault."""
    if before.seq is None and after.seq is None:
        return  # an adapter that does not number its frames (tools)
    expected = None if before.seq is None else before.seq + 1
    if after.seq != expected:
        raise EnvFailure(f"step {index}: the frame after the action is numbered {after.seq}, not {expected}: "
                         "a stale frame, not recorded")


def run_episode(lease, task: TaskSpec, policy: Policy, context: ContextPolicy, variant: str | None = None,
                max_parse_retries: int = 2, tools: list[str] | None = None, progress: bool = False) -> Episode:
    """One episode on ``lease``. ``progress``: score the rubric after every step
    (:mod:`guiforge.harness.progress`); the last step's verdict is then the episode's."""
    started = time.perf_counter()
    episode = Episode(task.task_id)
    tracker = ProgressTracker(lease, task) if progress else None
    codec = get_format(getattr(policy, "action_format", None), **(getattr(policy, "format_options", None) or {}))
    episode.action_format = codec.name
    history: list[Turn] = []
    previous: list[Message] = []
    try:
        obs = lease.reset(task)
        if tracker is not None:
            episode.progress = tracker.counts
            _timed(episode, tracker.start)
        coords = policy_coords(policy, codec, obs)
        episode.coords = coords.kind
        system = episode.system_prompt = system_prompt(task.domain, variant, tools, codec, coords)
        native = codec.render(task.domain, variant, coords).tools if codec.native_tools else None
        feedback = ""
        for index in range(task.max_steps):
            coords = policy_coords(policy, codec, obs)
            messages = build_messages(context, system, task.instruction, history, _observed(obs, feedback))
            prompt = [m.key() for m in messages]
            prefix = shared_prefix(previous, messages)
            previous = messages
            t0 = time.perf_counter()
            reply = policy.act(TurnInput(messages, obs, index, tools=native))
            in_tok, out_tok = reply.input_tokens, reply.output_tokens
            action, thought, error = None, "", None
            attempts: list[dict[str, Any]] = []
            for attempt in range(max_parse_retries + 1):
                try:
                    thought, action = codec.parse(reply.model_reply(), task.domain, variant, coords)
                    error = None
                    attempts.append(_attempt(reply, None))
                    break
                except ParseError as exc:
                    error = f"parse failure: {exc}"
                    attempts.append(_attempt(reply, str(exc)))
                    if attempt == max_parse_retries:
                        break
                    refused = f"Your reply could not be used: {exc}."
                    retry = [*messages, Message("assistant", *assistant_turn(reply, bool(native), index, refused)),
                             Message("user", f"{refused} Reply with exactly one action.")]
                    reply = policy.act(TurnInput(retry, obs, index, retry_error=str(exc), tools=native))
                    in_tok += reply.input_tokens
                    out_tok += reply.output_tokens
            latency = time.perf_counter() - t0
            raw = reply.model_reply().raw()
            if action is None:  # recorded as a parse failure, and the episode ends
                episode.steps.append(StepRecord(index, obs.screenshot, obs.format, obs.width, obs.height, thought,
                                                raw, None, None, "", error, latency, in_tok, out_tok,
                                                prompt_hash(messages), prefix, len(messages), prompt,
                                                attempts=attempts,
                                                progress=tracker.unchanged() if tracker else None))
                episode.error = error
                episode.failure_kind = PARSE_FAILURE
                break
            target = element_at(obs, action)
            facts = screen_facts(obs, action)  # after act: the desktop's OCR reads of this frame are in
            result = lease.step(action)
            check_sequence(obs, result.observation, index)
            pixels = action_pixels(action, obs.width, obs.height) if obs.width else None
            episode.steps.append(StepRecord(index, obs.screenshot, obs.format, obs.width, obs.height, thought,
                                            raw, action, pixels, result.feedback, result.error, latency,
                                            in_tok, out_tok, prompt_hash(messages), prefix, len(messages), prompt,
                                            target, attempts, facts,
                                            _timed(episode, tracker.step) if tracker else None))
            text, calls = assistant_turn(reply, bool(native), index)
            # A past step shows the feedback that came with its screen (the result of the step
            # before it); the result of its own action opens the next step.
            history.append(Turn(obs.screenshot, f"image/{obs.format}", obs.text, text,
                                _summary(action, result.feedback, result.error), feedback, calls))
            feedback = result.error or result.feedback
            obs = result.observation
            if result.done:
                episode.answer, episode.status = result.answer, result.status
                break
        # the state after the last step is the final state: its verdict is already there
        episode.verdict = tracker.verdict if tracker is not None else lease.evaluate()
    except Fault as exc:  # the machinery failed, not the agent: no verdict
        episode.verdict = None
        episode.failure_kind = exc.kind
        episode.env_failure = exc.kind == ENV_FAILURE
        episode.error = f"{_FAULT_LABELS.get(exc.kind, exc.kind)}: {exc}"
    episode.wall_s = round(time.perf_counter() - started, 4)
    return episode
