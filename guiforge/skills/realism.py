"""Realism figures about tasks, for ``guiforge stats --realism`` and the report: how many
distinct instruction templates each skill has, and which themes, viewports and distractors
the tasks of each domain show.

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
        rows = con.execute(f"SELECT skill_id, instruction, domain, presentation_json FROM {source}").fetchall()
    finally:
        con.close()
    per_skill = distinct_templates((r[0], r[1]) for r in rows)
    return {"templates": {"summary": template_summary(per_skill), "per_skill": per_skill},
            "presentation": presentation_usage((r[2], r[3]) for r in rows)}
