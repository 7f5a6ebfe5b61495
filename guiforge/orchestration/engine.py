"""The stage engine, independent of Prefect: plan, skip committed shards, run and commit a
shard, prune superseded shards. Prefect flows (guiforge.flows) wrap these calls."""

from __future__ import annotations

import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from guiforge import __version__, shutdown
from guiforge.envs.usage import counting
from guiforge.errors import GuiforgeError
from guiforge.lake.blobs import CONTENT_TABLES
from guiforge.lake.commit import sweep_stage
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.gc import delete_entries
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.orchestration.context import RunContext
from guiforge.orchestration.failure_share import FailureShare
from guiforge.orchestration.provenance import (
    code_fingerprint,
    cpu_seconds,
    data_fingerprint,
    plugin_identities,
    record_stage_session,
)
from guiforge.orchestration.redo import current_fingerprints, lost_host_units, redo_meta
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
            # The code that makes the rows and the data files the stage reads (provenance.py).
            "code": code_fingerprint(stage.code),
            "data": data_fingerprint(stage.data_files()),
            # Outside plugins the shard uses (stage kind, providers, environment kinds, checks).
            **plugin_identities(ctx, stage, plan.params),
            "config": stage.config.model_dump(mode="json"),
            **_faults(ctx),
            "model": ctx.model(stage.model_role).identity() if stage.model_role else None,
            **({"models": [ctx.model(r).identity() for r in extra_roles]} if extra_roles else {}),
            "seed": ctx.seed,
            "key": plan.key,
            "params": plan.params,
            "inputs": plan.inputs,
        }
    )


def _faults(ctx: RunContext) -> dict:
    """Injected faults change a shard's rows: they enter its fingerprint where declared."""
    faults = ctx.pipeline.config.faults
    return {"faults": faults.model_dump()} if faults is not None and faults.enabled else {}


def plan_stage(ctx: RunContext, stage: Stage) -> list[PlannedShard]:
    planned = [PlannedShard(shard_fingerprint(ctx, stage, p), p) for p in stage.plan(ctx)]
    # a committed shard that lost an env host is planned again, under a new fingerprint (redo.py)
    current = current_fingerprints([p.fingerprint for p in planned],
                                   ctx.lake.manifest_entries(ctx.run_id, stage.name))
    planned = [PlannedShard(current[p.fingerprint], p.plan) for p in planned]
    seen: set[str] = set()
    for p in planned:
        if p.fingerprint in seen:
            raise RuntimeError(f"stage {stage.name}: two shards share key {p.plan.key!r}")
        seen.add(p.fingerprint)
    return planned


def committed_fingerprints(ctx: RunContext, stage: Stage) -> set[str]:
    return {e["fingerprint"] for e in ctx.lake.manifest_entries(ctx.run_id, stage.name)}


def prepare_stage(ctx: RunContext, stage: Stage) -> None:
    """Before new shards are written: finish the commits a killed writer claimed but did not
    publish, remove what it left half-written (lake/commit.py)."""
    sweep_stage(ctx.lake, ctx.run_id, stage.name, stage.outputs())


INTERRUPTED = {"interrupted": True, "outputs": {}}


class StageError(GuiforgeError):
    """A stage failed: one line naming the stage, the shard and the cause."""


