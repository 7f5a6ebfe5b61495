"""Assemble the report's sections from the lake and write the page beside its shared
plotly.js file."""

from __future__ import annotations

import datetime as dt
import os
import posixpath

import fsspec
from plotly.offline import get_plotlyjs

from guiforge.errors import GuiforgeError
from guiforge.lake.store import Lake
from guiforge.report import charts, queries
from guiforge.report.advice import fix_next, load_thresholds, weak_figures
from guiforge.report.failures import failure_counts, injected_counts
from guiforge.report.links import Links
from guiforge.report.page import PLOTLY_ASSET, Link, Section, render
from guiforge.report.patterns import register
from guiforge.report.provenance import header_items, lake_runs
from guiforge.report.samples import pick_samples
from guiforge.report.stats import money, per_unit_line, ratio, run_figures, seconds
from guiforge.report.tiers import tiers_by_domain
from guiforge.report.views import open_views, rows


def build_sections(lake: Lake, run_id: str | None = None, links: Links | None = None) -> list[Section]:
    links = links or Links.default(run_id)
    con, filled = open_views(lake, run_id)
    register(con)
    try:
        flags = weak_figures(con, filled, links, load_thresholds())
        return [
            _overview(con, filled), _attention(con, filled, flags, links), _funnel(con, filled, links),
            _outcomes(con, filled, links, flags), _failures(lake, run_id), _cost_and_time(lake, run_id, links),
            _exclusions(con, filled, links),
            _judge(con, filled, links, flags), _tiers(lake, run_id), _rl_pool(con, filled, links), _rounds(con, links),
            _relabels(con, filled, links), _diagnoses(con, filled, links), _samples(con, filled, links),
        ]
    finally:
        con.close()


def _overview(con, filled) -> Section:
    return Section("Tables", "tables", tables=[("rows per table", queries.table_counts(con, filled))],
                   note="" if filled else "the lake has no committed rows")


def _attention(con, filled, flags: list[dict], links: Links) -> Section:
    """Weak figures against the thresholds, and what to fix next from the diagnoses."""
    weak = [{"figure": Link(f["what"], f["url"]), "value": f["value"], "threshold": f["threshold"]} for f in flags]
    todo = [{"level": r["level"], "failure mode": r["failure_mode"], "skill": r["skill_id"],
             "diagnoses": Link(str(r["n"]), r["url"]), "analysis": r["analysis"], "proposal": r["proposal"],
             "example": Link("open", r["example_url"]) if r["example_url"] else None}
            for r in fix_next(con, filled, links)]
    note = "" if weak or todo else "nothing below its threshold (data/report_thresholds.yaml), and no diagnoses yet"
    return Section("What to fix next", "fix-next", note=note,
                   tables=[("from the diagnoses, biggest first", todo),
                           ("weak figures (thresholds: data/report_thresholds.yaml)", weak)])


def _funnel(con, filled, links: Links) -> Section:
    data = queries.funnel(con, filled)
    missing = [step for step, table, _ in queries.FUNNEL_STAGES if table not in filled]
    note = f"not in the lake yet: {', '.join(missing)}" if data and missing else ""
    return Section("Funnel", "funnel", figures=[charts.funnel(data)] if data else [], note=note,
                   figure_links=[links.rows("tasks")])


def _outcomes(con, filled, links: Links, flags: list[dict]) -> Section:
    if "trajectories" not in filled:
        return Section("Rollouts", "rollouts")
    by_domain = queries.success_by_domain(con)
    by_skill = queries.success_by_skill(con)
    hardest = [{**r, "failures": Link("failures", links.rows("trajectories", skill=r["skill_id"], outcome="failure"))}
               for r in by_skill[:10]]
    return Section("Rollouts", "rollouts",
                   figures=[charts.success_by_domain(by_domain), charts.success_by_app(
                       by_skill, lambda app: links.rows("trajectories", skill_group=app)),
                            charts.success_by_skill(by_skill, lambda s: links.rows("trajectories", skill=s,
                                                                                   outcome="failure")),
                            charts.steps_per_trajectory(queries.steps_per_trajectory(con))],
                   figure_links=[links.rows("trajectories"), links.rows("trajectories"),
                                 links.rows("trajectories", outcome="failure"), links.rows("trajectories")],
                   flags=[f["what"] for f in flags if f["what"].startswith(("skill", "trajectories"))],
                   tables=[("by domain", by_domain), ("the hardest skills", hardest)])


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


