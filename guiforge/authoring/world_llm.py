"""The LLM world builder: a model writes a whole world as JSON for a persona and a
scenario; the reply is validated against the World schema and retried with the errors fed
back. Worlds that still fail are returned with their error (the stage excludes them)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache

from guiforge.lake.fingerprint import fingerprint
from guiforge.models.base import Message, ModelClient, prompt_hash
from guiforge.models.loop import run
from guiforge.models.structured import agenerate
from guiforge.worlds.model import World
from guiforge.worlds.places import country_name, country_table

SYSTEM = """You write realistic, internally consistent "worlds" for training computer-use agents.
A world is everything one person's apps and files hold for a scenario: contacts (with emails and
phones), calendar events, facts (budgets, dates, amounts), emails with attachments, documents
(invoices with line items, spreadsheets, slides, text), chats, notes and bank transactions.

Rules:
- Reply with ONE JSON object that validates against the JSON schema below. No prose.
- Every email sender/recipient is the persona (field "me") or one of "contacts".
- Attachments, event attendees and chat participants refer to ids that exist.
- Invoice line amount = quantity * unit_price (to the cent); total = sum of amounts (+ tax_rate).
- A fact with a "source" like "doc:<document_id>.total" equals that value; a text that "cites" a
  fact quotes its value exactly.
- Write the scenario's own story densely: at least 8 contacts, 6 events, 6 facts, 12 emails
  (some in reply threads with "Re:" subjects, one with an attachment, one near miss such as a
  second invoice from the same vendor or a meeting that was moved), 3 documents, 10 transactions.
  Spreadsheets have 20 or more rows.
- Text documents have structure: 3-6 "sections" (heading, level, paragraphs, bullets, and in
  some a "table" with columns and rows of text cells; "style": "note" for a callout), 20-60
  lines in all, with the world's names, dates and amounts. Decks have 6-12 slides on several
  "layout"s: "title" first, then "section", "content", "two_content" (bullets and
  right_bullets), "comparison" (left_heading, right_heading), "chart" (a "chart" of kind
  bar/line/pie whose categories and series values are the world's numbers) and "picture"
  (an "image": kind photo/logo/map with a subject and caption; it is drawn for you).
  Everyday life (newsletters, bills, routine appointments,
  card payments, friends and family) is added after you; do not write it.
- Be true to the real world: places are real cities of real countries; prices are in the
  world's currency; invoices charge that country's VAT rate ({vat_rates}); a flight lasts
  what its distance implies (about 40 minutes plus 1 hour per 780 km); a self-employed
  person has no line manager; document numbers are varied, never 001, 002.

JSON schema:
"""


@dataclass
class BuiltWorld:
    world_id: str
    world: World | None
    builder: str
    model: str | None
    prompt_hash: str | None
    error: str = ""
    attempts: int = 1
    gate: str = "schema"  # where a failed build is excluded


@cache
def world_schema() -> str:
    return json.dumps(World.model_json_schema(), separators=(",", ":"))


def _vat_rates() -> str:
    return ", ".join(f"{country_name(c)} {r.vat:.0%}" for c, r in sorted(country_table().countries.items()))


def world_messages(persona, scenario, world_id: str, seed: int) -> list[Message]:
    base = date(2026, 1, 5) + timedelta(days=int(fingerprint([seed, world_id], 6), 16) % 300)
    brief = {
        "world_id": world_id,
        "persona_id": persona.persona_id,
        "scenario": scenario.id,
        "scenario_title": getattr(scenario, "title", scenario.id),
        "scenario_description": getattr(scenario, "description", "") or getattr(scenario, "summary", ""),
        "base_date": base.isoformat(),
        "me": persona.model_dump(mode="json"),
    }
    return [
        Message("system", SYSTEM.replace("{vat_rates}", _vat_rates()) + world_schema()),
        Message("user", "Write the world for this brief. Use exactly these ids, base_date and 'me':\n"
                + json.dumps(brief, indent=1)),
    ]


def _identity_check(world_id: str, persona_id: str, scenario: str):
    def check(world: World) -> list[str]:
        problems = []
        if world.world_id != world_id:
            problems.append(f"world_id must be {world_id!r}")
        if world.persona_id != persona_id or world.me.persona_id != persona_id:
            problems.append(f"persona_id and me.persona_id must be {persona_id!r}")
        if world.scenario != scenario:
            problems.append(f"scenario must be {scenario!r}")
        return problems

    return check


async def _one(client: ModelClient, persona, scenario, world_id: str, seed: int) -> BuiltWorld:
    messages = world_messages(persona, scenario, world_id, seed)
    result = await agenerate(client, messages, World,
                             extra_check=_identity_check(world_id, persona.persona_id, scenario.id))
    model = result.completions[-1].model if result.completions else client.config.model
    if result.ok:
        return BuiltWorld(world_id, result.value, "llm", model, prompt_hash(messages), attempts=result.attempts)
    return BuiltWorld(world_id, None, "llm", model, prompt_hash(messages),
                      error=f"parse failure after {result.attempts} attempts: {result.errors[-1]}",
                      attempts=result.attempts)


def build_worlds_llm(client: ModelClient, jobs, seed: int) -> list[BuiltWorld]:
    async def gather():
        return await asyncio.gather(*(_one(client, p, s, wid, seed) for p, s, wid in jobs))

    return run(gather())
