"""Diagnoses at MAI-Gym's three levels, as rows of the ``diagnoses`` table.

Per task (action and trajectory level) the failed samples are compared with a successful one
(curation/differ.py); over all tasks (knowledge level) failure rates are aggregated and the
standouts reported (curation/knowledge.py). Every row carries its evidence (trajectory ids,
step indices) and a proposal the resynthesize stage turns into new tasks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guiforge.curation.differ import Departure, Step, first_departure, trajectory_flags
from guiforge.curation.knowledge import SampleFacts, Standout
from guiforge.lake.fingerprint import fingerprint

EXECUTION_ERRORS = {"wrong_element", "point_off_target", "wrong_text", "step_skipped", "other_action"}


@dataclass
class TaskSamples:
    task: dict[str, Any]
    trajectories: list[dict[str, Any]]  # valid ones (no environment failure)
    steps: dict[str, list[Step]]  # trajectory_id -> steps in order

    @property
    def successes(self) -> list[dict]:
        return [t for t in self.trajectories if t["success"]]

    @property
    def failures(self) -> list[dict]:
        return [t for t in self.trajectories if not t["success"]]

    def length(self) -> int:
        """How many steps the task takes: its successful samples' (failures wander), else
        its reference solution's."""
        if self.successes:
            return max(t["n_steps"] for t in self.successes)
        return len(json.loads(self.task.get("reference_json") or "[]"))


def task_samples(trajectories: list[dict], step_rows: list[dict], tasks: dict[str, dict]) -> list[TaskSamples]:
    """The samples of each task (in task order), from rows of ``trajectories`` (valid ones),
    ``steps`` and the task index; tasks not in the index are left out."""
    steps: dict[str, list[Step]] = {}
    for s in sorted(step_rows, key=lambda s: (s["trajectory_id"], s["step_index"])):
        steps.setdefault(s["trajectory_id"], []).append(Step.from_row(s))
    by_task: dict[str, list] = {}
    for t in sorted(trajectories, key=lambda t: (t["task_id"], t["sample_index"])):
        by_task.setdefault(t["task_id"], []).append(t)
    return [TaskSamples(tasks[tid], trs, {t["trajectory_id"]: steps.get(t["trajectory_id"], []) for t in trs})
            for tid, trs in sorted(by_task.items()) if tid in tasks]


def step_groups(step: Step, small_px: int) -> set[str]:
    out = {f"action_type:{step.type}"} if step.type else set()
    box = (step.target or {}).get("box")
    if box and step.type in ("click", "tap", "double_click", "right_click", "long_press"):
        out.add(f"target_size:<{small_px}px" if min(box[2], box[3]) < small_px else f"target_size:>={small_px}px")
    if step.type == "type" and (step.action or {}).get("text"):
        out.add("text:ascii" if step.action["text"].isascii() else "text:non_ascii")
    return out


def sample_groups(task: dict, length: int, long_steps: int) -> set[str]:
    out = {f"skill:{task['skill_id']}", f"domain:{task['domain']}"} | {f"app:{a}" for a in task.get("apps") or []}
    if length > long_steps:
        out.add(f"task_length:>{long_steps}")
    return out


def diagnosis_id(*parts: Any) -> str:
    return "dgn_" + fingerprint(list(parts), 14)


def _row(level: str, mode: str, task: dict | None, analysis: str, evidence: dict, proposal: dict,
         model: str, round_: int, prompt_hash: str | None = None, **extra: Any) -> dict:
    return {"diagnosis_id": diagnosis_id(level, mode, (task or {}).get("task_id"), evidence, round_),
            "task_id": (task or {}).get("task_id"), "level": level, "failure_mode": mode, "analysis": analysis,
            "evidence_json": json.dumps(evidence, ensure_ascii=False, default=str),
            "skill_id": (task or {}).get("skill_id", extra.get("skill_id")),
            "domain": (task or {}).get("domain", extra.get("domain")), "app": extra.get("app"),
            "proposal_json": json.dumps(proposal, ensure_ascii=False), "diagnoser_model": model,
            "prompt_hash": prompt_hash, "round": round_}


def describe_departure(d: Departure) -> str:
    detail = d.detail
    if d.failure_mode == "wrong_element":
        return f"at step {d.step_index} it acted on {detail.get('clicked')!r} instead of {detail.get('expected')!r}"
    if d.failure_mode == "point_off_target":
        return f"at step {d.step_index} its point was {detail.get('off_px')} px off {detail.get('expected')!r}"
    if d.failure_mode == "wrong_text":
        return f"at step {d.step_index} it typed {detail.get('typed')!r} instead of {detail.get('expected')!r}"
    if d.failure_mode == "step_skipped":
        return f"at step {d.step_index} it skipped a step the successful sample took"
    if d.failure_mode == "stopped_early":
        return f"it stopped at step {d.step_index} while the successful sample went on"
    return f"at step {d.step_index} it did something else than the successful sample"


