"""Run a validated pipeline end to end: on Prefect (the default), on Prefect with the shards
on a Ray cluster (ray_cluster.py), or on a local thread pool, under the run's lock, then
refresh the DuckDB catalog.

The same steps serve a Prefect deployment (``flows/dag.py:run_config``): :func:`locked_run`
takes the lock, drops the run for ``--fresh``, verifies the shards the run will read and,
at the end, writes the catalog; :func:`interrupted_line` says what a stopped run committed.

Signals are guiforge's on both paths: ``guiforge run`` keeps its own SIGINT/SIGTERM handlers
in the main thread and runs the Prefect flow on another thread, where Prefect installs none;
in a deployment Prefect owns SIGTERM, and the flows turn its ``TerminationSignal`` into the
same shutdown before they let it through (flows/dag.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Literal

from guiforge import shutdown
from guiforge.errors import GuiforgeError
from guiforge.lake.check import verify_run
from guiforge.lake.commit import finish_run
from guiforge.lake.compact import AUTO_MIN_FILES, compact_run
from guiforge.lake.gc import remove_run
from guiforge.lake.lock import RunLock
from guiforge.lake.manifests import all_entries
from guiforge.lake.store import Lake
from guiforge.orchestration.context import RunContext
from guiforge.orchestration.engine import Reporter, StageSummary, run_local
from guiforge.orchestration.pipeline import Pipeline
from guiforge.orchestration.prefect_env import configure, drain_events
from guiforge.orchestration.provenance import record_run
from guiforge.orchestration.ray_cluster import probe
from guiforge.orchestration.server import run_home, temporary_server


def run_pipeline(
    pipeline: Pipeline,
    executor: Literal["prefect", "local", "ray"] | None = None,
    reporter: Reporter | None = None,
    fresh: bool = False,
    verbose: bool = False,
) -> list[StageSummary]:
    """Run ``pipeline`` under its run's lock, on ``executor`` (default: the pipeline file's;
    ``ray`` is the Prefect path with shards on a Ray cluster). SIGINT/SIGTERM stop it:
    nothing in flight is committed and :class:`~guiforge.shutdown.Interrupted` says what was."""
    if executor:
        pipeline.config.executor = executor
    executor = pipeline.config.executor
    lake = Lake(pipeline.config.lake)
    if executor == "ray" and pipeline.config.ray.address:
        probe(pipeline.config.ray.address)  # before a lock or a server: a dead address is one line at once
    shutdown.reset()
    with shutdown.handling_signals(), locked_run(lake, pipeline, fresh):
        summaries: list[StageSummary] = []
        try:
            if executor == "local":
                summaries = run_local(RunContext(pipeline, lake), reporter=reporter)
                if not shutdown.requested():
                    # heavy: the report's stack (duckdb, plotly), imported when this runs
                    from guiforge.report.artifacts import publish_report

                    publish_report(lake, pipeline.run_id)  # on Prefect, the parent flow writes it
            else:
                summaries = _run_prefect(pipeline, reporter, verbose)
        except Exception:
            if not shutdown.requested():
                raise
            # whatever failed while environments closed under the run: the interruption is the news
        if shutdown.requested():
            raise shutdown.Interrupted(interrupted_line(lake, pipeline), shutdown.signal_number())
    return summaries


@contextlib.contextmanager
def locked_run(lake: Lake, pipeline: Pipeline, fresh: bool = False) -> Iterator[None]:
    """The run's lock held around the body; ``fresh`` drops the run first; the shards the run
    reads are verified against their manifests; the catalog is written after a whole run."""
    with lake_errors(lake), RunLock(lake, pipeline.run_id):
        if fresh:
            remove_run(lake, pipeline.run_id)  # never what another run's rows refer to
        finish_run(lake, pipeline.run_id)  # commits a killed writer claimed but did not publish
        verify_run(lake, pipeline.run_id, "run")
        record_run(lake, pipeline)  # provenance: what the viewer, stats and report show in their header
        yield
        if not shutdown.requested():
            # a run that left many small files of a table merges them (queries pay per file)
            compact_run(lake, pipeline.run_id, min_files=AUTO_MIN_FILES, locked=True)
            # heavy: duckdb, imported when this runs
            from guiforge.catalog import write_catalog

            write_catalog(lake)


def interrupted_line(lake: Lake, pipeline: Pipeline) -> str:
    """What an interrupted run committed and how to resume it, in one line."""
    per_stage: dict[str, int] = {}
    for e in all_entries(lake, pipeline.run_id):
        per_stage[e.stage] = per_stage.get(e.stage, 0) + 1
    done = ", ".join(f"{s.name} {per_stage.get(s.name, 0)}" for s in pipeline.stages if per_stage.get(s.name))
    during = shutdown.current_stage()
    source = "" if pipeline.source.endswith("pipeline.yaml") and "/" not in pipeline.source else f" {pipeline.source}"
    return (f"interrupted by {shutdown.signal_name()}" + (f" during {during}" if during else "")
            + f"; committed shards of run {pipeline.run_id}: {done or 'none'} (nothing in flight was kept); "
            f"resume with `guiforge run{source}" + (f" --lake {lake.uri}" if lake.uri != "data/lake" else "")
            + (f" --run-id {pipeline.config.run_id}" if pipeline.config.run_id else "") + "`")


@contextlib.contextmanager
def lake_errors(lake: Lake) -> Iterator[None]:
    """Storage errors outside a stage (taking the lock, --fresh) as one line."""
    try:
        yield
    except GuiforgeError:
        raise
    except PermissionError as exc:
        raise GuiforgeError(f"lake {lake.uri}: cannot write {exc.filename or ''}: {exc.strerror}; "
                            "check that the lake is writable or pass another --lake") from exc
    except OSError as exc:
        raise GuiforgeError(f"lake {lake.uri}: {type(exc).__name__}: {exc}; check the lake path (--lake)") from exc
    except Exception as exc:
        if "Credentials" in type(exc).__name__ or "AccessDenied" in str(exc):
            raise GuiforgeError(f"lake {lake.uri}: access refused ({type(exc).__name__}: {exc}); set the storage's "
                                "credentials (for s3://: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)") from exc
        raise


def _run_prefect(pipeline: Pipeline, reporter: Reporter | None, verbose: bool) -> list[StageSummary]:
    configure(verbose)

    with temporary_server(home=run_home(Lake(pipeline.config.lake), pipeline.run_id)):
        # heavy: prefect (and below, the flows), only on the Prefect path
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        from guiforge.flows.dag import pipeline_flow, set_reporter

        set_reporter(reporter)
        try:
            # Each sync flow run otherwise waits ~1 s on its heartbeat thread at exit.
            with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
                results = in_flow_thread(lambda: pipeline_flow(pipeline.to_dict(), run_name=pipeline.run_id))
        finally:
            set_reporter(None)
            drain_events()
    return [StageSummary(**r) for r in results]


def in_flow_thread(body):
    """``body()`` on a thread of its own (with this thread's context: Prefect's settings), so
    that Prefect, which installs its SIGTERM handler only on the main thread, leaves the
    main thread's handlers (shutdown.py) in charge. Returns its result or raises its error."""
    outcome: dict = {}
    context = contextvars.copy_context()

    def target() -> None:
        try:
            outcome["value"] = context.run(body)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as is
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="guiforge-flow")
    thread.start()
    shutdown.join(thread)  # wakes often enough for a signal's handler to run at once
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
