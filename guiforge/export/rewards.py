"""Step rows labelled with dense progress (``steps.progress``): what the policy saw (screen and
history), the action it took, and what that action did to the rubric.

- ``rl_steps`` (the RL export): every step of the valid samples of the RL pool's tasks, with
  its per-step ``reward`` (the progress delta), the progress after it, ``done`` and the
  sample's outcome: dense rewards beside the pool's GRPO prompts.
- ``prm`` (an export option): the same rows for every valid trajectory of the run, for
  training a process reward model (screen, history, action -> progress delta).

Every action is labelled, mistakes and steps that undid progress included: a reward model
learns from them. Steps with no action (a parse failure) or no recorded prompt have no row.
"""

from __future__ import annotations

from typing import Any

from guiforge.export.prompts import convert, rebuild, text_message, trainer_messages
from guiforge.export.rows import ExportRow, recorded_in
from guiforge.export.source import Source, harness_of
from guiforge.export.target import Target
from guiforge.harness.context import ContextPolicy


def progress_rows(src: Source, target: Target, context: ContextPolicy | None,
                  trajectories: list[dict[str, Any]]) -> list[ExportRow]:
    """One row per acted step of ``trajectories`` that carries progress."""
    rows = []
    for t in trajectories:
        steps = src.steps.get(t["trajectory_id"]) or []
        if not steps or steps[-1].get("progress") is None:
            continue  # rolled out before progress was tracked
        task = src.tasks[t["task_id"]]
        harness = harness_of(t)
        variant = harness.get("variant") or task.get("variant")
        last = steps[-1]["step_index"]
        for i, step in enumerate(steps):
            if step.get("action") is None or not step.get("prompt_json"):
                continue
            prompt = convert(rebuild(steps, i, context), steps[: i + 1], task["domain"], variant, target,
                             recorded_in(harness))
            messages, images = trainer_messages(prompt)
            frame = (step.get("image_width") or 0, step.get("image_height") or 0)
            messages.append(text_message("assistant", target.encode("", step["action"], frame, task["domain"])))
            rows.append(ExportRow(task["domain"], messages, images, {
                "run_id": src.run_id, "task_id": t["task_id"], "world_id": task.get("world_id"),
                "skill_id": task.get("skill_id"), "domain": task["domain"], "instruction": task["instruction"],
                "trajectory_id": t["trajectory_id"], "sample_index": t["sample_index"],
                "step_index": step["step_index"], "action_type": step["action"]["type"],
                "reward": step["progress_delta"], "progress": step["progress"],
                "progress_before": round(step["progress"] - step["progress_delta"], 6),
                "undoes_progress": bool(step.get("undoes_progress")),
                "criteria_flips_json": step.get("criteria_flips_json"), "done": step["step_index"] == last,
                "trajectory_success": t["success"], "quality_tier": src.tiers.get(t["trajectory_id"]),
                "image_width": step.get("image_width"), "image_height": step.get("image_height"),
                "image_sha256": list(images), "coords": target.coords, "action_format": target.action_format,
            }))
    return rows


def rl_step_rows(src: Source, target: Target, context: ContextPolicy | None) -> list[ExportRow]:
    """The RL pool's samples, step by step, with their dense rewards."""
    pool = {r["task_id"] for r in src.rl_tasks}
    return progress_rows(src, target, context, [t for t in src.valid if t["task_id"] in pool])
