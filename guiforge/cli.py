"""The guiforge command line: run, validate, stats, report."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from guiforge.errors import GuiforgeError
from guiforge.orchestration.engine import Reporter, StageSummary

app = typer.Typer(
    help="guiforge: synthesize computer-use agent training data into a Parquet lake.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)
out = Console()

ConfigArg = Annotated[
    Path | None,
    typer.Argument(help="pipeline YAML; default: the shipped offline pipeline.yaml", show_default=False),
]
LakeOpt = Annotated[str | None, typer.Option("--lake", help="lake root: a path or any fsspec URI (s3://...)")]


class ProgressReporter(Reporter):
    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, int] = {}

    def stage_started(self, stage: str, total: int, skipped: int) -> None:
        label = f"{stage}" + (f" ({skipped} resumed)" if skipped else "")
        self.tasks[stage] = self.progress.add_task(label, total=total, completed=skipped)

    def shard_done(self, stage: str, entry: dict) -> None:
        self.progress.advance(self.tasks[stage])

    def shards_added(self, stage: str, total: int, skipped: int) -> None:
        task = next(t for t in self.progress.tasks if t.id == self.tasks[stage])
        self.progress.update(task.id, total=(task.total or 0) + total, advance=skipped)

    def stage_finished(self, summary: StageSummary) -> None:
        if summary.stage in self.tasks:
            self.progress.stop_task(self.tasks[summary.stage])  # its clock stops with it
        self.progress.console.print(f"[green]✓[/] {summary.line()}")


@app.command()
def run(
    config: ConfigArg = None,
    lake: LakeOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="continue or name a run explicitly")] = None,
    executor: Annotated[str | None, typer.Option(help="prefect (default), ray (Prefect with the shards on a Ray "
                                                      "cluster) or local (no Prefect, for debugging); "
                                                      "default: the pipeline file's `executor`")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="the Ray cluster to run on (host:port, "
                                                    "ray://host:10001, auto); implies --executor ray")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="delete this run's shards first and start over")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show Prefect's own logs")] = False,
) -> None:
    """Run a pipeline (default: the shipped offline pipeline) into the lake.

    Rerunning the same config continues the same run: committed shards are skipped."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.orchestration.compile import load_pipeline
    from guiforge.orchestration.runner import run_pipeline

    if executor not in (None, "prefect", "local", "ray"):
        raise GuiforgeError(f"--executor: {executor!r} is not one of prefect, local, ray")
    from guiforge.preflight import preflight

    pipeline = load_pipeline(config, lake=lake, run_id=run_id, executor=executor, ray_address=ray_address)
    preflight(pipeline)
    roles = {s.model_role for s in pipeline.stages if s.model_role}
    models = ", ".join(f"{r}={pipeline.model(r).provider}:{pipeline.model(r).model}" for r in sorted(roles))
    console.print(f"[bold]guiforge run[/] {pipeline.source} → {pipeline.config.lake}  run [cyan]{pipeline.run_id}[/]"
                  + (f"  models: {models}" if models else ""))
    with Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        run_pipeline(pipeline, reporter=ProgressReporter(progress), fresh=fresh, verbose=verbose)
    _print_stats(pipeline.config.lake, pipeline.run_id)
    _print_outputs(pipeline)


def _print_outputs(pipeline) -> None:
    """Where the run's datasets and report are: what a user opens next."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.lake.store import Lake
    from guiforge.report.artifacts import report_location

    lake = Lake(pipeline.config.lake)
    kinds: dict[tuple[str, str], list[str]] = {}
    for r in lake.read_table("exports", pipeline.run_id, columns=["kind", "format", "path"]).to_pylist():
        kinds.setdefault((r["format"], r["path"]), []).append(r["kind"])
    for (fmt, path), names in kinds.items():
        out.print(f"export {fmt} ({', '.join(names)}): {path}", highlight=False, soft_wrap=True)
    report = report_location(lake, pipeline.run_id)
    if lake.exists(lake.path("_reports", f"{pipeline.run_id}.html")):
        out.print(f"report: {report}", highlight=False, soft_wrap=True)


@app.command()
def validate(config: Annotated[Path, typer.Argument(help="pipeline YAML to check")], lake: LakeOpt = None) -> None:
    """Check a pipeline file without running it: keys, types, counts, stage inputs, the
    cards, scenarios and names it uses, and that its lake can be written."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.harness.formats import get_format
    from guiforge.models.profiles import profile_warnings
    from guiforge.orchestration.compile import load_pipeline
    from guiforge.preflight import preflight

    pipeline = load_pipeline(config, lake=lake)
    preflight(pipeline)
    for role, model in sorted(pipeline.config.models.items()):
        # a known model set up to be misread
        for line in profile_warnings(role, model, lambda name: get_format(name).default_coords):
            out.print(f"warning: {line}", highlight=False, soft_wrap=True)
    order = " → ".join(s.name for s in pipeline.stages)
    out.print(f"ok: {config}: run {pipeline.run_id}: {len(pipeline.stages)} stage(s): {order}")


