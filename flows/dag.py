"""The DAG on Prefect: a parent flow, one subflow per stage, one task per shard.

Flows receive the validated pipeline as a plain dict (so a run can be scheduled from a
deployment or run on other hosts) and rebuild it; every call goes through the engine in
guiforge.orchestration.engine, which skips committed shards, so a killed run resumes.

A shard task retries with backoff (a shard is idempotent: the same inputs give the same
files). A stop (SIGINT, SIGTERM, a cancel from Prefect, which reaches the process as SIGTERM)
sets guiforge's shutdown flag before anything else happens: shards in flight end at once and
commit nothing, each ends Cancelled, and only then does Prefect's ``TerminationSignal``
continue (the flow runs end Cancelled, or the process ends as Prefect decides).

``run_config`` is the deployment entry point and does what ``guiforge run`` does: run lock,
verification of the shards it reads, resume, catalog, one global concurrency slot per run id
(a second trigger of the same run waits for the first), the report as a markdown artifact
plus the HTML where the lake lives.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from prefect import flow, get_client, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, TerminationSignal
from prefect.futures import as_completed, wait
from prefect.states import Cancelled, Failed
from prefect.task_runners import ThreadPoolTaskRunner

from guiforge import shutdown
from guiforge.errors import GuiforgeError
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake
from guiforge.orchestration import ray_cluster
from guiforge.orchestration.compile import build_pipeline, load_pipeline
from guiforge.orchestration.context import RunContext
from guiforge.orchestration.engine import (
    INTERRUPTED,
    PlannedShard,
    Reporter,
    StageSummary,
    execute_stage,
    run_shard,
)
from guiforge.orchestration.pipeline import Pipeline
from guiforge.orchestration.prefect_env import SHARD_RETRIES, SHARD_RETRY_DELAYS, drain_events
from guiforge.orchestration.runner import interrupted_line, locked_run
from guiforge.preflight import preflight
from guiforge.report.artifacts import publish_report, publish_stage
from guiforge.stages.base import ShardPlan

_contexts: dict[str, RunContext] = {}
_lock = threading.Lock()
_reporter: Reporter | None = None
STOPS = (TerminationSignal, KeyboardInterrupt)


def set_reporter(reporter: Reporter | None) -> None:
    global _reporter
    _reporter = reporter


def current_reporter() -> Reporter | None:
    """The reporter, read through a function: prefect-ray ships each flow's function by value
    with the globals it names, and a live terminal's reporter cannot travel to a Ray worker."""
    return _reporter


def context_for(pipeline: dict[str, Any]) -> RunContext:
    """One RunContext per pipeline per process (model clients and caches are reused)."""
    key = fingerprint(pipeline)
    with _lock:
        if key not in _contexts:
            built: Pipeline = build_pipeline(pipeline, source=f"<pipeline {pipeline.get('name')}>")
            _contexts[key] = RunContext(built, Lake(built.config.lake))
        return _contexts[key]


@contextlib.contextmanager
def run_slot(run_id: str) -> Iterator[None]:
    """The one slot of the global concurrency limit ``guiforge-run-<run_id>`` (made on first
    use): a second deployment run of the same run waits for the first, then resumes."""
    name = f"guiforge-run-{run_id}"
    with get_client(sync_client=True) as client, contextlib.suppress(ObjectAlreadyExists):
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=1))
    with concurrency(name, occupy=1, strict=True):
        yield


def _stopped(exc: BaseException) -> None:
    """A stop reached this process through Prefect: guiforge's shutdown, at once."""
    shutdown.request(getattr(exc, "signal", None) or signal.SIGINT)


def _retry_unless_stopping(task, task_run, state) -> bool:
    return not shutdown.requested()


@task(name="shard", cache_policy=NO_CACHE, persist_result=False, retries=SHARD_RETRIES,
      retry_delay_seconds=SHARD_RETRY_DELAYS, retry_jitter_factor=0.5, retry_condition_fn=_retry_unless_stopping)
def shard_task(pipeline: dict[str, Any], stage_name: str, fingerprint_: str, shard: dict[str, Any]):
    ctx = context_for(pipeline)
    worker = ray_cluster.worker_node() if ctx.pipeline.config.executor == "ray" else None
    entry = run_shard(ctx, ctx.pipeline.stage(stage_name), PlannedShard(fingerprint_, ShardPlan.from_dict(shard)),
                      worker)
    if entry.get("interrupted"):  # stopped before it could commit: a final state, never "Running"
        return Cancelled(message=f"interrupted by {shutdown.signal_name()}; nothing of this shard was committed")
    return entry


class _Shard:
    """A shard task's future as the engine reads it: a cancelled shard is an interrupted one."""

    def __init__(self, future):
        self.future = future

    def result(self) -> dict:
        if self.future.state.is_cancelled():
            return INTERRUPTED
        return self.future.result()


def _as_completed(futures):
    by_id = {id(f.future): f for f in futures}
    for done in as_completed([f.future for f in futures]):
        yield by_id[id(done)]