def analyse_task(ts: TaskSamples, small_px: int, long_steps: int, model: str, round_: int
                 ) -> tuple[list[dict], list[SampleFacts]]:
    """Action- and trajectory-level rows of one task, and each sample's facts for the
    knowledge level."""
    task = ts.task
    rows: list[dict] = []
    facts: list[SampleFacts] = []
    reference = ts.successes[0] if ts.successes else None
    success_lengths = [t["n_steps"] for t in ts.successes]
    groups = sample_groups(task, ts.length(), long_steps)
    for t in ts.trajectories:
        steps = ts.steps.get(t["trajectory_id"], [])
        fact = SampleFacts(t["trajectory_id"], task["task_id"], not t["success"], groups,
                           [step_groups(s, small_px) for s in steps])
        facts.append(fact)
        if t["success"]:
            continue
        if reference is not None:
            d = first_departure(steps, ts.steps.get(reference["trajectory_id"], []))
            if d is not None:
                weak = sorted(step_groups(d.expected, small_px)) if d.expected and d.failure_mode in EXECUTION_ERRORS \
                    else []
                fact.departure_groups = set(weak)
                evidence = {"failed": t["trajectory_id"], "success": reference["trajectory_id"],
                            "failed_step": d.step_index, "success_step": d.expected_index, **d.detail, "groups": weak}
                rows.append(_row("action", d.failure_mode, task, describe_departure(d), evidence,
                                 {"strategy": "same_skill", "skill_id": task["skill_id"], "focus": weak}, model, round_))
        harness = json.loads(t.get("harness_json") or "{}")
        for mode, index, detail in trajectory_flags(steps, harness.get("status"), task.get("max_steps"),
                                                    success_lengths):
            evidence = {"trajectory": t["trajectory_id"], "step": index, **detail}
            rows.append(_row("trajectory", mode, task, f"{mode.replace('_', ' ')} at step {index}", evidence,
                             {"strategy": "same_skill", "skill_id": task["skill_id"], "focus": [mode]}, model, round_))
    return rows, facts


def proposal_for(s: Standout, skills: list[str]) -> dict:
    dim, value = s.key.split(":", 1)
    if dim == "app":
        return {"strategy": "sibling_cards", "app": value, "weakness": s.key}
    if dim == "domain":
        return {"strategy": "sibling_cards", "domain": value, "weakness": s.key}
    if dim == "action_type":
        return {"strategy": "sibling_cards", "action_type": value, "weakness": s.key}
    if dim == "skill":
        return {"strategy": "same_skill", "skills": [value], "weakness": s.key}
    return {"strategy": "same_skill", "skills": skills, "weakness": s.key}


def knowledge_rows(standouts: list[Standout], table: dict, tasks: dict[str, dict], model: str, round_: int,
                   unsolved: list[str] = ()) -> list[dict]:
    rows = []
    if unsolved:
        skills = sorted({tasks[t]["skill_id"] for t in unsolved if t in tasks})
        rows.append(_row("knowledge", "never_solved", None,
                         f"{len(unsolved)} task(s) no sample solved (skills: {', '.join(skills)}): broken or out of "
                         "reach, left out of the standouts", {"tasks": list(unsolved), "skills": skills},
                         {"strategy": "none"}, model, round_))
    for dim, groups in sorted(table.items()):
        rows.append(_row("knowledge", "rates", None, f"failure rate per {dim.replace('_', ' ')}",
                         {"dimension": dim, "groups": groups}, {"strategy": "none"}, model, round_))
    for s in standouts:
        skills = sorted({tasks[t]["skill_id"] for t in s.tasks if t in tasks})
        dim, value = s.key.split(":", 1)
        what = "samples fail" if s.unit == "samples" else "actions depart from a success"
        rows.append(_row(
            "knowledge", s.key, None,
            f"{s.key}: {s.rate:.0%} of {s.n} {what} against {s.rest_rate:.0%} elsewhere (z={s.z})",
            {"unit": s.unit, "n": s.n, "failures": s.failures, "rate": s.rate, "rest_rate": s.rest_rate, "z": s.z,
             "tasks": s.tasks, "trajectories": s.trajectories[:200]},
            proposal_for(s, skills), model, round_,
            skill_id=value if dim == "skill" else None, app=value if dim == "app" else None,
            domain=value if dim == "domain" else None))
    return rows
