"""Realism figures about tasks, for ``guiforge stats --realism`` and the report: how many
instruction templates each skill's card has (English and per language) and how many
distinct ones its tasks show, in which registers and languages the tasks are said and where
their reasons come from, and which themes, viewports and distractors the tasks of each
domain show.

A template is an instruction with what the world filled in masked: quoted text, e-mail
addresses, numbers and names (capitalised words inside a sentence) become placeholders, so
two tasks that differ only in the invoice or the contact share one template.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from guiforge.paths import SKILLS_DIR
from guiforge.skills.loader import load_cards

_QUOTED = re.compile(r"[\"“”«»][^\"“”«»]*[\"“”«»]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_FILE = re.compile(r"\b[\w-]+\.(?:xlsx|csv|pdf|docx|pptx|png|jpg|txt|md|odt|ods|py|sh|json)\b", re.I)
_NUMBER = re.compile(r"[$€£¥₹]?\d[\d.,:/'\s]*\d?%?")
# a capitalised word that does not start a sentence (and is not "I"): a name
_NAME = re.compile(r"(?<=[^.?!:\s]\s)(?:[A-ZÀ-Ý][\w'’-]*)(?:\s+[A-ZÀ-Ý][\w'’-]*)*")


def instruction_template(text: str) -> str:
    text = _QUOTED.sub("<q>", text)
    text = _EMAIL.sub("<e>", text)
    text = _FILE.sub("<f>", text)
    text = _NUMBER.sub("<n>", text)
    text = _NAME.sub(lambda m: m.group(0) if m.group(0) == "I" else "<name>", text)
    return " ".join(text.split())


def distinct_templates(rows: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """(skill_id, instruction) rows -> per skill {tasks, templates, ratio}; ``ratio`` is
    distinct templates over tasks (1.0: no two tasks of the skill read alike)."""
    per_skill: dict[str, list[str]] = defaultdict(list)
    for skill_id, instruction in rows:
        per_skill[skill_id].append(instruction_template(instruction))
    return {skill: {"tasks": len(ts), "templates": len(set(ts)), "ratio": round(len(set(ts)) / len(ts), 3)}
            for skill, ts in sorted(per_skill.items())}


def template_summary(per_skill: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Totals over skills: tasks, templates, the share of skills at or above 0.8."""
    tasks = sum(s["tasks"] for s in per_skill.values())
    templates = sum(s["templates"] for s in per_skill.values())
    # a skill with one task cannot repeat itself: it says nothing about variety
    judged = [s for s in per_skill.values() if s["tasks"] > 1]
    return {"skills": len(per_skill), "tasks": tasks, "templates": templates,
            "ratio": round(templates / tasks, 3) if tasks else None,
            "skills_at_0_8": sum(s["ratio"] >= 0.8 for s in judged), "skills_judged": len(judged)}


_LANGUAGE = re.compile(r"^([a-z]{2}):(.*)$")  # "de:polite+closer": said in German
MIN_PHRASINGS = 8  # English phrasings every card should have (issue 24)


def card_phrasings(cards: Iterable[Any]) -> dict[str, Any]:
    """Per card: English phrasings, phrasings per other language, context reasons; and over
    the cards: the mean and the least English phrasings, and the cards below MIN_PHRASINGS."""
    per = {c.id: {"en": len(c.instructions), "localized": {k: len(v) for k, v in sorted(c.localized.items())},
                  "context": len(c.context)} for c in cards}  # fmt: skip
    if not per:
        return {"cards": 0}
    en = [p["en"] for p in per.values()]
    langs = Counter(k for p in per.values() for k in p["localized"])
    return {"cards": len(per), "mean_en": round(sum(en) / len(en), 2), "min_en": min(en),
            "below_min": sorted(k for k, p in per.items() if p["en"] < MIN_PHRASINGS),
            "with_context": sum(bool(p["context"]) for p in per.values()),
            "localized_cards": dict(sorted(langs.items())),
            "phrasings": sum(p["en"] + sum(p["localized"].values()) for p in per.values()), "per_card": per}  # fmt: skip


