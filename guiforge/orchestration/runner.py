"""Run a validated pipeline end to end: on Prefect (the default) or on a local thread pool,
then refresh the DuckDB catalog."""

from __future__ import annotations

from typing import Literal

from guiforge.config import Pipeline
from guiforge.lake.store import Lake
from guiforge.orchestration.engine import Reporter, StageSummary


def run_pipeline(
    pipeline: Pipeline,
    executor: Literal["prefect", "local"] = "prefect",
    reporter: Reporter | None = None,
    fresh: bool = False,
    verbose: bool = False,
) -> list[StageSummary]:
    lake = Lake(pipeline.config.lake)
    if fresh:
        lake.remove_run(pipeline.run_id)
    if executor == "local":
        from guiforge.orchestration.context import RunContext
        from guiforge.orchestration.engine import run_local

        summaries = run_local(RunContext(pipeline, lake), reporter=reporter)
    else:
        summaries = _run_prefect(pipeline, reporter, verbose)
    from guiforge.catalog import write_catalog

    write_catalog(lake)
    return summaries


def _run_prefect(pipeline: Pipeline, reporter: Reporter | None, verbose: bool) -> list[StageSummary]:
    from guiforge.orchestration.prefect_env import configure

    configure(verbose)
    from guiforge.orchestration.server import run_home, temporary_server

    with temporary_server(home=run_home(Lake(pipeline.config.lake), pipeline.run_id)):
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        from guiforge.flows.dag import pipeline_flow, set_reporter

        set_reporter(reporter)
        try:
            # Each sync flow run otherwise waits ~1 s on its heartbeat thread at exit.
            with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
                results = pipeline_flow(pipeline.to_dict(), run_name=pipeline.run_id)
        finally:
            set_reporter(None)
    return [StageSummary(**r) for r in results]
