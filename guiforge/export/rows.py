"""Exported rows: one SFT row per step of an accepted trajectory, and one RL prompt per task
of the RL pool, each with the lineage columns that lead back to persona, world, skill, task,
trajectory and every model and prompt hash involved.

The SFT target is the assistant turn in the export's target (``export.target``: an action
format and a coordinate convention; by default the harness's ``{"thought", "action"}`` on the
0-999 grid); where a consistent relabel exists its thought (and, in the default target, its
assistant text) is the target, and a step whose relabel failed the consistency check is left
out with the reason. Past assistant turns in a row's history are written the same way (a
step without a consistent relabel shows its action alone, never the teacher's raw words),
so history and target read alike. What never becomes a target (``export.select``): a
task's other samples than its best, the teacher's deliberate mistakes, and repeats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guiforge.envs.actions import Action
from guiforge.export.prompts import (
    Prompt,
    convert,
    rebuild,
    recorded,
    text_message,
    trainer_messages,
)
from guiforge.export.rl_prompt import rl_system
from guiforge.export.select import best_of_n, mistake_turns, row_key
from guiforge.export.source import Source, harness_of
from guiforge.export.target import Target
from guiforge.harness.context import ContextPolicy
from guiforge.judge.tiers import TIER_RANK


@dataclass
class ExportRow:
    domain: str
    messages: list[dict[str, Any]]  # the prompt, then the assistant target
    images: list[str]  # sha256 per placeholder, in order
    columns: dict[str, Any]
    split: str = "train"


def row_lineage(src: Source, trajectory: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    world = src.worlds.get(task.get("world_id") or "", {})
    judgment = src.judgments.get(trajectory["trajectory_id"], {})
    return {
        "run_id": src.run_id, "persona_id": world.get("persona_id"), "world_id": task.get("world_id"),
        "scenario": world.get("scenario"), "world_builder": world.get("model") or world.get("builder"),
        "world_prompt_hash": world.get("prompt_hash"), "skill_id": task.get("skill_id"),
        "skill_version": task.get("skill_version"), "task_id": task["task_id"],
        "parent_task_id": task.get("parent_task_id"), "round": task.get("round"),
        "task_author_model": task.get("author_model"), "task_prompt_hash": task.get("prompt_hash"),
        "trajectory_id": trajectory["trajectory_id"], "sample_index": trajectory["sample_index"],
        "trajectory_success": trajectory["success"], "trajectory_score": trajectory["score"],
        "teacher_model": trajectory.get("teacher_model"), "teacher_prompt_hash": trajectory.get("prompt_hash"),
        "judge": judgment.get("judge"), "judge_model": judgment.get("judge_model"),
        "judge_prompt_hash": judgment.get("prompt_hash"), "accept_policy": judgment.get("accept_policy"),
    }


def _target(src: Source, step: dict[str, Any], target: Target, domain: str) -> tuple[str | None, dict[str, Any], str | None]:
    """(assistant text or None, relabel lineage, reason the step is left out or None)."""
    relabel = src.relabels.get((step["trajectory_id"], step["step_index"]))
    lineage = {"relabeler_model": None, "relabel_prompt_hash": None, "relabel_mode": None, "thought_source": "teacher"}
    if step.get("action") is None:
        return None, lineage, f"no valid action ({step.get('error') or 'parse failure'})"
    if step.get("error"):
        return None, lineage, f"the action failed in the environment: {step['error'][:160]}"
    thought = step.get("thought") or ""
    if relabel is not None:
        lineage = {"relabeler_model": relabel.get("relabeler_model"),
                   "relabel_prompt_hash": relabel.get("prompt_hash"), "relabel_mode": relabel.get("mode"),
                   "thought_source": "relabel"}
        if not relabel.get("consistent"):
            return None, lineage, f"relabel inconsistent with the action ({relabel.get('failed_check') or 'check failed'})"
        if target.is_recorded and relabel.get("assistant_text"):
            return relabel["assistant_text"], lineage, None
        thought = "" if relabel.get("mode") == "direct" else (relabel.get("thought") or thought)
    frame = (step.get("image_width") or 0, step.get("image_height") or 0)
    return target.encode(thought, step["action"], frame, domain), lineage, None


def recorded_in(harness: dict[str, Any]) -> Target:
    """The format and convention a trajectory's prompts and replies were recorded in (its
    ``harness_json``)."""
    return Target(harness.get("action_format") or "guiforge", harness.get("coords") or "grid999")


def history_reply(src: Source, step: dict[str, Any], target: Target, domain: str) -> str | None:
    """A past step's assistant turn in the relabelled style (None: keep the recorded reply,
    for a step with no action to show)."""
    if step.get("action") is None:
        return None
    relabel = src.relabels.get((step["trajectory_id"], step["step_index"]))
    thought = ""
    if relabel is not None and relabel.get("consistent"):
        if target.is_recorded and relabel.get("assistant_text"):
            return relabel["assistant_text"]
        thought = "" if relabel.get("mode") == "direct" else (relabel.get("thought") or "")
    if not thought and target.is_recorded:  # the relabel stage's direct mode: the action alone
        action = Action.model_validate({k: v for k, v in step["action"].items() if v is not None})
        return json.dumps({"action": action.model_dump(exclude_none=True)}, ensure_ascii=False)
    frame = (step.get("image_width") or 0, step.get("image_height") or 0)
    return target.encode(thought, step["action"], frame, domain)


def with_history(prompt: Prompt, past: list[dict[str, Any]], reply_for) -> Prompt:
    """``prompt`` with each recorded assistant turn (a past step's raw reply, in step order)
    replaced by ``reply_for(step)`` where that gives one."""
    out, cursor = [], 0
    for m in prompt:
        text = m["parts"][0] if m["role"] == "assistant" and m["parts"] and isinstance(m["parts"][0], str) else None
        if text is not None:
            j = next((j for j in range(cursor, len(past)) if past[j].get("raw_output") == text), None)
            if j is not None:
                cursor = j + 1
                reply = reply_for(past[j])
                if reply is not None:
                    m = {"role": "assistant", "parts": [reply, *m["parts"][1:]]}
        out.append(m)
    return out


def step_prompt(src: Source, steps: list[dict[str, Any]], i: int, domain: str, variant: str | None, source: Target,
                target: Target, context: ContextPolicy | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The trainer messages and image hashes of what the policy saw at ``steps[i]`` (a
    trajectory's steps in order): rebuilt under ``context``, past replies in the relabelled
    style where the trajectory has relabels, in the ``target`` format and convention."""
    prompt = rebuild(steps, i, context)
    if any((s["trajectory_id"], s["step_index"]) in src.relabels for s in steps):
        prompt = with_history(prompt, steps[:i], lambda s: history_reply(src, s, target, domain))
    return trainer_messages(convert(prompt, steps[: i + 1], domain, variant, target, source))


def _repeats(src: Source, trajectory: dict[str, Any]) -> int:
    return sum(bool((src.relabels.get((trajectory["trajectory_id"], s["step_index"])) or {}).get("duplicate_target"))
               for s in src.steps[trajectory["trajectory_id"]])


def _canonical(action: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in action.items() if v is not None}, sort_keys=True, ensure_ascii=False)


