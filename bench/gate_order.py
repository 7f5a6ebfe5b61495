"""Gating in the order of use: the task_gates stage with ``until: all`` (every candidate
package-gated, today's default) against ``until: N`` (candidates in the rollouts' order, in
waves, until N passed: what ``until: used`` does under a rollouts stage with ``tasks: N``),
on the same small pipeline.

    python bench/gate_order.py [--personas 6] [--per-world 4] [--tasks 6] [--seed 7]

Both runs stop after task_gates. Figures: the stage's wall time, candidates
judged, tasks passed; ``used`` must pass at least ``tasks`` and every task it passed must be
one ``all`` passed. The last line is one JSON object
``{"bench": "gate_order", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def config(args, until: str | int) -> dict:
    return {
        "name": "bench-gate-order", "seed": args.seed, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
        "stages": {
            "personas": {"count": args.personas, "shard_size": 8}, "worlds": {}, "skills": {},
            "task_candidates": {"per_world": args.per_world},
            "task_gates": {"until": until, "concurrency": 2, "instances_per_domain": 2, "shard_size": 6},
        },
    }


def gate(args, until: str | int, lake: str) -> dict:
    from guiforge.lake import Lake
    from guiforge.orchestration.compile import build_pipeline
    from guiforge.orchestration.runner import run_pipeline

    pipeline = build_pipeline(config(args, until), "bench/gate_order.py", lake=lake)
    summaries = {s.stage: s for s in run_pipeline(pipeline, executor="local")}
    got = Lake(lake)
    tasks = set(got.read_table("tasks", columns=["task_id"]).column("task_id").to_pylist())
    excluded = got.read_table("exclusions", columns=["stage"]).column("stage").to_pylist()
    return {"seconds": summaries["task_gates"].seconds, "judged": len(tasks) + excluded.count("task_gates"),
            "candidates": got.read_table("task_candidates", columns=["task_id"]).num_rows,
            "passed": len(tasks), "tasks": tasks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--personas", type=int, default=6)
    parser.add_argument("--per-world", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="bench-gate-order-") as tmp:
        started = time.perf_counter()
        everything = gate(args, "all", f"{tmp}/all")
        used = gate(args, args.tasks, f"{tmp}/used")
        wall = time.perf_counter() - started
    assert used["passed"] >= min(args.tasks, everything["passed"]), used
    assert used["tasks"] <= everything["tasks"], "a task passed only in the order of use"
    figures = {f"{name}_{k}": v for name, run in (("all", everything), ("used", used))
               for k, v in run.items() if k != "tasks"}
    figures.update(tasks_wanted=args.tasks, bench_wall_s=round(wall, 1))
    ratios = {"gate_time_used_over_all": round(used["seconds"] / everything["seconds"], 3),
              "judged_used_over_all": round(used["judged"] / everything["judged"], 3)}
    print(json.dumps({"bench": "gate_order", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
