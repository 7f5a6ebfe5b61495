"""Relabelers: write a step's thought, check it against the action (and against the screen,
curation/consistency.py), retry once with the reason fed back. The offline one writes from
the step's record (curation/thoughts.py); a model one sees the instruction, the history,
the screenshot, what the task still needs after this step and the action taken, through
the shared clients (structured output, cache, accounting)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, Field

from guiforge.curation.consistency import check_consistency, screen_texts
from guiforge.curation.phrases import place, step_phrase
from guiforge.curation.thoughts import (
    MAX_WORDS,
    MIN_WORDS,
    StepContext,
    element_name,
    write_thought,
)
from guiforge.failures import MODEL_FAILURE
from guiforge.models.base import ImagePart, Message, prompt_hash
from guiforge.models.structured import agenerate, extract_json

ATTEMPTS = 2  # the first try, then one retry with the failed check fed back

SYSTEM = """You write the reasoning a computer-use agent had just before it acted.
You see the task's instruction, what it did so far, the current screenshot, what the task
still needs after this step, and the action it then took. Write two to four sentences in the
first person (15 to 60 words) that lead to exactly that action: what the screen shows that
matters here, what the task still needs, and why this action on this element. Name the
element it acts on as the screen shows it (in double quotes), the exact text it types (in
double quotes), the direction it scrolls. Quote only text you can read on the screenshot;
never invent labels. Before an answer, say where on the screen the value is read.
Reply with JSON only: {"thought": "..."}"""


class ThoughtReply(BaseModel):
    thought: str = Field(min_length=3, max_length=2000)


@dataclass
class Relabeled:
    thought: str
    consistent: bool
    failed_check: str | None
    failed_reason: str | None
    attempts: int
    model: str
    prompt_hash: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def _context(ctx: StepContext) -> list[str]:
    """Texts a thought may quote besides the screen: the task and its reference steps."""
    steps = [s for s in (ctx.current, *ctx.ahead) if s]
    return [ctx.instruction, *(str(v) for s in steps for k, v in s.items() if k in ("label", "text", "option", "title"))]


def _verdict(thought: str, ctx: StepContext) -> str | None:
    n = len(thought.split())
    reason = check_consistency(thought, ctx.action, ctx.target, screen_texts(ctx.screen, ctx.target), _context(ctx))
    if reason is None and not MIN_WORDS <= n <= 2 * MAX_WORDS:
        reason = f"length: the thought has {n} words (want {MIN_WORDS} to {MAX_WORDS})"
    return reason


def relabel_offline(ctx: StepContext, seed: str) -> Relabeled:
    reason = None
    for attempt in range(ATTEMPTS):
        thought = write_thought(ctx, seed, plain=attempt > 0)  # the retry takes the literal phrasing
        reason = _verdict(thought, ctx)
        if reason is None:
            return Relabeled(thought, True, None, None, attempt + 1, "offline:relabeler")
    return Relabeled(thought, False, reason.split(":", 1)[0], reason, ATTEMPTS, "offline:relabeler")


def prompt(ctx: StepContext, image: bytes | None, media_type: str = "image/png") -> list[Message]:
    label, kind = element_name(ctx.target)
    history = "\n".join(f"{i + 1}. {h}" for i, h in enumerate(ctx.history)) or "(none: this is the first step)"
    action = {k: v for k, v in ctx.action.items() if v is not None}
    still = [p for p in (step_phrase(s) for s in ctx.ahead) if p]
    where = place(ctx.screen or {}, ctx.domain)
    text = (f"Instruction: {ctx.instruction}\n\nActions so far:\n{history}\n\n"
            f"Step {ctx.step_index + 1} of {ctx.n_steps}. The action taken (0-999 grid): {json.dumps(action)}\n"
            f"Element under the action's point: {json.dumps({'label': label, 'kind': kind}) if ctx.target else 'none'}\n"
            f"On screen: {where or 'see the screenshot'}\n"
            f"What this step is part of: {step_phrase(ctx.current) or 'not a step of the plan (a detour)'}\n"
            f"Still needed after it: {'; '.join(still) if still else 'nothing: the task ends after this'}")
    parts: tuple = (text, ImagePart(image, media_type)) if image else (text,)
    return [Message("system", SYSTEM), Message("user", parts)]


async def relabel_with_model(client, ctx: StepContext, image: bytes | None, media_type: str = "image/png") -> Relabeled:
    messages = prompt(ctx, image, media_type)
    result = await agenerate(client, messages, ThoughtReply, attempts=ATTEMPTS,
                             extra_check=lambda v: [r] if (r := _verdict(v.thought, ctx)) else [])
    tokens_in = sum(c.input_tokens for c in result.completions)
    tokens_out = sum(c.output_tokens for c in result.completions)
    name = f"{client.config.provider}:{client.config.model}"
    if result.failure is not None:  # the endpoint failed for good: no thought, a model_failure
        return Relabeled("", False, MODEL_FAILURE, f"model failure: {result.failure}", result.attempts + 1, name,
                         prompt_hash(messages), tokens_in, tokens_out)
    if result.ok:
        return Relabeled(result.value.thought, True, None, None, result.attempts, name, prompt_hash(messages),
                         tokens_in, tokens_out)
    # The last reply: its thought if it parsed (kept, marked inconsistent), else nothing usable.
    last = result.completions[-1].text if result.completions else ""
    try:
        thought = ThoughtReply.model_validate(extract_json(last)).thought
        reason = _verdict(thought, ctx) or result.errors[-1]
    except ValueError:
        thought, reason = last[:2000], f"parse: {result.errors[-1] if result.errors else 'no reply'}"
    check = reason.split(":", 1)[0] if reason.split(":", 1)[0] in ("verb", "element", "text", "direction",
                                                                   "grounding", "length") else "parse"
    return Relabeled(thought, False, check, reason, result.attempts, name, prompt_hash(messages), tokens_in, tokens_out)
