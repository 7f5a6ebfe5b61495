"""The fault-injection battery: the smoke pipeline with every kind of fault injected (its
``faults:`` section), its model roles served by local endpoints through the official SDKs,
run with ``guiforge run``; then a check that every injected fault is a row of its kind, that
no row of a failure kind lacks its injection, and that no fault is ever a reward (no outcome,
never accepted, never in the RL counts, the relabels, the diagnoses or the exports).

``bench/fault_battery.py`` runs it and prints the JSON summary; ``tests/test_fault_battery.py``
runs the short variant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from guiforge.batteries.agents import AnswerTeacher, VerdictJudge
from guiforge.failures import FAULT_KINDS, failure_kind, is_fault
from guiforge.faults import Injection
from guiforge.faults.log import read_log
from guiforge.lake.store import Lake
from guiforge.testing.model_server import ModelServer

KEY_ENV = "GUIFORGE_BATTERY_KEY"


def every_fault(rate: float) -> dict[str, dict[str, float]]:
    return {"env": dict.fromkeys(("crash", "hang", "lose_page"), rate),
            "model": dict.fromkeys(("rate_limit", "server_error", "timeout", "truncated", "malformed"), rate),
            "verifier": dict.fromkeys(("crash", "hang"), rate)}


# The CI variant: fewer units, at rates that leave about half the episodes sound (the AnswerTeacher
# solves only blind-scripted tools tasks, on even samples). The draws are a function of the
# config and the task ids alone, so SHORT_SEED fixes which units meet a fault; it is one under
# which the gates, the rollouts and the judge each meet one, with every failure kind among them
# (a change to the smoke pipeline's task ids may need another: `bench/fault_battery.py --short
# --seed N` shows what a seed meets).
SHORT_RATES = {"env": {"crash": 0.1, "hang": 0.03, "lose_page": 0.1},
               "model": dict.fromkeys(("rate_limit", "server_error", "timeout", "truncated", "malformed"), 0.03),
               "verifier": {"crash": 0.12, "hang": 0.03}}
SHORT_SEED, SEED = 197, 3


def battery_pipeline(lake: str, teacher_url: str, judge_url: str, rates: dict | None = None, seed: int = SEED,
                     short: bool = False) -> dict[str, Any]:
    """The smoke pipeline (data/pipelines/smoke.yaml) with every fault at 10% (or ``rates``);
    ``short``: fewer personas, candidates and rollouts, no desktop (a couple of minutes)."""
    size = ({"personas": 4, "per_world": 3, "tasks": 4, "samples": 3, "gates": 6} if short else
            {"personas": 8, "per_world": 6, "tasks": 8, "samples": 4, "gates": 12})
    endpoint = {"api_key_env": KEY_ENV, "timeout_s": 2, "max_retries": 1, "cache": False}
    rates = rates or (SHORT_RATES if short else every_fault(0.1))
    candidates = {"per_world": size["per_world"], **({"domains": ["web", "mobile", "tools"]} if short else {})}
    return {
        "name": "fault-battery" + ("-short" if short else ""), "lake": lake, "seed": 11, "workers": 2,
        # nearly every unit meets a fault here: the run must finish, not stop at a share
        "max_failure_share": 1.0,
        "faults": {"seed": seed, **rates},
        "models": {"world_builder": {"provider": "offline"}, "task_author": {"provider": "offline"},
                   "teacher": {"provider": "openai", "model": "battery-teacher", "base_url": teacher_url, "seed": 0,
                               **endpoint},
                   "judge": {"provider": "anthropic", "model": "battery-judge", "base_url": judge_url, **endpoint},
                   "relabeler": {"provider": "offline"}, "diagnoser": {"provider": "offline"}},
        "stages": {
            "personas": {"count": size["personas"], "shard_size": 4}, "worlds": {}, "skills": {},
            "task_candidates": candidates,
            "task_gates": {"concurrency": 2, "shard_size": size["gates"]},
            "rollouts": {"samples": size["samples"], "tasks": size["tasks"], "tasks_per_shard": 2, "concurrency": 2,
                         "phone_screenshots": "css"},
            "judge": {"key_frames": 2},
            "rl_select": {"budget": 4, "min_valid": 2},
            "relabel": {"reasoning_ratio": 0.5},
            "diagnose": {},
            # unfitted rows (max_length None): the check is that sound trajectories are exported and
            # faults are not, whatever their length
            "export": {"formats": ["hf"], "max_length": None, "reads": ["trajectories", "steps", "images", "tasks", "worlds", "judgments",
                                                   "rl_tasks", "relabels"]},
        },
    }


@dataclass
class BatteryResult:
    exit_code: int
    seconds: float
    output: str
    run_id: str | None = None
    injected: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> failure kind -> n
    # what the injections must leave: one row each, but a gate's fault only when its retry met one too
    expected: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> failure kind -> n
    sound: dict[str, int] = field(default_factory=dict)  # what the faults left to train on
    problems: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        expected = sum(n for kinds in self.expected.values() for n in kinds.values())
        rows = sum(n for kinds in self.rows.values() for n in kinds.values())
        return {"bench": "fault_battery",
                "figures": {"exit_code": self.exit_code, "seconds": round(self.seconds, 1), "run_id": self.run_id,
                            "injected": self.injected, "expected_rows": self.expected, "rows": self.rows,
                            "sound": self.sound, "problems": self.problems[:20]},
                "ratios": {"fault_rows_per_expected": round(rows / expected, 4) if expected else None}}


def run_battery(workdir: Path, rates: dict | None = None, seed: int | None = None, short: bool = False,
                executor: str = "local") -> BatteryResult:
    """Write the battery's pipeline file, run ``guiforge run`` on it, check the lake."""
    seed = seed if seed is not None else SHORT_SEED if short else SEED
    workdir.mkdir(parents=True, exist_ok=True)
    lake = str(workdir / "lake")
    teacher = AnswerTeacher(lake)
    with ModelServer(teacher) as teacher_server, ModelServer(VerdictJudge()) as judge_server:
        config = battery_pipeline(lake, teacher_server.openai_base_url, judge_server.anthropic_base_url, rates, seed,
                                  short)
        path = workdir / "battery.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(path), "--executor", executor],
                              capture_output=True, text=True, env={**os.environ, KEY_ENV: "sk-battery"})
        seconds = time.perf_counter() - started
    result = BatteryResult(done.returncode, seconds, (done.stdout + done.stderr)[-4000:])
    if done.returncode == 0:
        check(Lake(lake), result)
    else:
        result.problems.append(f"guiforge run exited {done.returncode}: {result.output[-600:]}")
    return result