@flow(name="stage", flow_run_name="{stage_name}", persist_result=False, validate_parameters=False)
def stage_flow(pipeline: dict[str, Any], stage_name: str) -> dict:
    ctx = context_for(pipeline)
    stage = ctx.pipeline.stage(stage_name)
    submitted = []

    on_ray = ctx.pipeline.config.executor == "ray"
    hints = ray_cluster.shard_options(ctx.pipeline.config, stage) if on_ray else {}

    def submit(p: PlannedShard) -> _Shard:
        with remote_options(hints):
            future = shard_task.with_options(task_run_name=f"{stage_name}:{p.plan.key}"[:100]).submit(
                pipeline, stage_name, p.fingerprint, p.plan.to_dict())
        submitted.append(future)
        return _Shard(future)

    try:
        summary = execute_stage(ctx, stage, submit, _as_completed, current_reporter()).as_dict()
    except STOPS as exc:
        _stopped(exc)
        if on_ray:  # the workers do not see this process's shutdown flag
            ray_cluster.cancel(submitted)
        wait(submitted)  # in-flight shards see the flag, end Cancelled and commit nothing
        drain_events()  # their final states reach the server before the process may end
        raise
    publish_stage(ctx.lake, ctx.run_id, summary)  # a markdown artifact: rows, exclusions, wall time
    get_run_logger().info(StageSummary(**summary).line())  # what `guiforge run` prints, in the flow run's log
    return summary


@contextlib.contextmanager
def remote_options(hints: dict[str, Any]) -> Iterator[None]:
    """prefect-ray's remote options for the shards submitted in the body (Ray only)."""
    if not hints:
        yield
        return
    from prefect_ray.context import remote_options as ray_options  # heavy: prefect-ray, only on Ray

    with ray_options(**hints):
        yield


@contextlib.contextmanager
def task_runners(config) -> Iterator:
    """A factory of each stage's task runner: threads, or Ray over one connection per run."""
    if config.executor != "ray":
        yield lambda: ThreadPoolTaskRunner(max_workers=config.workers)
        return
    with ray_cluster.ray_session(config):
        yield ray_cluster.task_runner


def for_workers(pipeline: dict[str, Any]) -> dict[str, Any]:
    """The pipeline as shards on other processes read it: a local lake by its absolute path
    (a Ray worker does not start in this directory)."""
    lake = Lake(pipeline["lake"])
    return {**pipeline, "lake": lake.root} if lake.is_local else pipeline


@flow(name="guiforge-run", flow_run_name="{run_name}", persist_result=False, validate_parameters=False)
def pipeline_flow(pipeline: dict[str, Any], run_name: str = "run") -> list[dict]:
    pipeline = for_workers(pipeline)
    ctx = context_for(pipeline)
    results: list[dict] = []
    try:
        with task_runners(ctx.pipeline.config) as runner:
            for s in ctx.pipeline.stages:
                results.append(stage_flow.with_options(task_runner=runner())(pipeline, s.name))
                if results[-1].get("interrupted"):  # a signal: the caller reports what was committed
                    return results
        publish_report(ctx.lake, ctx.run_id)  # <lake>/_reports/<run_id>.html, and its key tables
        return results
    except STOPS as exc:
        _stopped(exc)
        raise
    finally:
        ctx.close()  # environment pools and other per-run resources
        with _lock:
            _contexts.pop(fingerprint(pipeline), None)  # a later run in this process starts afresh


@flow(name="guiforge-deployment", persist_result=False)
def run_config(config: str = "pipeline.yaml", lake: str | None = None, run_id: str | None = None,
               fresh: bool = False, executor: str | None = None, ray_address: str | None = None):
    """Entry point for Prefect deployments (prefect.yaml): load, validate and run a pipeline
    file, exactly as `guiforge run CONFIG` does (lock, verification, resume, catalog). A
    problem the user can fix ends the flow run Failed with its one line, not a traceback."""
    logger = get_run_logger()
    try:
        return _run_config(config, lake, run_id, fresh, logger, executor=executor, ray_address=ray_address)
    except GuiforgeError as exc:
        logger.error(f"error: {exc}")
        return Failed(message=str(exc))


def _run_config(config: str, lake: str | None, run_id: str | None, fresh: bool, logger, **overrides):
    pipeline = load_pipeline(config, lake=lake, run_id=run_id, **overrides)
    preflight(pipeline)
    store = Lake(pipeline.config.lake)
    shutdown.reset()
    logger.info(f"guiforge run {pipeline.source} → {pipeline.config.lake}  run {pipeline.run_id}")
    with run_slot(pipeline.run_id), locked_run(store, pipeline, fresh):
        try:
            results = pipeline_flow(pipeline.to_dict(), run_name=pipeline.run_id)
        except STOPS:
            logger.warning(interrupted_line(store, pipeline))
            raise  # Prefect records the cancel (or the crash) and ends the process its way
    if shutdown.requested():  # a stop that ended the stages between shards
        logger.warning(interrupted_line(store, pipeline))
        return Cancelled(message=interrupted_line(store, pipeline))
    return results