def sft_rows(src: Source, target: Target, context: ContextPolicy | None = None,
             per_task: int | None = 1, pool: list[dict[str, Any]] | None = None) -> list[ExportRow]:
    """One row per step of each task's best accepted trajectory (``per_task`` of them; None:
    every accepted one), leaving out mistakes and repeats (module docstring). ``pool``: other
    trajectories than the accepted ones (the partial tier's), whose steps that undid progress
    are never targets either."""
    rows = []
    partial = pool is not None
    chosen = best_of_n(src.trajectories if pool is None else pool, per_task,
                       lambda t, why: src.exclude("best_of_n", why, t["trajectory_id"], "trajectories"),
                       lambda t: _repeats(src, t), lambda t: TIER_RANK.get(src.tiers.get(t["trajectory_id"]), 0))
    seen: dict[str, str] = {}  # row_key -> the row that has it
    acted: dict[tuple[str, str, str], str] = {}  # (frame, action, instruction) -> the row that took it there
    for trajectory in chosen:
        task = src.tasks[trajectory["task_id"]]
        harness = harness_of(trajectory)
        variant = harness.get("variant") or task.get("variant")
        source = recorded_in(harness)
        steps = src.steps[trajectory["trajectory_id"]]
        mistakes = mistake_turns(trajectory)
        base = row_lineage(src, trajectory, task)
        for i, step in enumerate(steps):
            subject = f"{trajectory['trajectory_id']}#{step['step_index']}"
            if not step.get("prompt_json"):
                src.exclude("prompt", "step has no recorded prompt (collected before prompts were recorded)",
                            subject, "steps")
                continue
            if step["step_index"] in mistakes:
                src.exclude("teacher_mistake", f"the teacher's deliberate mistake ({mistakes[step['step_index']]}) "
                            "is never a target", subject, "steps")
                continue
            if partial and step.get("undoes_progress"):
                src.exclude("progress", "the step undid progress (partial tier)", subject, "steps")
                continue
            # a step the relabel stage marked a repeat repeats another sample's step, which best of
            # N may not export: repeats among the exported rows are caught below, whatever it marked
            reply, relabel_lineage, reason = _target(src, step, target, task["domain"])
            if reason:
                src.exclude("relabel" if "relabel" in reason else "step", reason, subject, "steps")
                continue
            messages, images = step_prompt(src, steps, i, task["domain"], variant, source, target, context)
            messages.append(text_message("assistant", reply))
            key = row_key(messages, images)
            if key in seen:
                src.exclude("duplicate", f"the same prompt and target as {seen[key]}", subject, "steps")
                continue
            frame = step.get("image_sha256") or ""
            # for the same instruction: two tasks that start with the same click on one screen are two rows
            doing = (frame, _canonical(step["action"]), task["instruction"])
            if frame and doing in acted:
                src.exclude("duplicate", f"the same action on the same frame for the same task as {acted[doing]}",
                            subject, "steps")
                continue
            seen[key] = subject
            if frame:
                acted[doing] = subject
            action = step["action"]
            rows.append(ExportRow(task["domain"], messages, images, {
                **base, **relabel_lineage, "step_index": step["step_index"], "domain": task["domain"],
                "variant": variant, "apps": list(task.get("apps") or []), "instruction": task["instruction"],
                "action_type": action["type"], "image_width": step.get("image_width"),
                "image_height": step.get("image_height"), "step_prompt_hash": step.get("prompt_hash"),
                "image_sha256": list(images), "coords": target.coords, "action_format": target.action_format,
                "context": "recorded" if context is None else json.dumps(context.model_dump()),
                "quality_tier": src.tiers.get(trajectory["trajectory_id"]),
            }))
    return rows