def check(lake: Lake, result: BatteryResult) -> None:
    """Every injection a row of its kind, every row of a fault kind an injection, no reward."""
    runs = lake.runs("trajectories")
    result.run_id = run = runs[0] if len(runs) == 1 else None
    if run is None:
        result.problems.append(f"expected one run with trajectories, found {runs}")
        return
    injections = read_log(lake, run)
    by_stage: dict[str, list[Injection]] = {}
    for i in injections:
        by_stage.setdefault(i.stage, []).append(i)
        result.injected.setdefault(i.stage, Counter())[i.failure_kind] += 1
    trajectories = lake.read_table("trajectories", run).to_pylist()
    _rollouts(by_stage.get("rollouts", []), trajectories, result)
    _gates(by_stage.get("task_gates", []), lake.read_table("exclusions", run).to_pylist(), result)
    _judge(by_stage.get("judge", []), trajectories, lake.read_table("judgments", run).to_pylist(), result)
    _never_rewarded(lake, run, trajectories, result)
    result.injected = {s: dict(k) for s, k in result.injected.items()}
    result.expected = {s: dict(k) for s, k in result.expected.items()}
    result.rows = {s: dict(k) for s, k in result.rows.items()}


def _rollouts(injected: list[Injection], trajectories: list[dict], result: BatteryResult) -> None:
    rows = {(t["task_id"], t["sample_index"]): t for t in trajectories}
    seen = set()
    for i in injected:
        result.expected.setdefault("rollouts", Counter())[i.failure_kind] += 1
        row = rows.get((i.task, i.sample))
        seen.add((i.task, i.sample))
        if row is None or row["failure_kind"] != i.failure_kind:
            result.problems.append(f"rollouts: {i} left {row and row['failure_kind']!r}, not a {i.failure_kind}")
    for key, t in rows.items():
        if is_fault(t):
            result.rows.setdefault("rollouts", Counter())[t["failure_kind"]] += 1
            if key not in seen:
                result.problems.append(f"rollouts: {t['trajectory_id']} is a {t['failure_kind']} nobody injected: "
                                       f"{t['error']}")


