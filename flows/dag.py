"""The DAG on Prefect: a parent flow, one subflow per stage, one task per shard.

Flows receive the validated pipeline as a plain dict (so a run can be scheduled from a
deployment or run on other hosts) and rebuild it; every call goes through the engine in
guiforge.orchestration.engine, which skips committed shards, so a killed run resumes.
"""

from __future__ import annotations

import threading
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake
from guiforge.orchestration.compile import build_pipeline, load_pipeline
from guiforge.orchestration.context import RunContext
from guiforge.orchestration.engine import PlannedShard, Reporter, execute_stage, run_shard
from guiforge.orchestration.pipeline import Pipeline
from guiforge.report.artifacts import publish_report, publish_stage
from guiforge.stages.base import ShardPlan

_contexts: dict[str, RunContext] = {}
_lock = threading.Lock()
_reporter: Reporter | None = None


def set_reporter(reporter: Reporter | None) -> None:
    global _reporter
    _reporter = reporter


def context_for(pipeline: dict[str, Any]) -> RunContext:
    """One RunContext per pipeline per process (model clients and caches are reused)."""
    key = fingerprint(pipeline)
    with _lock:
        if key not in _contexts:
            built: Pipeline = build_pipeline(pipeline, source=f"<pipeline {pipeline.get('name')}>")
            _contexts[key] = RunContext(built, Lake(built.config.lake))
        return _contexts[key]


@task(name="shard", cache_policy=NO_CACHE, persist_result=False)
def shard_task(pipeline: dict[str, Any], stage_name: str, fingerprint_: str, shard: dict[str, Any]) -> dict:
    ctx = context_for(pipeline)
    return run_shard(ctx, ctx.pipeline.stage(stage_name), PlannedShard(fingerprint_, ShardPlan.from_dict(shard)))


@flow(name="stage", flow_run_name="{stage_name}", persist_result=False, validate_parameters=False)
def stage_flow(pipeline: dict[str, Any], stage_name: str) -> dict:
    ctx = context_for(pipeline)
    stage = ctx.pipeline.stage(stage_name)

    def submit(p: PlannedShard):
        return shard_task.with_options(task_run_name=f"{stage_name}:{p.plan.key}"[:100]).submit(
            pipeline, stage_name, p.fingerprint, p.plan.to_dict())

    summary = execute_stage(ctx, stage, submit, as_completed, _reporter).as_dict()
    publish_stage(ctx.lake, ctx.run_id, summary)  # a markdown artifact: rows, exclusions, wall time
    return summary


@flow(name="guiforge-run", flow_run_name="{run_name}", persist_result=False, validate_parameters=False)
def pipeline_flow(pipeline: dict[str, Any], run_name: str = "run") -> list[dict]:
    ctx = context_for(pipeline)
    workers = ctx.pipeline.config.workers
    results: list[dict] = []
    try:
        for s in ctx.pipeline.stages:
            results.append(stage_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))(
                pipeline, s.name))
            if results[-1].get("interrupted"):  # a signal: the caller reports what was committed
                return results
        publish_report(ctx.lake, ctx.run_id)  # <lake>/_reports/<run_id>.html, as a link artifact
        return results
    finally:
        ctx.close()  # environment pools and other per-run resources


@flow(name="guiforge-deployment", persist_result=False)
def run_config(config: str = "pipeline.yaml", lake: str | None = None, run_id: str | None = None) -> list[dict]:
    """Entry point for Prefect deployments (prefect.yaml): load, validate and run a
    pipeline file, exactly as `guiforge run CONFIG` does."""
    pipeline = load_pipeline(config, lake=lake, run_id=run_id)
    return pipeline_flow(pipeline.to_dict(), run_name=pipeline.run_id)