@app.command()
def stats(
    lake: LakeOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="only this run")] = None,
    realism: Annotated[bool, typer.Option("--realism", help="world density, instruction templates, themes and "
                                                            "viewports, the teacher's thoughts and recoveries")] = False,
) -> None:
    """Rows per table and run in the lake (through DuckDB), and why rows were excluded."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.orchestration.compile import load_pipeline

    uri = lake or load_pipeline(None).config.lake
    if realism:
        # heavy: the realism figures' stack (faker, jinja2), only with --realism
        from guiforge.cli_realism import print_realism

        print_realism(out, uri, run_id)
        return
    _print_stats(uri, run_id)


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="show the traceback of an error instead of one line")] = False,
) -> None:
    """guiforge: synthesize computer-use agent training data into a Parquet lake."""


from guiforge.cli_envs import envs_app  # noqa: E402 - the command groups follow the app
from guiforge.cli_lake import lake_app  # noqa: E402 - the command groups follow the app
from guiforge.cli_plugins import plugins  # noqa: E402

app.add_typer(lake_app, name="lake")
app.add_typer(envs_app, name="envs")
app.command("plugins")(plugins)

@app.command()
def report(
    lake: LakeOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="only this run (default: every run)")] = None,
    out_path: Annotated[str, typer.Option("--out", help="HTML file to write (a path or fsspec URI)")] = "report.html",
) -> None:
    """One static HTML page of plots and sample trajectories over the lake (opens offline)."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.orchestration.compile import load_pipeline
    from guiforge.report import write_report

    written = write_report(lake or load_pipeline(None).config.lake, out_path, run_id)
    out.print(f"report: {written}", highlight=False, soft_wrap=True)


