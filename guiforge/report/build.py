"""Assemble the report's sections from the lake and write the page."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import fsspec

from guiforge.errors import GuiforgeError
from guiforge.lake.store import Lake
from guiforge.report import charts, queries
from guiforge.report.failures import failure_counts, injected_counts
from guiforge.report.page import Section, render
from guiforge.report.samples import pick_samples
from guiforge.report.views import open_views


def build_sections(lake: Lake, run_id: str | None = None) -> list[Section]:
    con, filled = open_views(lake, run_id)
    try:
        return [
            _overview(con, filled), _funnel(con, filled), _outcomes(con, filled), _failures(lake, run_id),
            _exclusions(con, filled),
            _judge(con, filled), _rl_pool(con, filled), _rounds(con), _relabels(con, filled),
            _diagnoses(con, filled), _samples(con, filled),
        ]
    finally:
        con.close()


def _overview(con, filled) -> Section:
    return Section("Tables", "tables", tables=[("rows per table", queries.table_counts(con, filled))],
                   note="" if filled else "the lake has no committed rows")


def _funnel(con, filled) -> Section:
    data = queries.funnel(con, filled)
    missing = [step for step, table, _ in queries.FUNNEL_STAGES if table not in filled]
    note = f"not in the lake yet: {', '.join(missing)}" if data and missing else ""
    return Section("Funnel", "funnel", figures=[charts.funnel(data)] if data else [], note=note)


def _outcomes(con, filled) -> Section:
    if "trajectories" not in filled:
        return Section("Rollouts", "rollouts")
    by_domain = queries.success_by_domain(con)
    return Section("Rollouts", "rollouts",
                   figures=[charts.success_by_domain(by_domain), charts.success_by_skill(queries.success_by_skill(con)),
                            charts.steps_per_trajectory(queries.steps_per_trajectory(con))],
                   tables=[("by domain", by_domain)])


def _failures(lake: Lake, run_id: str | None) -> Section:
    by_stage = failure_counts(lake, run_id)
    runs = sorted({r["run_id"] for r in by_stage} | ({run_id} if run_id else set()))
    injected = [{"run_id": run, **r} for run in runs for r in injected_counts(lake, run)]
    labelled = [{"label": f"{r['stage']} / {r['domain']}", "n": r["total"]} for r in by_stage]
    note = ("none: no episode, gate, judgment or relabel met a fault" if not by_stage else
            "environment, model and verifier failures have no outcome (never a reward or training data); "
            "parse failures are the policy's own")
    return Section("Failures", "failures", note=note,
                   figures=[charts.counts_bar(labelled, "label", "n", "Failures by stage and domain")] if by_stage else [],
                   tables=[("by stage, domain and kind", by_stage),
                           *([("injected (faults: in the pipeline file)", injected)] if injected else [])])


def _exclusions(con, filled) -> Section:
    if "exclusions" not in filled:
        return Section("Exclusions", "exclusions")
    return Section("Exclusions", "exclusions", figures=[charts.exclusions(queries.exclusions_by_gate(con))],
                   tables=[("most frequent reasons", queries.top_exclusion_reasons(con))])


def _judge(con, filled) -> Section:
    if "judgments" not in filled:
        return Section("Judge", "judge")
    confusion = queries.judge_confusion(con)
    return Section("Judge", "judge", figures=[charts.judge_agreement(confusion)] if confusion else [],
                   tables=[("judge against verifier", confusion), ("acceptance", queries.acceptance(con))])


def _rl_pool(con, filled) -> Section:
    if "trajectories" not in filled and "rl_tasks" not in filled:
        return Section("RL pool", "rl-pool")
    pool = queries.rl_pool(con)
    note = "" if pool else "RL pool: none yet (the histogram shows every rolled-out task)"
    return Section("RL pool", "rl-pool", figures=[charts.success_rate_histogram(queries.task_success_rates(con), pool)],
                   note=note, tables=[("selected tasks", pool[:30])])


def _rounds(con) -> Section:
    data = queries.rounds(con)
    return Section("Rounds", "rounds", figures=[charts.rounds(data)] if data else [], tables=[("per round", data)],
                   note="" if data else "none yet: every task is from round 0")


def _relabels(con, filled) -> Section:
    if "relabels" not in filled:
        return Section("Relabels", "relabels")
    data = queries.relabel_summary(con)
    labelled = [{"label": f"{r['mode']} / {r['check_result']}", "n": r["n"]} for r in data]
    return Section("Relabels", "relabels", figures=[charts.counts_bar(labelled, "label", "n", "Relabeled steps")],
                   tables=[("by mode and consistency check", data)])


def _diagnoses(con, filled) -> Section:
    if "diagnoses" not in filled:
        return Section("Diagnoses", "diagnoses")
    data = queries.diagnosis_summary(con)
    labelled = [{"label": f"{r['level']} / {r['failure_mode']}", "n": r["n"]} for r in data]
    return Section("Diagnoses", "diagnoses",
                   figures=[charts.counts_bar(labelled, "label", "n", "Diagnoses by level and failure mode")],
                   tables=[("by level and failure mode", data)])


def _samples(con, filled) -> Section:
    samples = pick_samples(con, filled)
    note = "" if not samples or "judgments" in filled else "accepted = the verifier's success (no judge stage yet)"
    return Section("Sample trajectories", "samples", samples=samples, note=note)


def write_report(lake: Lake | str, out: str | os.PathLike[str] = "report.html", run_id: str | None = None) -> str:
    """Write the report of ``lake`` (one run, or all of them) to ``out``: a local path or
    any fsspec URI. Returns where it was written."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    if run_id is not None:
        runs = sorted({r for table in lake.tables() for r in lake.runs(table)})
        if run_id not in runs:
            raise GuiforgeError(f"--run-id: run {run_id!r} is not in the lake {lake.uri}; "
                                f"runs there: {', '.join(runs) or 'none'}")
    sections = build_sections(lake, run_id)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    subtitle = f"lake {lake.uri} · {'run ' + run_id if run_id else 'all runs'} · written {stamp}"
    page = render(run_id or lake.uri, subtitle, sections)
    out = str(out)
    if "://" not in out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        out = str(Path(out).resolve())
    with fsspec.open(out, "w", encoding="utf-8") as fh:
        fh.write(page)
    return out
