"""A rendered task candidate as a row of the task_candidates table, and the file gate for
one candidate. The candidates stage, resynthesis and the skill-card checks all make rows
the same way, so the helpers live with the tasks, below the stages."""

from __future__ import annotations

import json

from guiforge.errors import GuiforgeError


def candidate_row(c, gate: dict | None = None, author: dict | None = None) -> dict:
    """The task_candidates row of a rendered candidate (guiforge.skills.instantiate)."""
    return {
        "task_id": c.task_id, "world_id": c.world_id, "skill_id": c.skill_id, "skill_version": c.skill_version,
        "domain": c.domain, "variant": c.variant, "apps": c.apps, "instruction": c.instruction,
        "setup_json": json.dumps(c.setup, default=str), "rubric_json": json.dumps(c.rubric, default=str),
        "reference_json": json.dumps(c.reference, default=str), "answer": c.answer,
        "binding_json": json.dumps({"binding": c.binding, "leaks": c.leaks, "phrasing": c.phrasing,
                                    "voice": c.voice, "paraphrase": c.paraphrase}, default=str),
        "feasible": c.feasible, "difficulty": c.difficulty, "max_steps": c.max_steps,
        "parent_task_id": None, "round": 0, "author_model": (author or {}).get("author_model"),
        "prompt_hash": (author or {}).get("prompt_hash"),
        "gate_json": json.dumps(gate or {}),
        "presentation_json": json.dumps(c.presentation),
    }


def file_problems(candidate, world) -> list[str]:
    """The file gate for one candidate: every file opens and holds its declared facts."""
    spec = candidate.setup.get("files")
    if not spec or candidate.domain not in ("desktop", "tools"):
        return []
    # heavy: PIL, docx, faker, jinja2, lxml, numpy, openpyxl, pptx, reportlab, imported when this runs
    from guiforge.gates.file_gate import check_files
    from guiforge.preparers.files import prepare_workspace

    try:
        files = {name: data for name, data in prepare_workspace(world, spec).items() if isinstance(data, bytes)}
    except (GuiforgeError, ValueError, KeyError) as exc:  # a card whose workspace spec does not fit this world
        return [f"workspace spec: {exc}"]
    facts = []
    for name, key in candidate.setup.get("file_facts", []):
        try:
            facts.append((name, world.fact(key)))
        except KeyError:
            return [f"{name}: the card relies on fact {key!r}, which this world lacks"]
    return check_files(files, facts, required=sorted(files))