@app.command()
def view(
    lake: LakeOpt = None,
    port: Annotated[int, typer.Option("--port", help="port to serve on")] = 8765,
    host: Annotated[str, typer.Option("--host", help="address to bind (loopback unless you mean to share it)")]
    = "127.0.0.1",
) -> None:
    """A local web app over the lake (read-only): runs and provenance, funnel and stage
    timeline, time and cost, filterable tables, the trajectory player, two runs side by side."""
    from guiforge.config import load_pipeline
    from guiforge.lake.store import Lake
    from guiforge.view import make_server

    store = Lake(lake or load_pipeline(None).config.lake)
    try:
        server, viewer = make_server(store, host, port)
    except OSError as exc:
        raise GuiforgeError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}); pick another port") from None
    out.print(f"guiforge view of {store.uri}: http://{host}:{server.server_address[1]}/  (Ctrl-C stops it)",
              highlight=False, soft_wrap=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        viewer.close()


skills_app = typer.Typer(help="List and check skill cards (skills/<app>/<skill>.yaml).", no_args_is_help=True)
app.add_typer(skills_app, name="skills")


@skills_app.command("list")
def skills_list() -> None:
    """Every card: domains, apps, difficulty."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.paths import SKILLS_DIR
    from guiforge.skills.loader import load_cards

    cards = load_cards(SKILLS_DIR)
    table = Table(title=f"{len(cards)} skill cards")
    for col in ("skill", "domains", "apps", "difficulty", "feasible"):
        table.add_column(col)
    for card in cards.values():
        table.add_row(card.id, ",".join(card.domains + [f"/{v}" for v in card.variants]), ",".join(card.apps),
                      card.difficulty, "yes" if card.feasible else "no")
    out.print(table)


@skills_app.command("check")
def skills_check(
    ids: Annotated[list[str] | None, typer.Argument(help="card ids or prefixes (mail.*); default: all")] = None,
    worlds: Annotated[int, typer.Option(help="sample worlds to bind on")] = 12,
    per_card: Annotated[int, typer.Option(help="instances to gate per card")] = 3,
    package: Annotated[bool, typer.Option(help="run the package gate in the real environment")] = True,
) -> None:
    """Bind cards on sample worlds and run every instance through the gates."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.paths import SKILLS_DIR
    from guiforge.skills.check import check_cards, load_selected, sample_worlds

    cards = load_selected(SKILLS_DIR, ids or [])
    failures = 0
    for r in check_cards(cards, sample_worlds(worlds), package=package, max_instances=per_card):
        ok = r.gate == "pass"
        failures += not ok
        where = f"{r.domain}{'/' + r.variant if r.variant else ''}"
        out.print(f"{'[green]pass[/]' if ok else '[red]' + r.gate + '[/]'} {r.skill_id} {where} {r.task_id} "
                  f"({r.seconds:.1f}s) {r.reason}", highlight=False)
    if failures:
        raise GuiforgeError(f"{failures} instance(s) failed their gates")


tasks_app = typer.Typer(help="Export tasks to JSON (guiforge or OSWorld shape) and import them.",
                        no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("export")
def tasks_export(
    out_dir: Annotated[Path, typer.Argument(help="folder to write into")],
    fmt: Annotated[str, typer.Option("--format", help="guiforge (lossless) or osworld")] = "guiforge",
    lake: LakeOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="only this run")] = None,
) -> None:
    """Write every task of the lake as a JSON file."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.lake.store import Lake
    from guiforge.orchestration.compile import load_pipeline
    from guiforge.tasks.io import export_tasks

    if fmt not in ("guiforge", "osworld"):
        raise GuiforgeError(f"--format: {fmt!r} is not one of guiforge, osworld")
    n = export_tasks(Lake(lake or load_pipeline(None).config.lake), out_dir, fmt, run_id)
    out.print(f"exported {n} task(s) to {out_dir} ({fmt})")


@tasks_app.command("import")
def tasks_import(
    files: Annotated[list[Path], typer.Argument(help="task JSON files (guiforge or OSWorld shape)")],
    lake: LakeOpt = None,
    run_id: Annotated[str, typer.Option("--run-id", help="the run to file them under")] = "imported",
) -> None:
    """Read JSON task files into the lake's tasks table."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.lake.store import Lake, checked_run_id
    from guiforge.orchestration.compile import load_pipeline
    from guiforge.tasks.io import import_tasks

    try:
        checked_run_id(run_id)
    except GuiforgeError as exc:
        raise GuiforgeError(f"--run-id: {exc}") from None
    n = import_tasks(Lake(lake or load_pipeline(None).config.lake), files, run_id)
    out.print(f"imported {n} task(s) into run {run_id}")