def _gates(injected: list[Injection], exclusions: list[dict], result: BatteryResult) -> None:
    """A gate meets a fault on each of its two attempts before the fault is its exclusion."""
    attempts: dict[str, dict[int, Injection]] = {}
    for i in injected:
        attempts.setdefault(i.task, {})[int(i.sample)] = i
    faulted = {e["subject_id"]: e for e in exclusions if e["stage"] == "task_gates" and e["gate"] in FAULT_KINDS}
    for e in faulted.values():
        result.rows.setdefault("task_gates", Counter())[e["gate"]] += 1
    for task, tries in attempts.items():
        expected = tries[1].failure_kind if set(tries) == {0, 1} else None
        if expected:
            result.expected.setdefault("task_gates", Counter())[expected] += 1
        got = faulted.get(task, {}).get("gate")
        if got != expected:
            result.problems.append(f"task_gates: {task} met {sorted((k, v.kind) for k, v in tries.items())}, "
                                   f"excluded as {got!r}, expected {expected!r}")
    for task, e in faulted.items():
        if task not in attempts:
            result.problems.append(f"task_gates: {task} excluded as {e['gate']} nobody injected: {e['reason']}")


def _judge(injected: list[Injection], trajectories: list[dict], judgments: list[dict], result: BatteryResult) -> None:
    ids = {(t["task_id"], t["sample_index"]): t["trajectory_id"] for t in trajectories}
    expected = {ids.get((i.task, int(str(i.sample).split("/")[0]))) for i in injected}
    if expected:
        result.expected["judge"] = Counter({"model_failure": len(expected)})
    failed = {j["trajectory_id"] for j in judgments if j["failure_kind"] in FAULT_KINDS}
    result.rows["judge"] = Counter({"model_failure": len(failed)}) if failed else Counter()
    for trajectory in sorted(expected ^ failed, key=str):
        result.problems.append(f"judge: {trajectory}: injected {trajectory in expected}, a model_failure "
                               f"{trajectory in failed}")


def _never_rewarded(lake: Lake, run: str, trajectories: list[dict], result: BatteryResult) -> None:
    faults = {t["trajectory_id"]: t for t in trajectories if is_fault(t)}
    for t in faults.values():
        if t["success"] is not None or t["score"] is not None or t["criteria_json"] != "null":
            result.problems.append(f"{t['trajectory_id']}: a {failure_kind(t)} with an outcome: {t['success']}, "
                                   f"{t['score']}")
    for j in lake.read_table("judgments", run).to_pylist():
        if j["trajectory_id"] in faults and (j["accepted"] or j["verifier_success"] is not None):
            result.problems.append(f"judgments: {j['trajectory_id']} is a fault, yet accepted={j['accepted']}")
    valid: dict[str, list[dict]] = {}
    for t in trajectories:
        if not is_fault(t) and t["success"] is not None:
            valid.setdefault(t["task_id"], []).append(t)
    for r in lake.read_table("rl_tasks", run).to_pylist():
        samples = valid.get(r["task_id"], [])
        if r["n_valid"] != len(samples) or r["n_success"] != sum(bool(t["success"]) for t in samples):
            result.problems.append(f"rl_tasks: {r['task_id']} counts {r['n_valid']} valid / {r['n_success']} "
                                   f"successes, the lake has {len(samples)} / {sum(bool(t['success']) for t in samples)}")
    for table, column in (("relabels", "trajectory_id"), ("diagnoses", "evidence_json")):
        for r in lake.read_table(table, run).to_pylist():
            ids = [r[column]] if column == "trajectory_id" else list(json.loads(r[column] or "{}").values())
            hit = sorted(x for x in ids if isinstance(x, str) and x in faults)
            if hit:
                result.problems.append(f"{table}: a row refers to a fault trajectory {hit[0]}")
    exported = _exported_trajectories(lake, run)
    result.sound = {"trajectories": len(trajectories) - len(faults), "exported_trajectories": len(exported),
                    "rl_tasks": lake.read_table("rl_tasks", run).num_rows}
    if exported & set(faults):
        result.problems.append(f"exports: {len(exported & set(faults))} fault trajectories in the SFT data")
    if not exported:
        result.problems.append("exports: no SFT rows at all (the battery should leave some sound trajectories)")


def _exported_trajectories(lake: Lake, run: str) -> set[str]:
    import pyarrow.parquet as pq

    out: set[str] = set()
    for e in lake.read_table("exports", run).to_pylist():
        if e["kind"] == "rl":
            continue
        for f in Path(e["path"]).rglob("*.parquet"):
            schema = pq.read_schema(f)
            if "trajectory_id" in schema.names:
                out.update(pq.read_table(f, columns=["trajectory_id"]).column("trajectory_id").to_pylist())
    return out
