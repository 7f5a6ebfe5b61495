"""The lake at scale: a million steps and 100k images, `guiforge stats` and three catalog
queries, before and after `guiforge lake compact`.

    python bench/lake.py [--steps 1000000] [--images 100000] [--steps-per-shard 132]
                         [--lake DIR] [--keep] [--repeat 3] [--before DIR] [--before-timeout 300]

Synthetic rows go through the lake's own writer (guiforge.lake.writer.commit_shard), shard
by shard as the pipeline commits them: a rollouts shard of ~132 steps (with its
trajectories and its new frames), a judge shard per 8 rollouts shards, the tasks in one
gate shard. Frames are tiny PNGs (distinct bytes, 16x10 pixels): the figures are about
files and rows, not image bytes. Then every figure is taken on the raw lake (one file per
shard and table) and again after compaction (guiforge.lake.compact.compact_run):

- ``stats_s``: `guiforge stats --lake DIR` in a fresh process (its imports included), and
  ``stats_in_process_s``: the same work once the imports are done;
- ``q_success_by_domain_s``: trajectories joined to tasks, success rate per domain;
- ``q_action_types_s``: steps per action type over every step;
- ``q_frames_per_trajectory_s``: steps joined to images by hash, the ten trajectories with
  the most distinct frames.

``--before DIR``: a checkout of older code (``git archive main | tar -x -C DIR``), whose
`guiforge stats` is timed once in a fresh process on the same compacted lake
(``before_stats_s``, ``before_over_after``; a run past ``--before-timeout`` counts as the
timeout, so the ratio is then a lower bound and ``before_timed_out`` says so).

The goal is 2 s for each on the compacted lake. The last line is one JSON object
``{"bench": "lake", "figures": {...}, "ratios": {...}}`` (ratios: raw over compacted).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = "bench-lake"
DOMAINS = ("web", "mobile", "desktop", "tools")
ACTIONS = ("click", "type", "scroll", "key", "drag", "answer", "terminate")
QUERIES = {
    "q_success_by_domain_s": "SELECT t.domain, count(*), avg(CAST(r.success AS INT)) FROM trajectories r "
                             "JOIN tasks t USING (task_id) GROUP BY 1 ORDER BY 1",
    "q_action_types_s": "SELECT action.type, count(*) FROM steps GROUP BY 1 ORDER BY 2 DESC",
    "q_frames_per_trajectory_s": "SELECT s.trajectory_id, count(DISTINCT i.sha256) AS frames FROM steps s "
                                 "JOIN images i ON s.image_sha256 = i.sha256 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def png(i: int) -> bytes:
    from PIL import Image

    im = Image.frombytes("L", (16, 10), i.to_bytes(8, "big") * 20)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def build(lake_dir: str, args) -> dict:
    """Commit the synthetic run shard by shard; returns counts and the write time."""
    from guiforge.lake import Lake, ShardCommit, commit_shard, sha256_bytes

    lake = Lake(lake_dir)
    rng = random.Random(7)
    n_tasks = max(4, args.steps // 1000)
    tasks = [{"task_id": f"tsk_{i:06d}", "domain": DOMAINS[i % 4], "skill_id": f"skill.{i % 60}",
              "instruction": f"do thing {i}", "apps": ["app"], "round": 0} for i in range(n_tasks)]
    commit_shard(lake, ShardCommit("task_gates", RUN, "gates-all", "gates[all]"), {"tasks": tasks})
    steps_per_trajectory = 10
    shards = -(-args.steps // args.steps_per_shard)
    images_per_shard = args.images / shards
    made_images = made_steps = made_trajectories = 0
    judge_rows: list[dict] = []
    started = time.perf_counter()
    for s in range(shards):
        n = min(args.steps_per_shard, args.steps - made_steps)
        want_images = round((s + 1) * images_per_shard) - made_images
        frames = [png(made_images + k) for k in range(want_images)] or [png(made_images)]
        shas = [sha256_bytes(f) for f in frames]
        images = [{"sha256": h, "data": f, "width": 16, "height": 10, "format": "png"}
                  for h, f in zip(shas, frames, strict=True)][:want_images]
        trajectories, steps = [], []
        for k in range(n):
            if k % steps_per_trajectory == 0:
                tid = f"trj_{made_trajectories:08d}"
                made_trajectories += 1
                task = tasks[rng.randrange(n_tasks)]
                success = rng.random() < 0.5
                trajectories.append({"trajectory_id": tid, "task_id": task["task_id"], "sample_index": 0,
                                     "success": success, "score": float(success), "env_failure": False,
                                     "n_steps": min(steps_per_trajectory, n - k), "tier": "depth"})
                judge_rows.append({"trajectory_id": tid, "task_id": task["task_id"], "domain": task["domain"],
                                   "skill_id": task["skill_id"], "judge": "judge", "success": success,
                                   "verifier_success": success, "agrees": True, "accepted": success})
            steps.append({"trajectory_id": tid, "step_index": k % steps_per_trajectory,
                          "image_sha256": shas[k % len(shas)], "image_width": 16, "image_height": 10,
                          "thought": "the button is on the right", "feedback": "clicked",
                          "action": {"type": ACTIONS[k % len(ACTIONS)], "x": rng.randrange(1000),
                                     "y": rng.randrange(1000)}})
        commit_shard(lake, ShardCommit("rollouts", RUN, f"rollouts-{s:06d}", f"rollouts[{s}]"),
                     {"trajectories": trajectories, "steps": steps, "images": images})
        made_steps += n
        made_images += len(images)
        if (s + 1) % 8 == 0 or s == shards - 1:
            commit_shard(lake, ShardCommit("judge", RUN, f"judge-{s:06d}", f"judge[{s}]"), {"judgments": judge_rows})
            judge_rows = []
        if s % 500 == 0:
            log(f"  {s}/{shards} shards ({time.perf_counter() - started:.0f} s)")
    return {"steps": made_steps, "images": made_images, "trajectories": made_trajectories, "tasks": n_tasks,
            "rollouts_shards": shards, "write_s": round(time.perf_counter() - started, 1)}


def files(lake_dir: str) -> int:
    return sum(1 for _ in Path(lake_dir).rglob("*.parquet"))


def timed_stats(lake_dir: str, repeat: int) -> float:
    """Median wall time of `guiforge stats` in a fresh process."""
    cli = Path(sys.executable).parent / "guiforge"
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([str(cli), "stats", "--lake", lake_dir], check=True, capture_output=True,
                       start_new_session=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def timed_stats_before(code_dir: str, lake_dir: str, timeout: float) -> tuple[float, bool]:
    """Wall time of the older code's `guiforge stats` (its own tree first on the path)."""
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "guiforge.cli", "stats", "--lake", lake_dir], check=True,
                       capture_output=True, start_new_session=True, cwd=code_dir, timeout=timeout,
                       env={**os.environ, "PYTHONPATH": code_dir})
    except subprocess.TimeoutExpired:
        return round(timeout, 3), True
    return round(time.perf_counter() - started, 3), False