def voice_usage(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Over tasks' binding records (phrasing, voice): phrasings used per skill, tasks per
    language, registers, and how many tasks give a reason and whose (the card's or the
    scenario's: a task is only ever given a reason of its own)."""
    used: dict[str, set[int]] = defaultdict(set)
    languages: Counter = Counter()
    registers: Counter = Counter()
    reasons: Counter = Counter()
    tasks = 0
    for skill, record in rows:
        tasks += 1
        voice = str(record.get("voice") or "plain")
        m = _LANGUAGE.match(voice)
        lang, voice = (m.group(1), m.group(2)) if m else ("en", voice)
        languages[lang] += 1
        for part in voice.split("+"):
            if part.startswith("reason:"):
                reasons[part.removeprefix("reason:")] += 1
            else:
                registers[part] += 1
        if isinstance(record.get("phrasing"), int):
            used[skill].add(record["phrasing"])
    per_skill = {k: len(v) for k, v in sorted(used.items())}
    return {"tasks": tasks, "languages": dict(languages.most_common()), "registers": dict(registers.most_common()),
            "with_reason": sum(reasons.values()), "reasons": dict(reasons), "phrasings_used": per_skill,
            "mean_phrasings_used": round(sum(per_skill.values()) / len(per_skill), 2) if per_skill else 0.0}


def presentation_usage(rows: Iterable[tuple[str, str | dict | None]]) -> dict[str, dict[str, Any]]:
    """(domain, presentation) rows -> per domain: tasks, themes, viewports and distractor
    kinds used (counts); on the desktop also the reference styles (mouse, keyboard)."""
    out: dict[str, dict[str, Counter]] = {}
    tasks: Counter = Counter()
    for domain, value in rows:
        pres = json.loads(value) if isinstance(value, str) and value else (value or {})
        tasks[domain] += 1
        usage = out.setdefault(domain, {"themes": Counter(), "viewports": Counter(), "distractors": Counter()})
        if pres.get("theme"):
            usage["themes"][pres["theme"].get("name", "?")] += 1
        if pres.get("viewport"):
            usage["viewports"]["x".join(str(v) for v in pres["viewport"])] += 1
        for d in pres.get("distractors") or ():
            usage["distractors"][d["kind"]] += 1
        if pres.get("style"):
            usage.setdefault("styles", Counter())[pres["style"]] += 1
        if pres.get("browser"):  # the screen around the app: a browser, a phone's bars
            usage.setdefault("screens", Counter())[f"browser+{pres['browser'].get('tabs', 0)} tabs"] += 1
        if pres.get("phone"):
            usage.setdefault("screens", Counter())[f"phone-{pres['phone'].get('nav', 'gesture')}"] += 1
    return {domain: {"tasks": tasks[domain], **{k: dict(sorted(c.items())) for k, c in usage.items()}}
            for domain, usage in sorted(out.items())}


def realism_of_tasks(lake) -> dict[str, Any]:
    """Both figures over a lake's ``tasks`` table (every run); {} when it has none."""
    # heavy: duckdb, numpy, imported when this runs
    from guiforge.catalog import connect, table_source

    source = table_source(lake, "tasks")
    if not source:
        return {}
    con = connect(lake)
    try:
        rows = con.execute(f"SELECT skill_id, instruction, domain, presentation_json, binding_json FROM {source}").fetchall()
    finally:
        con.close()
    per_skill = distinct_templates((r[0], r[1]) for r in rows)
    records = [(r[0], _json(r[4])) for r in rows]
    cards = [c for c in load_cards(SKILLS_DIR).values() if c.id in per_skill] if SKILLS_DIR.is_dir() else []
    return {"templates": {"summary": template_summary(per_skill), "per_skill": per_skill},
            "cards": card_phrasings(cards), "voice": voice_usage(records),
            "presentation": presentation_usage((r[2], r[3]) for r in rows)}


def _json(value: Any) -> dict[str, Any]:
    try:
        out = json.loads(value) if isinstance(value, str) and value else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}