def _cost_and_time(lake: Lake, run_id: str | None, links: Links) -> Section:
    """Per run: time per stage, tokens and cost, and the cost per unit (stats prints the same)."""
    tables, notes = [], []
    for run in [run_id] if run_id else lake_runs(lake):
        f = run_figures(lake, run)
        if not f["stages"] and not f["costs"]["units"]["trajectories"]:
            continue
        notes.append(f"{run}: {per_unit_line(f['costs'])}")
        tables.append((f"time per stage ({run})", [
            {"stage": s["stage"], "shards": s["shards"], "rows": s["rows"], "wall": seconds(s["wall_s"]),
             "CPU": seconds(s["cpu_s"]), "shards/s": ratio(s["shards_per_s"], 3), "envs busy": ratio(s["env_busy"]),
             "env use": "–" if s["env_utilisation"] is None else f"{s['env_utilisation']:.0%}",
             "busy/leased": "–" if s.get("env_leased_busy") is None else f"{s['env_leased_busy']:.0%}"}
            for s in f["stages"]]))
        tables.append((f"tokens and cost ({run})", [
            {"role": r["role"], "model": r["model"], "trajectories": r["trajectories"], "prompt": r["prompt_tokens"],
             "completion": r["completion_tokens"], "cached": r["cached_tokens"], "cost": money(r["cost_usd"]),
             "priced by": r["price_source"] or "no price: data/prices.yaml"} for r in f["costs"]["by_role"]]))
    return Section("Time and cost", "cost", note=" · ".join(notes), tables=tables)


def _exclusions(con, filled, links: Links) -> Section:
    if "exclusions" not in filled:
        return Section("Exclusions", "exclusions")
    patterns = [{**r, "rows": Link(str(r.pop("n")), links.rows("exclusions", stage=r["stage"], gate=r["gate"],
                                                                  pattern=r["pattern"]))}
                for r in rows(con, """SELECT stage, gate, reason_pattern(reason) AS pattern, count(*) AS n,
                                             count(DISTINCT reason) AS variants
                                      FROM exclusions GROUP BY ALL ORDER BY n DESC, 1, 2, 3 LIMIT 15""")]
    return Section("Exclusions", "exclusions", figures=[charts.exclusions(queries.exclusions_by_gate(con))],
                   figure_links=[links.rows("exclusions")],
                   tables=[("most frequent reasons, grouped by pattern (ids, numbers and quoted values elided)",
                            patterns)])


def _judge(con, filled, links: Links, flags: list[dict]) -> Section:
    if "judgments" not in filled:
        return Section("Judge", "judge")
    confusion = queries.judge_confusion(con)
    for r in confusion:
        r["disagree"] = Link(str(r["fp"] + r["fn"]), links.rows("judgments", judge=r["judge"], domain=r["domain"],
                                                                agreement="no"))
    return Section("Judge", "judge", figures=[charts.judge_agreement(confusion)] if confusion else [],
                   figure_links=[links.rows("judgments", agreement="no")],
                   flags=[f["what"] + f" = {f['value']} (threshold {f['threshold']})" for f in flags
                          if f["what"].startswith("judge")],
                   tables=[("judge against verifier", confusion),
                           ("judge against verifier per skill (lowest recall first)", queries.judge_by_skill(con)),
                           ("acceptance", queries.acceptance(con))])


def _tiers(lake: Lake, run_id: str | None) -> Section:
    rows = tiers_by_domain(lake, run_id)
    return Section("Quality tiers", "tiers", tables=[("trajectories per tier and domain", rows)],
                   note="" if rows else "none yet: no judgment carries a quality tier")