@app.command("export")
def export_cmd(
    out_dir: Annotated[Path, typer.Option("--out", help="folder to write the dataset into (replaced whole)")],
    lake: LakeOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="the run to export (needed when several)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="hf | trl (Parquet + card) | llamafactory")] = "hf",
    coords: Annotated[str | None, typer.Option(
        "--coords", help="grid999 | grid1000 | pixels | unit | resized (default: the action format's own)")] = None,
    context: Annotated[str | None, typer.Option(
        "--context", help="summary:1 (default: the current screenshot, earlier steps as lines), recorded, or "
                          "rebuild prompts: full, summary:N, last_k:K, window:K:O")] = None,
    action_format: Annotated[str, typer.Option(
        "--action-format", help="what the student writes: guiforge | qwen_vl | uitars | pyautogui | module:Class")]
    = "guiforge",
    samples_per_task: Annotated[int, typer.Option(
        "--samples-per-task", min=0, help="SFT trajectories per task, the best first (0: every accepted one)")] = 1,
    max_length: Annotated[int, typer.Option(
        "--max-length", min=0, help="tokens a row may reach in the trainer (TRL's default 1024; 0: not fitted)")]
    = 1024,
    validation: Annotated[float, typer.Option("--validation", min=0, max=0.5,
                                              help="share of worlds held out for validation")] = 0.05,
    test: Annotated[float, typer.Option("--test", min=0, max=0.5, help="share of worlds held out for test")] = 0.05,
    rl_protocol: Annotated[str, typer.Option(
        "--rl-protocol", help="tools (one act tool call a turn: multi-turn GRPO) | completion (every action in "
                              "one reply: TaskReward)")] = "tools",
    sft_tiers: Annotated[str, typer.Option(
        "--sft-tiers", help="quality tiers in the default SFT configs, comma-separated: gold, silver, partial "
                            "(each tier also has its own config: sft_gold, sft_silver, sft_partial)")] = "gold,silver",
    prm: Annotated[bool, typer.Option("--prm", help="also write process-reward rows (screen, history, action -> "
                                                    "progress delta) for every valid trajectory")] = False,
    kind: Annotated[str, typer.Option(
        "--kind", help="sft (SFT rows and RL prompts) | grounding (the grounding stage's rows: ScreenSpot JSON and "
                       "TRL rows with the point as the target)")] = "sft",
) -> None:
    """Write the run's training datasets: SFT rows (a config per quality tier too), the RL prompt
    set with its per-step rewards, the preference pairs, a dataset card (or, with --kind
    grounding, the grounding rows)."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.export import ExportOptions, commit_export, export_run
    from guiforge.lake.store import Lake
    from guiforge.orchestration.compile import load_pipeline

    store = Lake(lake or load_pipeline(None).config.lake)
    if kind == "grounding":
        _export_grounding(store, out_dir, run_id, coords, validation, test)
        return
    if kind != "sft":
        raise GuiforgeError(f"--kind: {kind!r} is not an export kind; use sft or grounding")
    options = ExportOptions(per_task=samples_per_task or None, max_length=max_length or None, validation=validation,
                            test=test, rl_protocol=rl_protocol,
                            sft_tiers=tuple(t.strip() for t in sft_tiers.split(",") if t.strip()), prm=prm)
    result = export_run(store, out_dir, run_id=run_id, fmt=fmt, coords=coords, context=context,
                        action_format=action_format, options=options)
    commit_export(store, result)
    f = result.figures
    how = "judgments.accepted" if result.acceptance == "judgments" else "verifier success (no judgments in the run)"
    out.print(f"exported run {result.run_id} to {out_dir} ({fmt}, {result.action_format}, {result.coords}): "
              f"{result.n_sft} SFT rows from {f.get('sft_tasks')} tasks, "
              f"{result.n_rl} RL prompts; accepted by {how}; {f['excluded']} left out (see exclusions); "
              f"{f['rows_per_s']} rows/s, {f['sft_bytes_per_step']} bytes per SFT step "
              f"(raw lake {f['raw_bytes_per_step']})", soft_wrap=True)


def _export_grounding(store, out_dir: Path, run_id: str | None, coords: str | None, validation: float,
                      test: float) -> None:
    # heavy: datasets, pyarrow (the grounding export's writers), imported when this runs
    from guiforge.export import commit_export
    from guiforge.export.grounding import export_grounding

    result = export_grounding(store, out_dir, run_id, coords or "grid999", validation, test)
    commit_export(store, result)
    f = result.figures
    domains = ", ".join(f"{d} {n}" for d, n in sorted(f["by_domain"].items()))
    out.print(f"exported the grounding rows of run {result.run_id} to {out_dir} ({result.coords}): {f['rows']} rows "
              f"({domains}; {f['refusals']} refusals) over {f['images']} screenshots; {f['rows_per_s']} rows/s",
              soft_wrap=True, highlight=False)


def _print_stats(lake_uri: str, run_id: str | None) -> None:
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.lake.manifests import entries_snapshot

    with entries_snapshot():  # its parts each want every manifest entry: read them once
        _print_stats_of(lake_uri, run_id)


def _print_stats_of(lake_uri: str, run_id: str | None) -> None:
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.catalog import (
        catalog_hint,
        counts,
        exclusion_reasons,
        rollout_summary,
        write_catalog,
    )
    from guiforge.cli_failures import print_failures
    from guiforge.lake.store import Lake
    from guiforge.report.stats import print_time_and_cost
    from guiforge.report.tiers import print_tiers

    lake = Lake(lake_uri)
    rows = [c for c in counts(lake) if run_id is None or c.run_id == run_id]
    if not rows:
        out.print(f"{lake_uri}: no committed rows" + (f" for run {run_id}" if run_id else ""))
        return
    table = Table(title=f"lake {lake_uri}")
    for col in ("table", "run", "rows", "shards"):
        table.add_column(col, justify="right" if col in ("rows", "shards") else "left")
    for c in rows:
        table.add_row(c.table, c.run_id, str(c.rows), str(c.shards))
    out.print(table)
    reasons = exclusion_reasons(lake, run_id)
    if reasons:
        ex = Table(title="exclusions")
        for col in ("stage", "gate", "rows", "example reason"):
            ex.add_column(col)
        for stage, gate, n, reason in reasons:
            ex.add_row(stage, gate, str(n), (reason or "")[:90])
        out.print(ex)
    summary = rollout_summary(lake, run_id)
    if summary:
        ro = Table(title="rollouts by domain")
        for col in ("domain", "tasks", "trajectories", "success rate", "mixed outcomes", "env failures"):
            ro.add_column(col, justify="left" if col == "domain" else "right")
        for row in summary:
            ro.add_row(*(str(v) for v in row))
        out.print(ro)
    print_failures(out, lake, run_id)
    _print_grounding(lake, run_id)
    _print_curation(lake, run_id)
    print_tiers(out, lake, run_id)
    _print_rounds(lake, run_id)
    _print_pairs(lake, run_id)
    print_time_and_cost(out, lake_uri, run_id)
    catalog = write_catalog(lake)
    out.print(f"DuckDB catalog: {catalog}  ({catalog_hint(lake, catalog)})", highlight=False, soft_wrap=True)


def _print_curation(lake, run_id: str | None) -> None:
    """The funnel (trajectories -> accepted -> RL pool, by domain) and the judge audit."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.catalog import open_catalog

    con = open_catalog(lake)
    try:
        where = "WHERE run_id = ?" if run_id else ""
        args = [run_id] if run_id else []
        funnel = con.execute(f"SELECT * EXCLUDE (run_id) FROM funnel {where}", args).fetchall()
        audit = con.execute(f"SELECT judge, domain, n, tp, fp, tn, fn, precision, recall, accuracy, kappa, "
                            f"len(disagreeing) FROM judge_audit {where} {'AND' if where else 'WHERE'} level <> 'skill'",
                            args).fetchall()
        blind = con.execute(f"SELECT judge, skill_id, n, tp, fn, recall, kappa FROM judge_blind_spots {where}",
                            args).fetchall()
    finally:
        con.close()
    if any(row[4] for row in funnel):  # trajectories
        fu = Table(title="funnel by domain")
        for col in ("domain", "candidates", "gated", "rolled out", "trajectories", "env failures", "verifier passed",
                    "judge passed", "accepted (SFT)", "RL pool", "RL quota"):
            fu.add_column(col, justify="left" if col == "domain" else "right")
        for row in funnel:
            fu.add_row(*("-" if v is None else str(v) for v in row))
        out.print(fu)
    if audit:
        au = Table(title="judge audit vs the verifier (per judge and domain; per skill: the judge_audit view)")
        for col in ("judge", "domain", "n", "TP", "FP", "TN", "FN", "precision", "recall", "accuracy", "kappa",
                    "disagree"):
            au.add_column(col, justify="left" if col in ("judge", "domain") else "right")
        for judge, domain, *rest in audit:
            au.add_row(judge, domain or "all", *("-" if v is None else str(v) for v in rest))
        out.print(au)
        if blind:  # per skill: where the judge turns away most of what the verifier passes
            bs = Table(title="judge blind spots: skills whose verifier-passed trajectories the judge mostly rejects")
            for col in ("judge", "skill", "n", "TP", "FN", "recall", "kappa"):
                bs.add_column(col, justify="left" if col in ("judge", "skill") else "right")
            for row in blind:
                bs.add_row(*("-" if v is None else str(v) for v in row))
            out.print(bs)
        else:
            out.print("judge per skill: every skill's verifier-passed trajectories are mostly accepted "
                      "(per skill: the judge_audit view)")


