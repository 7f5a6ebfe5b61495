"""Exported preference rows: one per step-level pair of the lake (``preference_pairs``), for
DPO-style trainers.

The prompt is what the failed sample saw at the departing step, built by the SFT rows' own
builder (``export.rows.step_prompt``: context policy, relabelled history, the target's format
and convention); *chosen* is the successful sample's action at that moment and *rejected* the
failed sample's, each written as the target's assistant turn with the thought its teacher
recorded beside it (both from the same source, so style never tells them apart). A row's
``messages`` are the prompt, then chosen, then rejected; the budget fits the prompt with the
longer reply, as a DPO trainer reads each side (:func:`fit_pair_rows`).
"""

from __future__ import annotations

import json
from typing import Any

from guiforge.export.budget import Budget, fit_rows
from guiforge.export.rows import ExportRow, recorded_in, row_lineage, step_prompt
from guiforge.export.select import row_key
from guiforge.export.source import Source, harness_of
from guiforge.export.target import Target
from guiforge.harness.context import ContextPolicy


def _reply(step: dict[str, Any], action: dict[str, Any], target: Target, domain: str) -> str:
    frame = (step.get("image_width") or 0, step.get("image_height") or 0)
    return target.encode(step.get("thought") or "", action, frame, domain)


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def pair_rows(src: Source, target: Target, context: ContextPolicy | None = None) -> list[ExportRow]:
    """One row per pair whose two steps are in the lake; a pair left out is an exclusion."""
    rows: list[ExportRow] = []
    seen: dict[str, str] = {}
    for pair in src.pairs:
        subject = pair["pair_id"]
        task = src.tasks.get(pair["task_id"])
        rejected_t = src.pair_trajectories.get(pair["rejected_trajectory_id"])
        steps = src.pair_steps.get(pair["rejected_trajectory_id"], [])
        at = next((i for i, s in enumerate(steps) if s["step_index"] == pair["step_index"]), None)
        chosen_step = next((s for s in src.pair_steps.get(pair["chosen_trajectory_id"], [])
                            if s["step_index"] == pair["chosen_step_index"]), None)
        if task is None or rejected_t is None or at is None or chosen_step is None:
            src.exclude("pair", "a pair's task, sample or step is not in this run", subject, "preference_pairs")
            continue
        if not steps[at].get("prompt_json"):
            src.exclude("pair", "the failed sample's step has no recorded prompt", subject, "preference_pairs")
            continue
        harness = harness_of(rejected_t)
        variant = harness.get("variant") or task.get("variant")
        domain = task["domain"]
        messages, images = step_prompt(src, steps, at, domain, variant, recorded_in(harness), target, context)
        chosen = _reply(chosen_step, pair["chosen_action"], target, domain)
        rejected = _reply(steps[at], pair["rejected_action"], target, domain)
        if chosen == rejected:  # two actions the target's convention cannot tell apart
            src.exclude("pair", "chosen and rejected read the same in the export's format", subject,
                        "preference_pairs")
            continue
        messages += [_text("assistant", chosen), _text("assistant", rejected)]
        key = row_key(messages, images)
        if key in seen:
            src.exclude("duplicate", f"the same prompt, chosen and rejected as {seen[key]}", subject,
                        "preference_pairs")
            continue
        seen[key] = subject
        base = row_lineage(src, rejected_t, task)
        rows.append(ExportRow(domain, messages, images, {
            **base, "pair_id": subject, "step_index": pair["step_index"], "domain": domain, "variant": variant,
            "apps": list(task.get("apps") or []), "instruction": task["instruction"],
            "chosen_trajectory_id": pair["chosen_trajectory_id"], "chosen_step_index": pair["chosen_step_index"],
            "rejected_trajectory_id": pair["rejected_trajectory_id"], "shared_steps": pair.get("shared_steps"),
            "failure_mode": pair["failure_mode"], "reason": pair["reason"],
            "image_width": steps[at].get("image_width"), "image_height": steps[at].get("image_height"),
            "image_sha256": list(images), "coords": target.coords, "action_format": target.action_format,
            "context": "recorded" if context is None else json.dumps(context.model_dump()),
        }))
    return rows



def fit_pair_rows(rows: list[ExportRow], images: dict[str, dict[str, Any]], budget: Budget, exclude) -> list[ExportRow]:
    """Pair rows fitted as a DPO trainer reads them: the prompt with one reply at a time
    (chosen, then rejected, each up to ``max_length``), so the budget holds the prompt and
    the longer reply, not both replies at once."""
    held: dict[int, tuple[int, dict[str, Any]]] = {}
    for row in rows:  # set the shorter reply aside while the row is fitted
        chosen, rejected = row.messages[-2], row.messages[-1]
        shorter = -2 if len(json.dumps(chosen)) <= len(json.dumps(rejected)) else -1
        held[id(row)] = (shorter, row.messages.pop(shorter))
    kept = fit_rows(rows, images, budget, True, exclude)
    for row in rows:
        shorter, message = held[id(row)]
        if shorter == -2:
            row.messages.insert(len(row.messages) - 1, message)
        else:
            row.messages.append(message)
    return kept