def timed_stats_in_process(lake_dir: str, repeat: int) -> float:
    """Median wall time of what `guiforge stats` does once its imports are done."""
    from guiforge import cli

    times = []
    for _ in range(repeat):
        with cli.out.capture():
            started = time.perf_counter()
            cli._print_stats(lake_dir, None)
            times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def timed_queries(lake_dir: str, repeat: int) -> dict[str, float]:
    """Median wall time of each query on a fresh catalog connection."""
    from guiforge.catalog import open_catalog
    from guiforge.lake import Lake

    out = {}
    for name, sql in QUERIES.items():
        times = []
        for _ in range(repeat):
            con = open_catalog(Lake(lake_dir))
            try:
                started = time.perf_counter()
                con.execute(sql).fetchall()
                times.append(time.perf_counter() - started)
            finally:
                con.close()
        out[name] = round(statistics.median(times), 3)
    return out


def measure(lake_dir: str, repeat: int) -> dict[str, float]:
    return {"files": files(lake_dir), "stats_s": timed_stats(lake_dir, repeat),
            "stats_in_process_s": timed_stats_in_process(lake_dir, repeat), **timed_queries(lake_dir, repeat)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--images", type=int, default=100_000)
    ap.add_argument("--steps-per-shard", type=int, default=132, help="the default pipeline's ~132 steps a shard")
    ap.add_argument("--lake", help="build here (default: a temporary directory, removed unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", help="a checkout of older code to time `guiforge stats` of, on the compacted lake")
    ap.add_argument("--before-timeout", type=float, default=300.0)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from guiforge.lake import Lake
    from guiforge.lake.compact import compact_run

    lake_dir = args.lake or tempfile.mkdtemp(prefix="bench-lake-")
    try:
        log(f"building {args.steps} steps, {args.images} images at {lake_dir}")
        figures: dict = {"lake": lake_dir, **build(lake_dir, args)}
        raw = measure(lake_dir, args.repeat)
        log(f"raw: {raw}")
        started = time.perf_counter()
        compact_run(Lake(lake_dir), RUN)
        figures["compact_s"] = round(time.perf_counter() - started, 1)
        compacted = measure(lake_dir, args.repeat)
        log(f"compacted: {compacted}")
        if args.before:
            figures["before_stats_s"], figures["before_timed_out"] = timed_stats_before(
                args.before, lake_dir, args.before_timeout)
            log(f"before: {figures['before_stats_s']} s (timed out: {figures['before_timed_out']})")
    finally:
        if not args.keep and not args.lake:
            shutil.rmtree(lake_dir, ignore_errors=True)
    figures["raw"], figures["compacted"] = raw, compacted
    figures["goal_s"] = 2.0
    figures["cpus"] = os.cpu_count()
    ratios = {f"{k}_raw_over_compacted": round(raw[k] / compacted[k], 2) for k in compacted if k != "files"}
    ratios.update({f"{k}_over_goal": round(compacted[k] / 2.0, 3) for k in compacted if k != "files"})
    if args.before:
        ratios["before_over_after_stats_s"] = round(figures["before_stats_s"] / compacted["stats_s"], 2)
    print(json.dumps({"bench": "lake", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
