"""The judge: the offline judge's agreement with the code verifier, and the judge stage's
throughput against a rate-limited, heavy-tailed model server.

    python bench/judge.py [--lake data/lake] [--run-id ID] [--trajectories 384] [--limit 16]
                          [--median-ms 200] [--p99-ms 2000] [--seed 7] [--skip agreement,throughput]

Agreement: the offline judge (tesseract OCR over the key screenshots + the action trace) is
run by the judge stage's own code (JudgeStage.run, rows returned, no shard written; OCR
text is cached in the lake's _cache/ocr, so a second run reads no frame again) over every trajectory of the lake's run (default: data/lake, the default run's lake,
if it holds trajectories; else a small lake made under /tmp with the scripted teacher; the
figures say which). Precision, recall and accuracy against the verifier, per domain and in
all, plus the stage's wall time and OCR reads.

Throughput: the same stage with a model judge (OpenAI wire format, official SDK) over the
lake's trajectories (up to ``--trajectories``), against guiforge.testing.model_server in its
own process: at most ``--limit`` requests at once, 429 with retry-after beyond, lognormal
latency (median 200 ms, p99 2 s) seeded by the request's text. The ideal is
``limit / mean latency`` (every slot always busy); ``schedule_bound`` is a zero-overhead
client's rate on the same calls in the same order, as in bench/models.py. The last line is
one JSON object ``{"bench": "judge", "figures": {...}, "ratios": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _rate_limited_server import schedule_bound_s, serve

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def small_lake_config() -> dict:
    return {
        "name": "bench-judge", "seed": 7, "workers": 2,
        "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
        "stages": {
            "personas": {"count": 16, "shard_size": 8}, "worlds": {}, "skills": {},
            "task_candidates": {"per_world": 4}, "task_gates": {"concurrency": 2, "instances_per_domain": 2},
            "rollouts": {"samples": 4, "tasks": 12, "tasks_per_shard": 2, "concurrency": 2,
                         "instances_per_domain": 2, "phone_screenshots": "css"},
        },
    }


def find_lake(path: str | None, run_id: str | None) -> tuple[str, str, str]:
    """(lake, run id, which): the given lake, data/lake if it has trajectories, else a small new one."""
    from guiforge.lake import Lake

    candidate = path or str(ROOT / "data" / "lake")
    lake = Lake(candidate)
    runs = lake.runs("trajectories") if lake.exists(lake.path("trajectories")) else []
    if run_id or runs:
        run = run_id or max(runs, key=lambda r: len(lake.shard_files("trajectories", r)))
        return candidate, run, "given lake" if path else "data/lake (the default run's lake)"
    if path:
        raise SystemExit(f"bench/judge.py: {path} holds no trajectories; run `guiforge run --lake {path}` first")
    from guiforge.orchestration.compile import build_pipeline
    from guiforge.orchestration.runner import run_pipeline

    made = str(Path(tempfile.gettempdir()) / "guiforge-bench-judge-lake")
    log(f"data/lake has no trajectories: making a small lake at {made} (a few minutes)")
    pipeline = build_pipeline(small_lake_config(), "bench/judge.py", lake=made, run_id="bench-judge")
    run_pipeline(pipeline, executor="local")
    return made, "bench-judge", f"a small lake made at {made} (12 tasks x 4 samples)"


def context_for(lake_uri: str, run_id: str, judge_model: dict | None):
    """A RunContext whose pipeline has the lake's producer stages (their manifests locate the
    input shards) and a judge stage; nothing here writes to the lake."""
    from guiforge.lake import Lake
    from guiforge.orchestration.compile import build_pipeline
    from guiforge.orchestration.context import RunContext

    cfg = small_lake_config()
    cfg["models"]["judge"] = judge_model or {"provider": "offline"}
    cfg["stages"]["judge"] = {}
    pipeline = build_pipeline(cfg, "bench/judge.py", lake=lake_uri, run_id=run_id)
    return RunContext(pipeline, Lake(lake_uri)), pipeline.stage("judge")


def run_stage(ctx, stage, limit_trajectories: int | None = None) -> tuple[list[dict], float]:
    from concurrent.futures import ThreadPoolExecutor

    shards = stage.plan(ctx)
    if limit_trajectories is not None:
        kept, n = [], 0
        for s in shards:
            if n >= limit_trajectories:
                break
            kept.append(s)
            n += sum(ctx.lake.read_shard(t, columns=["trajectory_id"]).num_rows for t, _ in s.params["parts"])
        shards = kept
    started = time.perf_counter()
    with ThreadPoolExecutor(3) as pool:  # the default pipeline's workers
        results = list(pool.map(lambda s: stage.run(ctx, s), shards))
    wall = time.perf_counter() - started
    return [j for r in results for j in r["judgments"]], wall


def agreement(rows: list[dict]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    domains = sorted({r["domain"] for r in rows})
    for name, group in [("all", rows), *((d, [r for r in rows if r["domain"] == d]) for d in domains)]:
        judged = [r for r in group if r["success"] is not None and r["verifier_success"] is not None]
        tp = sum(r["success"] and r["verifier_success"] for r in judged)
        fp = sum(r["success"] and not r["verifier_success"] for r in judged)
        fn = sum(not r["success"] and r["verifier_success"] for r in judged)
        tn = len(judged) - tp - fp - fn
        out[name] = {"n": len(judged), "tp": tp, "fp": fp, "tn": tn, "fn": fn,
                     "precision": round(tp / (tp + fp), 3) if tp + fp else None,
                     "recall": round(tp / (tp + fn), 3) if tp + fn else None,
                     "accuracy": round((tp + tn) / len(judged), 3) if judged else None}
    return out










def throughput(lake_uri: str, run_id: str, args) -> dict[str, Any]:
    ctx_mp = mp.get_context("spawn")
    parent, child = ctx_mp.Pipe()
    server = ctx_mp.Process(target=serve, args=(child, args.limit, args.seed, args.median_ms / 1000,
                                                args.p99_ms / 1000, "verdict"), daemon=True)
    server.start()
    base_url = parent.recv()
    os.environ["BENCH_JUDGE_KEY"] = "sk-local"
    model = {"provider": "openai", "model": "bench-vlm", "base_url": base_url, "api_key_env": "BENCH_JUDGE_KEY",
             "concurrency": args.limit * args.factor, "cache": False}
    ctx, stage = context_for(lake_uri, run_id, model)
    try:
        rows, wall = run_stage(ctx, stage, args.trajectories)
    finally:
        parent.send("stop")
        stats = parent.recv() if parent.poll(60) else {}
        server.join(10)
        ctx.close()
    drawn = stats.get("drawn") or []
    calls = len(drawn)
    mean = sum(drawn) / calls if calls else 0.0
    return {
        "trajectories": len(rows), "model_calls": calls, "wall_s": round(wall, 2),
        "calls_per_s": round(calls / wall, 2) if wall else None,
        "ideal_calls_per_s": round(args.limit / mean, 2) if mean else None,
        "schedule_bound_calls_per_s": round(calls / schedule_bound_s(drawn, args.limit), 2) if calls else None,
        "rejected_429": stats.get("rejected_429"), "server_max_in_flight": stats.get("max_in_flight"),
        "parse_failures": sum(bool(r["parse_failure"]) for r in rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lake")
    ap.add_argument("--run-id")
    ap.add_argument("--trajectories", type=int, default=384, help="trajectories for the throughput part")
    ap.add_argument("--limit", type=int, default=16)
    ap.add_argument("--factor", type=int, default=1, help="client concurrency = limit x factor (as bench/models.py)")
    ap.add_argument("--median-ms", type=float, default=200)
    ap.add_argument("--p99-ms", type=float, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip", default="", help="comma list: agreement, throughput")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    sys.path.insert(0, str(ROOT))
    lake_uri, run_id, which = find_lake(args.lake, args.run_id)
    figures: dict[str, Any] = {"lake": lake_uri, "run_id": run_id, "lake_source": which}
    ratios: dict[str, float | None] = {}
    if "agreement" not in skip:
        ctx, stage = context_for(lake_uri, run_id, None)
        try:
            rows, wall = run_stage(ctx, stage)
            ocr = next((v for k, v in ctx._resources.items() if k.startswith("ocr:")), None)
        finally:
            ctx.close()
        figures["offline_judge"] = agreement(rows)
        figures["offline_judge_stage_wall_s"] = round(wall, 2)
        figures["offline_judge_trajectories"] = len(rows)
        figures["offline_judge_ocr_frames_read"] = ocr.read_count if ocr else None
        for domain, m in figures["offline_judge"].items():
            ratios[f"offline_precision_{domain}"] = m["precision"]
        log(json.dumps(figures["offline_judge"], indent=1))
    if "throughput" not in skip:
        t = throughput(lake_uri, run_id, args)
        figures["model_judge"] = t
        if t["calls_per_s"] and t["ideal_calls_per_s"]:
            ratios["model_judge_vs_ideal"] = round(t["calls_per_s"] / t["ideal_calls_per_s"], 3)
            ratios["model_judge_vs_schedule_bound"] = round(t["calls_per_s"] / t["schedule_bound_calls_per_s"], 3)
    print(json.dumps({"bench": "judge", "figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