def describe_failure(stage: Stage, key: str, exc: BaseException) -> str:
    """One line for an error inside a stage: the stage, the shard, the cause, what to do."""
    if isinstance(exc, GuiforgeError):
        return f"stage {stage.name}: {exc}"
    if isinstance(exc, PermissionError | IsADirectoryError | NotADirectoryError):
        return (f"stage {stage.name}: cannot write {getattr(exc, 'filename', None) or 'the lake'}: "
                f"{exc.strerror}; check that the lake is writable (--lake)")
    if isinstance(exc, FileNotFoundError):
        return (f"stage {stage.name}: shard {key}: {exc.filename or exc}: not found; "
                "`guiforge lake check` lists what is missing")
    name = type(exc).__name__
    if "Credentials" in name or "AccessDenied" in str(exc):
        return (f"stage {stage.name}: the lake refused access ({name}: {exc}); set the storage's "
                "credentials (for s3://, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"stage {stage.name}: shard {key}: {name}: {first}  (rerun with --debug for the traceback)"


def run_shard(ctx: RunContext, stage: Stage, shard: PlannedShard, worker: dict | None = None) -> dict:
    """Run one shard and commit it, unless a shutdown was requested: then whatever it
    computed (or whatever failed because environments were closing) is discarded.
    ``worker`` says where it ran, beyond host and pid (a Ray node), for its manifest entry."""
    if shutdown.requested():
        return INTERRUPTED
    share = ctx.resource(f"failure-share:{stage.name}", lambda: FailureShare(ctx, stage))
    if share.tripped:  # a stage over its failure share starts no more shards
        return INTERRUPTED
    started, started_at, cpu = time.perf_counter(), time.time(), time.thread_time()
    try:
        with counting() as env_usage:  # the shard's environment leases: busy and leased seconds
            outputs = stage.run(ctx, shard.plan)
    except Exception as exc:
        if shutdown.requested():  # an environment or verifier closed under it
            return INTERRUPTED
        raise StageError(describe_failure(stage, shard.plan.key, exc)) from exc
    unknown = set(outputs) - set(stage.outputs())
    if unknown:
        raise StageError(f"stage {stage.name} wrote undeclared tables {sorted(unknown)}; declare them in outputs()")
    tables = {t: outputs.get(t, []) for t in stage.outputs()}
    if shutdown.requested():
        return INTERRUPTED
    failures, units = stage.failures(tables)
    share.admit(failures, units)  # over the share: this shard is not committed, the run stops
    redo = redo_meta(shard_fingerprint(ctx, stage, shard.plan), shard.fingerprint, lost_host_units(tables))
    content = {t: ctx.content_store(t) for t in tables if t in CONTENT_TABLES}
    for table, store in content.items():  # what another shard committed meanwhile is not stored twice
        rows = tables[table]
        tables[table] = store.uncommitted(rows.to_pylist() if hasattr(rows, "to_pylist") else list(rows))
    commit = ShardCommit(
        stage=stage.name, run_id=ctx.run_id, fingerprint=shard.fingerprint, key=shard.plan.key,
        inputs=shard.plan.inputs,
        # cpu_s: this shard's own thread; the stage session record counts the whole process.
        meta={"seconds": round(time.perf_counter() - started, 4), "started_at": started_at,
              "cpu_s": round(time.thread_time() - cpu, 4),
              "worker": {"host": socket.gethostname(), "pid": os.getpid(), **(worker or {})},
              **({"failures": failures, "units": units} if units else {}), **redo,
              **({"env": env_usage.figures()} if env_usage.leased_s else {})},
    )
    if shutdown.requested():  # the last moment a shard can be dropped
        return INTERRUPTED
    try:
        entry = commit_shard(ctx.lake, commit, tables)
    except GuiforgeError:
        raise
    except Exception as exc:
        raise StageError(describe_failure(stage, shard.plan.key, exc)) from exc
    if not entry.get("lost"):  # a writer that lost the claim committed none of its content
        for table, store in content.items():
            store.mark_committed([r["sha256"] for r in tables[table]])
    return entry


def finish_stage(ctx: RunContext, stage: Stage, planned: list[PlannedShard]) -> int:
    """Delete shards of this stage that the current plan no longer contains (the config or
    the code changed under the same run id), so no superseded row is ever read. Returns
    the number of shards removed."""
    keep = {p.fingerprint for p in planned}
    stale = [e for e in ctx.lake.manifest_entries(ctx.run_id, stage.name) if e["fingerprint"] not in keep]
    if stale:
        delete_entries(ctx.lake, stale)
        for table in CONTENT_TABLES:
            if table in stage.outputs():
                ctx.content_store(table).forget()
    return len(stale)


@dataclass
class StageSummary:
    stage: str
    planned: int
    skipped: int
    ran: int
    pruned: int
    rows: dict[str, int]
    seconds: float
    interrupted: bool = False

    def as_dict(self) -> dict:
        return self.__dict__.copy()

    def line(self) -> str:
        """The stage in one line (the CLI prints it; a Prefect flow run logs it)."""
        rows = ", ".join(f"{t} {n}" for t, n in self.rows.items()) or "nothing new"
        pruned = f", {self.pruned} pruned" if self.pruned else ""
        return (f"{self.stage}: {self.ran} shard(s) run, {self.skipped} already committed{pruned}"
                f" — {rows} ({self.seconds:.1f}s)")


class Reporter:
    """Progress callbacks; the CLI's subclass draws rich progress bars."""

    def stage_started(self, stage: str, total: int, skipped: int) -> None: ...

    def shard_done(self, stage: str, entry: dict) -> None: ...

    def shards_added(self, stage: str, total: int, skipped: int) -> None:
        """A stage that plans in waves planned ``total`` more shards (``skipped`` committed)."""

    def stage_finished(self, summary: StageSummary) -> None: ...


def follow_up(ctx: RunContext, stage: Stage, planned: list[PlannedShard]) -> list[PlannedShard]:
    """The shards ``stage`` plans once the ones in ``planned`` are committed (a gate that
    gates in the order of use plans its next wave from the verdicts so far); none by default."""
    if not stage.in_waves:  # spares reading every entry of a big stage once more
        return []
    entries = {e["fingerprint"]: e for e in ctx.lake.manifest_entries(ctx.run_id, stage.name)}
    more = stage.plan_more(ctx, [(p.plan, entries.get(p.fingerprint)) for p in planned])
    added = [PlannedShard(shard_fingerprint(ctx, stage, p), p) for p in more]
    known = {p.fingerprint for p in planned}
    for p in added:
        if p.fingerprint in known:
            raise RuntimeError(f"stage {stage.name}: a follow-up shard repeats key {p.plan.key!r}")
        known.add(p.fingerprint)
    return added


def execute_stage(ctx: RunContext, stage: Stage, submit, as_completed, reporter: Reporter | None = None) -> StageSummary:
    """Run every uncommitted shard of ``stage``: ``submit(shard)`` returns a future with
    ``.result()``; ``as_completed(futures)`` yields them as they finish. A stage that plans
    in waves (``Stage.plan_more``) is asked for more once each wave is committed."""
    reporter = reporter or Reporter()
    started, started_at, cpu = time.perf_counter(), time.time(), cpu_seconds()
    shutdown.note_stage(stage.name)
    planned = plan_stage(ctx, stage)
    done = committed_fingerprints(ctx, stage)
    todo = [p for p in planned if p.fingerprint not in done]
    reporter.stage_started(stage.name, len(planned), len(planned) - len(todo))
    prepared = bool(todo)
    if todo:
        prepare_stage(ctx, stage)
    rows: dict[str, int] = {}
    ran = 0
    while True:
        futures = [submit(p) for p in todo]
        for future in as_completed(futures):
            entry = future.result()
            if entry.get("interrupted") or entry.get("lost"):  # lost: another writer committed it
                continue
            ran += 1
            for table, written in entry["outputs"].items():
                rows[table] = rows.get(table, 0) + written["rows"]
            reporter.shard_done(stage.name, entry)
        if shutdown.requested():
            break
        more = follow_up(ctx, stage, planned)
        if not more:
            break
        planned += more
        todo = [p for p in more if p.fingerprint not in done]
        reporter.shards_added(stage.name, len(more), len(more) - len(todo))
        if todo and not prepared:
            prepared = True
            prepare_stage(ctx, stage)
    interrupted = shutdown.requested()
    # Nothing is pruned after an interruption: the rerun finishes the stage and prunes then.
    pruned = 0 if interrupted else finish_stage(ctx, stage, planned)
    skipped = sum(p.fingerprint in done for p in planned)
    summary = StageSummary(stage.name, len(planned), skipped, ran, pruned, rows,
                           round(time.perf_counter() - started, 3), interrupted)
    if ran:  # wall and CPU time of this session of the stage, for stats, the report and the viewer
        record_stage_session(ctx, summary, started_at, cpu_seconds() - cpu)
    if interrupted:
        return summary
    reporter.stage_finished(summary)
    return summary


def run_local(ctx: RunContext, workers: int | None = None, reporter: Reporter | None = None) -> list[StageSummary]:
    """The same DAG without Prefect: a thread pool per stage. For tests and debugging."""
    summaries = []
    try:
        with ThreadPoolExecutor(max_workers=workers or ctx.pipeline.config.workers) as pool:
            for stage in ctx.pipeline.stages:
                summaries.append(execute_stage(
                    ctx, stage, lambda p, s=stage: pool.submit(run_shard, ctx, s, p), shutdown.as_completed, reporter))
                if summaries[-1].interrupted:
                    break
    finally:
        ctx.close()
    return summaries
