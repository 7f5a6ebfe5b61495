"""The LLM skill author: from a description and a few example cards, a model writes a new
skill card (YAML). The proposal is validated exactly like a card on disk; errors go back
to the model; what still fails is returned with its last error."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from guiforge.errors import ConfigError
from guiforge.models.base import Message, ModelClient, prompt_hash
from guiforge.models.loop import run
from guiforge.paths import SKILLS_DIR
from guiforge.skills.card import SkillCard
from guiforge.skills.loader import parse_card

_FENCE = re.compile(r"```(?:ya?ml)?\s*\n(.*?)```", re.S)

SYSTEM = """You author skill cards for guiforge, a generator of tasks for computer-use agents.
A skill card is a YAML document; one card yields many tasks by binding its parameters to
entities of generated worlds. Follow the format exactly; rubric checks must be functions
listed in the format, reference steps must name element ids the apps expose (learn them from
the examples). Reply with the card only, inside a ```yaml fence.

The format:
"""


@dataclass
class Proposal:
    description: str
    card: SkillCard | None
    text: str
    model: str
    prompt_hash: str
    calls: int
    error: str = ""


def extract_yaml(reply: str) -> str:
    m = _FENCE.search(reply)
    return (m.group(1) if m else reply).strip() + "\n"


def messages_for(description: str, examples: list[str], taken: set[str]) -> list[Message]:
    guide = (SKILLS_DIR / "README.md").read_text()
    shots = "\n\n".join(f"Example card:\n```yaml\n{e.strip()}\n```" for e in examples)
    return [
        Message("system", SYSTEM + guide),
        Message("user", f"{shots}\n\nWrite a NEW card (its id must not be one of: {', '.join(sorted(taken))}) for:\n"
                        f"{description}"),
    ]


async def _propose(client: ModelClient, description: str, examples: list[str], taken: set[str],
                   attempts: int) -> Proposal:
    messages = messages_for(description, examples, taken)
    convo = list(messages)
    text, error, calls, model = "", "", 0, client.config.model or ""
    for _ in range(attempts):
        completion = await client.acomplete(convo)
        calls += 1
        model = completion.model or model
        text = extract_yaml(completion.text)
        try:
            card = parse_card(text, "<proposal>")
            if card.id in taken:
                raise ConfigError("<proposal>", "id", f"{card.id!r} already exists; choose another id")
            return Proposal(description, card, text, model, prompt_hash(messages), calls)
        except ConfigError as exc:
            error = str(exc)
        convo = [*convo, Message("assistant", completion.text),
                 Message("user", f"The card was rejected: {error}\nReply with the corrected card only.")]
    return Proposal(description, None, text, model, prompt_hash(messages), calls, error)


def propose_cards(client: ModelClient, descriptions: list[str], examples: list[str], taken: set[str],
                  attempts: int) -> list[Proposal]:
    async def gather():
        return await asyncio.gather(*(_propose(client, d, examples, taken, attempts) for d in descriptions))

    return run(gather())