def _rl_pool(con, filled, links: Links) -> Section:
    if "trajectories" not in filled and "rl_tasks" not in filled:
        return Section("RL pool", "rl-pool")
    pool = queries.rl_pool(con)
    note = "" if pool else "RL pool: none yet (the histogram shows every rolled-out task)"
    return Section("RL pool", "rl-pool", figures=[charts.success_rate_histogram(queries.task_success_rates(con), pool)],
                   figure_links=[links.rows("tasks", outcome="mixed")], note=note, tables=[("selected tasks", pool[:30])])


def _rounds(con, links: Links) -> Section:
    data = queries.rounds(con)
    return Section("Rounds", "rounds", figures=[charts.rounds(data)] if data else [], tables=[("per round", data)],
                   figure_links=[links.rows("tasks", round="1")], note="" if data else "none yet: every task is from round 0")


def _relabels(con, filled, links: Links) -> Section:
    if "relabels" not in filled:
        return Section("Relabels", "relabels")
    data = queries.relabel_summary(con)
    labelled = [{"label": f"{r['mode']} / {r['check_result']}", "n": r["n"]} for r in data]
    return Section("Relabels", "relabels", figures=[charts.counts_bar(labelled, "label", "n", "Relabeled steps")],
                   figure_links=[links.rows("trajectories", accepted="yes")],
                   tables=[("by mode and consistency check", data)])


def _diagnoses(con, filled, links: Links) -> Section:
    if "diagnoses" not in filled:
        return Section("Diagnoses", "diagnoses")
    data = queries.diagnosis_summary(con)
    labelled = [{"label": f"{r['level']} / {r['failure_mode']}", "n": r["n"]} for r in data]
    return Section("Diagnoses", "diagnoses",
                   figures=[charts.counts_bar(labelled, "label", "n", "Diagnoses by level and failure mode")],
                   figure_links=[links.rows("trajectories", outcome="failure")],
                   tables=[("by level and failure mode", data)])


def _samples(con, filled, links: Links) -> Section:
    samples = pick_samples(con, filled)
    for s in samples:
        s.url = links.trajectory(s.trajectory_id, s.run_id)
    note = "" if not samples or "judgments" in filled else "accepted = the verifier's success (no judge stage yet)"
    return Section("Sample trajectories", "samples", samples=samples, note=note)


def _write(out: str, text: str, mode: str = "w") -> None:
    with fsspec.open(out, mode, encoding="utf-8") as fh:
        fh.write(text)


def write_report(lake: Lake | str, out: str | os.PathLike[str] = "report.html", run_id: str | None = None) -> str:
    """Write the report of ``lake`` (one run, or all of them) to ``out`` (a local path or any
    fsspec URI), and plotly.js beside it once (``plotly-<version>.min.js``, shared by the
    reports of that folder). Returns where the page was written."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    if run_id is not None:
        runs = lake_runs(lake)
        if run_id not in runs:
            raise GuiforgeError(f"--run-id: run {run_id!r} is not in the lake {lake.uri}; "
                                f"runs there: {', '.join(runs) or 'none'}")
    links = Links.default(run_id)
    sections = build_sections(lake, run_id, links)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    subtitle = f"lake {lake.uri} · {'run ' + run_id if run_id else 'all runs'} · written {stamp}"
    provenance = header_items(run_figures(lake, run_id)["provenance"]) if run_id else [
        ("runs", ", ".join(lake_runs(lake)))]
    page = render(run_id or lake.uri, subtitle, sections, provenance, links.run())
    out = str(out)
    if "://" not in out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        out = os.path.abspath(out)
    _write(out, page)
    asset = posixpath.join(posixpath.dirname(out), PLOTLY_ASSET)
    fs, path = fsspec.core.url_to_fs(asset)
    if not fs.exists(path):  # versioned by name: one file serves every report beside it
        _write(asset, get_plotlyjs())
    return out
