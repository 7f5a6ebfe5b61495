"""Does the diagnoser find the weaknesses planted in the teacher, and only those?

    python bench/diagnosis.py [--personas 8] [--tasks 28] [--samples 6] [--seed 5]
                              [--weak-app mail] [--small-targets 0] [--lake DIR]

Runs the loop offline on a fresh lake: personas -> worlds -> tasks -> gates -> rollouts by
the scripted teacher with a quiet noise everywhere plus three planted weaknesses
(``rollouts.weaknesses``: misclicks in one app, wrong values when typing, early stops past
step 10; ``--small-targets R`` adds misclicks on targets under 24 px, which the shipped apps
have too few of for a quick run to measure) -> relabel (verifier-accepted samples) -> diagnose -> one resynthesis
round (gates, rollouts, relabel, diagnose again). Then it scores round 0's knowledge-level
standouts against the planted keys (tasks no sample solved are reported apart, as
``never_solved``, and are not standouts):

- recall: planted weaknesses the diagnoser reported / planted (goal >= 0.8);
- precision: reported standouts that are planted / reported (goal >= 0.8);
- round-1 targeting: the share of round-1 tasks that exercise a planted weakness, checked on
  the task and its own rollouts (the weak app among its apps, a typing step, more than 10
  steps, a target under 24 px in one of its samples), and the share whose diagnosis names a planted one
  (goal >= 0.6);
- relabel consistency: consistent relabels / relabels, beside the same check on the
  teacher's original thoughts (a misclick's thought names the element it missed).

The last line is one JSON object ``{"bench": "diagnosis", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


# A quieter teacher than the default noise, so the planted weaknesses are the loud part; the
# same mistakes of every kind still happen everywhere (the rest a standout is measured against).
NOISE = {"misclick": 0.02, "recover": 0.5, "skip": 0.01, "wrong_value": 0.03, "early_stop": 0.005,
         "malformed": 0.01, "spread": 0.5}


def pipeline(args) -> dict:
    return {
        "name": "bench-diagnosis", "seed": args.seed, "workers": 2,
        "models": {role: {"provider": "offline"} for role in ("world_builder", "task_author", "teacher",
                                                              "relabeler", "diagnoser")},
        "stages": {
            "personas": {"count": args.personas, "shard_size": 4}, "worlds": {}, "skills": {},
            "task_candidates": {"per_world": 8},
            "task_gates": {"concurrency": 2, "shard_size": 12},
            "rollouts": {"samples": args.samples, "tasks": args.tasks, "tasks_per_shard": 2, "concurrency": 2,
                         "phone_screenshots": "css",
                         "noise": NOISE,
                         "weaknesses": {"weak_app": args.weak_app, "weak_app_misclick": 0.3,
                                        "weak_action": "type", "weak_action_rate": 0.3,
                                        "long_task_early_stop": 0.15,
                                        "small_target_misclick": args.small_targets}},
            "relabel": {"accepted_from": "verifier"},
            "diagnose": {},
            "resynthesize": {"rounds": 1, "tasks_per_round": args.round_tasks},
        },
    }


def exercised(task: dict, trajectories: list[dict], steps: list[dict], weak_app: str) -> set[str]:
    """The planted weaknesses a round-1 task actually exercises, from its row and its samples."""
    out = set()
    if weak_app in (task["apps"] or []):
        out.add(f"app:{weak_app}")
    if any(t["n_steps"] > 10 for t in trajectories) or len(json.loads(task["reference_json"] or "[]")) > 10:
        out.add("task_length:>10")
    if any(s.get("do") == "type" for s in json.loads(task["reference_json"] or "[]")) or \
            any(s["action"]["type"] == "type" for s in steps):
        out.add("action_type:type")
    for s in steps:
        box = (json.loads(s["target_json"]) if s["target_json"] else {}).get("box")
        if box and min(box[2], box[3]) < 24 and s["action"]["type"] in ("click", "tap"):
            out.add("target_size:<24px")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--personas", type=int, default=8)
    ap.add_argument("--tasks", type=int, default=28, help="round-0 tasks rolled out")
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--round-tasks", type=int, default=12, help="round-1 candidates")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--weak-app", default="mail")
    ap.add_argument("--small-targets", type=float, default=0.0,
                    help="also plant misclicks on targets under 24 px at this rate (rare in the shipped apps)")
    ap.add_argument("--lake", default=None, help="lake directory (default: a temporary one)")
    args = ap.parse_args()

    from guiforge.curation.consistency import check_consistency
    from guiforge.lake import Lake
    from guiforge.orchestration.compile import build_pipeline
    from guiforge.orchestration.runner import run_pipeline
    from guiforge.teacher.weaknesses import Weaknesses

    lake_dir = args.lake or tempfile.mkdtemp(prefix="bench-diagnosis-")
    cfg = pipeline(args)
    planted = set(Weaknesses.model_validate(cfg["stages"]["rollouts"]["weaknesses"]).planted())
    started = time.perf_counter()
    for s in run_pipeline(build_pipeline(cfg, "bench/diagnosis.py", lake=lake_dir), executor="local"):
        print(f"{s.stage}: ran {s.ran}, rows {s.rows}, {s.seconds}s", file=sys.stderr)
    wall = time.perf_counter() - started

    lake = Lake(lake_dir)
    diagnoses = lake.read_table("diagnoses").to_pylist()
    reported = [d for d in diagnoses if d["level"] == "knowledge" and d["round"] == 0
                and d["failure_mode"] not in ("rates", "never_solved")]
    never = [d for d in diagnoses if d["failure_mode"] == "never_solved" and d["round"] == 0]
    keys = {d["failure_mode"] for d in reported}
    found = planted & keys
    recall = len(found) / len(planted)
    precision = len(found) / len(keys) if keys else 0.0

    tasks = lake.read_table("tasks").to_pylist()
    trajectories = lake.read_table("trajectories").to_pylist()
    steps = lake.read_table("steps").to_pylist()
    by_task: dict[str, list] = {}
    for t in trajectories:
        by_task.setdefault(t["task_id"], []).append(t)
    steps_by_traj: dict[str, list] = {}
    for s in steps:
        if s["action"]:
            steps_by_traj.setdefault(s["trajectory_id"], []).append(s)
    by_id = {d["diagnosis_id"]: d for d in diagnoses}
    round1 = [t for t in tasks if t["round"] == 1]
    hits_exercise = hits_diagnosis = 0
    for t in round1:
        trs = by_task.get(t["task_id"], [])
        if exercised(t, trs, [s for tr in trs for s in steps_by_traj.get(tr["trajectory_id"], [])], args.weak_app) \
                & planted:
            hits_exercise += 1
        d = by_id.get(t["diagnosis_id"])
        if d is not None and d["failure_mode"] in planted:
            hits_diagnosis += 1

    relabels = lake.read_table("relabels").to_pylist()
    step_index = {(s["trajectory_id"], s["step_index"]): s for s in steps}
    originals = 0
    for r in relabels:
        s = step_index[(r["trajectory_id"], r["step_index"])]
        target = json.loads(s["target_json"]) if s["target_json"] else None
        originals += check_consistency(s["thought"] or "", s["action"], target) is None
    consistent = sum(bool(r["consistent"]) for r in relabels)
    figures = {
        "planted": sorted(planted), "reported": sorted(keys), "found": sorted(found),
        "reported_detail": [d["analysis"] for d in reported],
        "recall": round(recall, 3), "precision": round(precision, 3),
        "round0_tasks": sum(1 for t in tasks if t["round"] == 0 and t["task_id"] in by_task),
        "round0_trajectories": sum(len(by_task.get(t["task_id"], [])) for t in tasks if t["round"] == 0),
        "round0_never_solved_tasks": len(json.loads(never[0]["evidence_json"])["tasks"]) if never else 0,
        "round1_tasks": len(round1),
        "round1_targeting_share_exercised": round(hits_exercise / len(round1), 3) if round1 else None,
        "round1_targeting_share_by_diagnosis": round(hits_diagnosis / len(round1), 3) if round1 else None,
        "relabels": len(relabels),
        "relabel_consistency_rate": round(consistent / len(relabels), 3) if relabels else None,
        "original_thought_consistency_rate": round(originals / len(relabels), 3) if relabels else None,
        "wall_s": round(wall, 1), "loadavg_1m": round(os.getloadavg()[0], 2), "lake": lake_dir,
    }
    ratios = {"relabel_vs_original_consistency": round(consistent / originals, 3) if originals else None}
    print(json.dumps({"bench": "diagnosis", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