def rl_rows(src: Source, target: Target, world_json: dict[str, str], protocol: str = "tools") -> list[ExportRow]:
    """The RL pool as GRPO prompts: the step-0 prompt (system in the trainer's ``protocol``
    (``export.rl_prompt``), task, s0's screenshot) plus the task spec; ``task_json`` and
    ``world_json`` let the reward rebuild s0."""
    rows = []
    for pool in src.rl_tasks:
        task_id = pool["task_id"]
        first = src.first_steps.get(task_id)
        if first is None or not first.get("prompt_json"):
            src.exclude("rl_prompt", "no recorded first step to show s0", task_id, "rl_tasks")
            continue
        task = json.loads(pool["task_json"] or "{}") or src.tasks.get(task_id, {})
        source = recorded_in(src.first_harness.get(task_id, {}))
        prompt = convert(recorded(first), [first], pool["domain"], task.get("variant"), target, source)
        frame = (first.get("image_width") or 0, first.get("image_height") or 0)
        prompt = [{"role": "system", "parts": [rl_system(target, protocol, pool["domain"], task.get("variant"), frame)]}
                  if m["role"] == "system" else m for m in prompt]
        messages, images = trainer_messages(prompt)
        rows.append(ExportRow(pool["domain"], messages, images, {
            "run_id": src.run_id, "task_id": task_id, "domain": pool["domain"], "variant": task.get("variant"),
            "skill_id": pool["skill_id"], "world_id": pool["world_id"], "apps": list(pool.get("apps") or []),
            "instruction": pool["instruction"], "success_rate": pool["success_rate"],
            "n_samples": pool["n_samples"], "n_valid": pool["n_valid"], "n_success": pool["n_success"],
            "selected_reason": pool.get("selected_reason"), "max_steps": task.get("max_steps"),
            "task_json": _without_gate(pool["task_json"]), "world_json": world_json.get(pool["world_id"] or ""),
            "image_width": first.get("image_width"), "image_height": first.get("image_height"),
            "image_sha256": list(images), "coords": target.coords, "action_format": target.action_format,
            "rl_protocol": protocol,
            # the run's kinds and check plugins: the reward replays and scores the task as the run did
            "envs_json": json.dumps(src.envs, sort_keys=True), "checks_json": json.dumps(src.checks),
            # the frames the reward's and the environment's phone screens must match
            "phone_screenshots": src.first_harness.get(task_id, {}).get("phone_screenshots"),
        }))
    return rows


def _without_gate(task_json: str | None) -> str | None:
    """The task as an RL row carries it: what the environment and reward need, less the
    package gate's record (how long the gate took is no property of the task, and would
    make two exports of one run differ)."""
    if not task_json:
        return task_json
    task = json.loads(task_json)
    task.pop("gate_json", None)
    return json.dumps(task, ensure_ascii=False, default=str)
