"""The model diagnoser: a failed and a successful sample of one task side by side, through
the shared clients (structured output with the error fed back, cache, accounting). It
writes the action-level rows; the trajectory and knowledge levels stay rule-based."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from pydantic import BaseModel, Field

from guiforge.curation.diagnosis import TaskSamples, _row
from guiforge.curation.differ import Step
from guiforge.faults import unit
from guiforge.models.base import Message, prompt_hash
from guiforge.models.loop import run
from guiforge.models.structured import agenerate

MODES = ("wrong_element", "point_off_target", "wrong_text", "step_skipped", "stopped_early", "other_action")

SYSTEM = f"""You diagnose why a computer-use agent failed a task. You see the instruction and
two attempts side by side: one that succeeded and one that failed, step by step (action on
a 0-999 grid, the element under its point, any error the environment reported).
Find the first step where the failed attempt departs from the successful one in a way it
never repaired, and say how: one of {", ".join(MODES)}.
Reply with JSON only: {{"failure_mode": "...", "step_index": <failed attempt's step>,
"analysis": "<one sentence>", "proposal": "<what new practice tasks would help>"}}"""


class Diagnosis(BaseModel):
    failure_mode: Literal["wrong_element", "point_off_target", "wrong_text", "step_skipped", "stopped_early",
                          "other_action"]
    step_index: int = Field(ge=0)
    analysis: str = Field(min_length=3, max_length=2000)
    proposal: str = Field(default="", max_length=2000)


def _listing(steps: list[Step]) -> str:
    lines = []
    for s in steps:
        action = {k: v for k, v in (s.action or {}).items() if v is not None}
        label = (s.target or {}).get("label")
        lines.append(f"  {s.index}. {json.dumps(action, ensure_ascii=False)}"
                     + (f" on \u201c{label}\u201d" if label else "") + (f"  [error: {s.error[:120]}]" if s.error else ""))
    return "\n".join(lines) or "  (no steps)"


def prompt(ts: TaskSamples, failed: dict, success: dict) -> list[Message]:
    text = (f"Instruction: {ts.task['instruction']}\n\nSuccessful attempt ({success['trajectory_id']}):\n"
            f"{_listing(ts.steps[success['trajectory_id']])}\n\nFailed attempt ({failed['trajectory_id']}):\n"
            f"{_listing(ts.steps[failed['trajectory_id']])}")
    return [Message("system", SYSTEM), Message("user", text)]


def diagnose_with_model(client, samples: list[TaskSamples], rows: list[dict], round_: int, concurrency: int
                        ) -> tuple[list[dict], list[tuple[dict, dict, str]]]:
    """``rows`` with every action-level row replaced by the model's diagnosis of the same
    pair (a parse or model failure keeps the differ's row, marked as such), and the
    (task, failed trajectory, error) of every pair whose call failed for good (a
    ``model_failure``)."""
    name = f"{client.config.provider}:{client.config.model}"
    pairs = [(ts, f, ts.successes[0]) for ts in samples if ts.successes for f in ts.failures]
    gate = asyncio.Semaphore(concurrency)

    async def one(ts, failed, success):
        messages = prompt(ts, failed, success)
        n = len(ts.steps[failed["trajectory_id"]])
        async with gate:
            with unit(ts.task["task_id"], failed["trajectory_id"]):  # for an injected fault (guiforge.faults)
                result = await agenerate(client, messages, Diagnosis, extra_check=lambda d: [] if d.step_index < n
                                         else [f"step_index {d.step_index} is past the failed attempt's last step "
                                               f"({n - 1})"])
        return messages, result

    async def everything():
        return await asyncio.gather(*(one(*p) for p in pairs))

    results = run(everything())
    by_failed = {(r["task_id"], json.loads(r["evidence_json"]).get("failed")): r for r in rows if r["level"] == "action"}
    out = [r for r in rows if r["level"] != "action"]
    failed_calls = []
    for (ts, failed, success), (messages, result) in zip(pairs, results, strict=True):
        offline = by_failed.get((ts.task["task_id"], failed["trajectory_id"]))
        if result.failure is not None:
            failed_calls.append((ts.task, failed, str(result.failure)))
        if not result.ok:
            why = "failed (model failure)" if result.failure is not None else "failed to parse"
            if offline is not None:
                out.append({**offline, "analysis": f"{offline['analysis']} (model diagnosis {why}: "
                                                   f"{result.errors[-1][:120]})"})
            continue
        d = result.value
        evidence = {"failed": failed["trajectory_id"], "success": success["trajectory_id"], "failed_step": d.step_index,
                    "groups": json.loads(offline["evidence_json"]).get("groups", []) if offline else []}
        out.append(_row("action", d.failure_mode, ts.task, d.analysis, evidence,
                        {"strategy": "same_skill", "skill_id": ts.task["skill_id"], "note": d.proposal,
                         "focus": evidence["groups"]}, name, round_, prompt_hash(messages)))
    return out, failed_calls
