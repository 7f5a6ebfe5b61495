"""The stage engine, independent of Prefect: plan, skip committed shards, run and commit a
shard, prune superseded shards. Prefect flows (guiforge.flows) wrap these calls."""

from __future__ import annotations

import time
from dataclasses import dataclass

from guiforge import __version__
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.orchestration.context import RunContext
from guiforge.stages.base import ShardPlan, Stage


@dataclass
class PlannedShard:
    fingerprint: str
    plan: ShardPlan


def shard_fingerprint(ctx: RunContext, stage: Stage, plan: ShardPlan) -> str:
    # Roles past the first (a fallback judge) enter as "models"; one-role stages keep their names.
    extra_roles = stage.model_roles()[1:]
    return fingerprint(
        {
            "stage": stage.name,
            "kind": stage.kind,
            "stage_version": stage.version,
            "code_version": __version__,
            "config": stage.config.model_dump(mode="json"),
            "model": ctx.model(stage.model_role).identity() if stage.model_role else None,
            **({"models": [ctx.model(r).identity() for r in extra_roles]} if extra_roles else {}),
            "seed": ctx.seed,
            "key": plan.key,
            "params": plan.params,
            "inputs": plan.inputs,
        }
    )


def plan_stage(ctx: RunContext, stage: Stage) -> list[PlannedShard]:
    planned = [PlannedShard(shard_fingerprint(ctx, stage, p), p) for p in stage.plan(ctx)]
    seen: set[str] = set()
    for p in planned:
        if p.fingerprint in seen:
            raise RuntimeError(f"stage {stage.name}: two shards share key {p.plan.key!r}")
        seen.add(p.fingerprint)
    return planned


def committed_fingerprints(ctx: RunContext, stage: Stage) -> set[str]:
    return {e["fingerprint"] for e in ctx.lake.manifest_entries(ctx.run_id, stage.name)}


def prepare_stage(ctx: RunContext, stage: Stage) -> None:
    """Remove what a killed writer left half-written before new shards are written."""
    lake = ctx.lake
    for table in stage.outputs():
        lake.remove_stale_temporaries(lake.run_dir(table, ctx.run_id))
    lake.remove_stale_temporaries(lake.manifest_dir(ctx.run_id, stage.name))


def run_shard(ctx: RunContext, stage: Stage, shard: PlannedShard) -> dict:
    started = time.perf_counter()
    outputs = stage.run(ctx, shard.plan)
    unknown = set(outputs) - set(stage.outputs())
    if unknown:
        raise RuntimeError(f"stage {stage.name} wrote undeclared tables {sorted(unknown)}")
    commit = ShardCommit(
        stage=stage.name, run_id=ctx.run_id, fingerprint=shard.fingerprint, key=shard.plan.key,
        inputs=shard.plan.inputs, meta={"seconds": round(time.perf_counter() - started, 4)},
    )
    return commit_shard(ctx.lake, commit, {t: outputs.get(t, []) for t in stage.outputs()})


def finish_stage(ctx: RunContext, stage: Stage, planned: list[PlannedShard]) -> int:
    """Delete shards of this stage that the current plan no longer contains (the config or
    the code changed under the same run id), so no superseded row is ever read. Returns
    the number of shards removed."""
    keep = {p.fingerprint for p in planned}
    removed = 0
    for entry in list(ctx.lake.manifest_entries(ctx.run_id, stage.name)):
        fp = entry["fingerprint"]
        if fp in keep:
            continue
        for written in entry["outputs"].values():
            if written.get("path") and ctx.lake.exists(written["path"]):
                ctx.lake.fs.rm(written["path"])
        ctx.lake.fs.rm(ctx.lake.manifest_path(ctx.run_id, stage.name, fp))
        removed += 1
    return removed


@dataclass
class StageSummary:
    stage: str
    planned: int
    skipped: int
    ran: int
    pruned: int
    rows: dict[str, int]
    seconds: float

    def as_dict(self) -> dict:
        return self.__dict__.copy()


class Reporter:
    """Progress callbacks; the CLI's subclass draws rich progress bars."""

    def stage_started(self, stage: str, total: int, skipped: int) -> None: ...

    def shard_done(self, stage: str, entry: dict) -> None: ...

    def stage_finished(self, summary: StageSummary) -> None: ...


def execute_stage(ctx: RunContext, stage: Stage, submit, as_completed, reporter: Reporter | None = None) -> StageSummary:
    """Run every uncommitted shard of ``stage``: ``submit(shard)`` returns a future with
    ``.result()``; ``as_completed(futures)`` yields them as they finish."""
    reporter = reporter or Reporter()
    started = time.perf_counter()
    planned = plan_stage(ctx, stage)
    done = committed_fingerprints(ctx, stage)
    todo = [p for p in planned if p.fingerprint not in done]
    reporter.stage_started(stage.name, len(planned), len(planned) - len(todo))
    if todo:
        prepare_stage(ctx, stage)
    rows: dict[str, int] = {}
    futures = [submit(p) for p in todo]
    for future in as_completed(futures):
        entry = future.result()
        for table, written in entry["outputs"].items():
            rows[table] = rows.get(table, 0) + written["rows"]
        reporter.shard_done(stage.name, entry)
    pruned = finish_stage(ctx, stage, planned)
    summary = StageSummary(stage.name, len(planned), len(planned) - len(todo), len(todo), pruned, rows,
                           round(time.perf_counter() - started, 3))
    reporter.stage_finished(summary)
    return summary


def run_local(ctx: RunContext, workers: int | None = None, reporter: Reporter | None = None) -> list[StageSummary]:
    """The same DAG without Prefect: a thread pool per stage. For tests and debugging."""
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import as_completed as cf_as_completed

    summaries = []
    try:
        with ThreadPoolExecutor(max_workers=workers or ctx.pipeline.config.workers) as pool:
            for stage in ctx.pipeline.stages:
                summaries.append(execute_stage(
                    ctx, stage, lambda p, s=stage: pool.submit(run_shard, ctx, s, p), cf_as_completed, reporter))
    finally:
        ctx.close()
    return summaries