def _print_grounding(lake, run_id: str | None) -> None:
    """Grounding rows by domain: expressions, refusals, near misses, small targets, and the
    share of rendered boxes that failed the hit test (never emitted)."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.catalog import grounding_summary

    rows = grounding_summary(lake, run_id)
    if rows:
        gt = Table(title="grounding rows by domain (boxes hit-tested; failures never emitted)")
        for col in ("domain", "screens", "rows", "refusals", "near misses", "small targets", "dense-screen rows",
                    "boxes failing hit test"):
            gt.add_column(col, justify="left" if col == "domain" else "right")
        for row in rows:
            gt.add_row(*("-" if v is None else str(v) for v in row))
        out.print(gt)


def _print_rounds(lake, run_id: str | None) -> None:
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.curation.round_stats import round_summary

    rows = round_summary(lake, run_id)
    if rows:
        rt = Table(title="resynthesis rounds (targeted: answers a knowledge-level standout)")
        for col in ("round", "aim", "made", "gated", "rolled out", "success rate", "mixed share"):
            rt.add_column(col, justify="left" if col == "aim" else "right")
        for row in rows:
            rt.add_row(*("-" if v is None else str(v) for v in row))
        out.print(rt)


def _print_pairs(lake, run_id: str | None) -> None:
    """Step-level preference pairs by domain, beside the tasks with mixed outcomes they come from."""
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.catalog import open_catalog

    con = open_catalog(lake)
    try:
        where = "AND run_id = ?" if run_id else ""
        rows = con.execute(f"""
            WITH mixed AS (
                SELECT t.domain, tr.task_id FROM trajectories tr JOIN tasks t USING (run_id, task_id)
                WHERE tr.failure_kind IS NULL AND NOT coalesce(tr.env_failure, false) AND tr.success IS NOT NULL {where.replace('run_id', 'tr.run_id')}
                GROUP BY 1, 2 HAVING count(DISTINCT tr.success) = 2),
            pairs AS (
                SELECT domain, count(*) AS n, count(DISTINCT task_id) AS tasks, mode(failure_mode) AS mode
                FROM preference_pairs WHERE true {where} GROUP BY 1)
            SELECT coalesce(m.domain, p.domain) AS domain, count(DISTINCT m.task_id), any_value(p.tasks),
                   any_value(p.n), any_value(p.mode)
            FROM mixed m FULL JOIN pairs p ON m.domain = p.domain GROUP BY 1 ORDER BY 1""",
                           [run_id, run_id] if run_id else []).fetchall()
    finally:
        con.close()
    if any(r[3] for r in rows):
        pt = Table(title="preference pairs by domain (a failed sample's step against a successful one's)")
        for col in ("domain", "mixed tasks", "tasks with pairs", "pairs", "commonest departure"):
            pt.add_column(col, justify="left" if col in ("domain", "commonest departure") else "right")
        for row in rows:
            pt.add_row(*("-" if v is None else str(v) for v in row))
        out.print(pt)


def main() -> None:
    debug = "--debug" in sys.argv or os.environ.get("GUIFORGE_DEBUG") == "1"
    if "--debug" in sys.argv:
        sys.argv.remove("--debug")
    # heavy: each command imports its own stack when it runs (guiforge --help stays quick)
    from guiforge.shutdown import Interrupted

    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # a command's typer.Exit(n), returned in this mode
            sys.exit(code)
    except Interrupted as exc:
        if debug:
            raise
        console.print(f"[yellow]{exc}[/]", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except GuiforgeError as exc:
        if debug:
            raise
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        console.print("[yellow]interrupted[/]: rerun the same command to resume from the committed shards")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors and unexpected faults: one line, not a traceback
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if debug:
            raise
        console.print(f"[red]error:[/] {type(exc).__name__}: {exc}  (rerun with --debug for the traceback)",
                      highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
