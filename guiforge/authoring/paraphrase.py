"""The task-author model as a paraphraser: it rewrites a rendered instruction the way a user
would type it. A paraphrase is kept only when it passes the gates the template passed (no
answer given away, only entities the world has, nothing said to the model) and still
carries every quoted name, address and number of the original; otherwise the task keeps its
template text and the rejected paraphrase is reported with its reason.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from guiforge.gates.text_gates import leaks, speaks_to_model, unknown_entities
from guiforge.models.base import Message, ModelClient, prompt_hash
from guiforge.models.loop import run

SYSTEM = """You rewrite instructions for a computer assistant so they sound like a real person
typed them: vary the order (goal first, or the reason first), the tone (polite, brisk, chatty)
and the length. Keep every quoted title, name, e-mail address, file name, amount and date
exactly as written. Add no facts, never give the answer, and never mention tools, models or
how to do it. Reply with the rewritten instruction only, on one line."""

_KEEP = re.compile(r"[\"“”«»][^\"“”«»]{3,120}[\"“”«»]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w-]+\.[a-z]{2,4}\b|\d[\d.,:]*")


@dataclass
class Paraphrase:
    original: str
    text: str | None  # None: rejected (see reason) or the model gave nothing
    reason: str
    model: str
    prompt_hash: str


def must_keep(instruction: str) -> list[str]:
    """What the paraphrase has to carry over verbatim (what the gates and verifier rely on)."""
    return [m.group(0).strip("\"“”«»").rstrip(".,:") for m in _KEEP.finditer(instruction)]


def problem(original: str, text: str, secrets: list[str], world_text: str) -> str | None:
    """Why a paraphrase cannot replace the instruction, or None."""
    if not text or len(text) > 3 * len(original) + 80:
        return "empty or far longer than the instruction"
    lost = [k for k in must_keep(original) if k.casefold() not in text.casefold()]
    if lost:
        return f"drops {lost[0]!r}"
    revealed = leaks(text, secrets)
    if revealed:
        return f"gives the answer away: {revealed[0]!r}"
    missing = unknown_entities(text, world_text)
    if missing:
        return f"names {missing[0]!r}, which the world does not contain"
    to_model = speaks_to_model(text)
    if to_model:
        return f"speaks to the model: {to_model!r}"
    return None


def _clean(reply: str) -> str:
    text = " ".join(reply.strip().split())
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] == '"' and text.count('"') == 2 else text


async def _one(client: ModelClient, instruction: str, secrets: list[str], world_text: str) -> Paraphrase:
    messages = [Message("system", SYSTEM), Message("user", instruction)]
    completion = await client.acomplete(messages)
    text = _clean(completion.text or "")
    reason = problem(instruction, text, secrets, world_text)
    return Paraphrase(instruction, None if reason else text, reason or "", completion.model or client.config.model or "",
                      prompt_hash(messages))


def paraphrase_all(client: ModelClient, items: list[tuple[str, list[str], str]]) -> list[Paraphrase]:
    """``items`` are (instruction, secrets, world JSON); one paraphrase each, in order."""
    async def gather():
        return await asyncio.gather(*(_one(client, i, s, w) for i, s, w in items))

    return run(gather())
