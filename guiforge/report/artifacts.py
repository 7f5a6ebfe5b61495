"""Prefect artifacts for a run: after each stage a markdown artifact (shards, rows written and
in the run, exclusions by reason, wall time), and at the end of the run the report: its key
tables as a markdown artifact the UI shows (rows per table, rollouts by domain, exclusions),
and the whole HTML page written where the lake lives (``<lake>/_reports/``, s3 included),
named in that artifact and in a link artifact. Called from the flows in guiforge.flows.dag; outside a
Prefect flow run they do nothing.

An artifact is a convenience for the Prefect UI, never part of the data: a failure to
publish one is logged as a warning and the run goes on."""

from __future__ import annotations

import logging
import os
import re
import tempfile
from typing import Any

from guiforge.catalog import connect, table_source
from guiforge.lake.store import Lake
from guiforge.report.build import write_report

log = logging.getLogger(__name__)
REPORTS_DIR = "_reports"


def artifact_key(*parts: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(("guiforge",) + parts).lower()).strip("-")[:100]


def _in_flow_run() -> bool:
    # heavy: prefect, imported when this runs
    from prefect.context import FlowRunContext

    return FlowRunContext.get() is not None


def stage_markdown(lake: Lake, run_id: str, summary: dict[str, Any]) -> str:
    """The stage's artifact text: what ran, what it wrote, what it dropped and why."""
    stage = summary["stage"]
    in_run: dict[str, int] = {}
    for entry in lake.manifest_entries(run_id, stage):
        for table, written in entry.get("outputs", {}).items():
            in_run[table] = in_run.get(table, 0) + int(written.get("rows", 0))
    lines = [f"## {stage}", "",
             f"run `{run_id}` · {summary['planned']} shard(s) planned, {summary['ran']} run, "
             f"{summary['skipped']} already committed, {summary['pruned']} pruned · wall {summary['seconds']:.1f} s",
             "", "| table | rows written now | rows in the run |", "| --- | ---: | ---: |"]
    for table in sorted(set(in_run) | set(summary["rows"])):
        lines.append(f"| {table} | {summary['rows'].get(table, 0)} | {in_run.get(table, 0)} |")
    reasons = exclusion_reasons(lake, run_id, stage)
    lines += ["", "### exclusions by reason", ""]
    if reasons:
        lines += ["| gate | reason | rows |", "| --- | --- | ---: |"]
        lines += [f"| {gate} | {_cell(reason)} | {n} |" for gate, reason, n in reasons]
    else:
        lines.append("none")
    return "\n".join(lines)


def exclusion_reasons(lake: Lake, run_id: str, stage: str, limit: int = 20) -> list[tuple[str, str, int]]:
    if not lake.shard_files("exclusions", run_id):
        return []
    source = table_source(lake, "exclusions")
    con = connect(lake)
    try:
        return con.execute(
            f"SELECT gate, left(reason, 160), count(*) AS n FROM {source} WHERE run_id = ? AND stage = ? "
            f"GROUP BY 1, 2 ORDER BY n DESC, 1, 2 LIMIT {int(limit)}", [run_id, stage]).fetchall()
    finally:
        con.close()


def _cell(text: str) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def publish_stage(lake: Lake, run_id: str, summary: dict[str, Any]) -> None:
    """A markdown artifact for one finished stage (keyed by stage, so the UI keeps its history)."""
    if not _in_flow_run():
        return
    try:
        # heavy: prefect, imported when this runs
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=stage_markdown(lake, run_id, summary), key=artifact_key(summary["stage"]),
                                 description=f"guiforge stage {summary['stage']} of run {run_id}")
    except Exception as exc:  # the UI's convenience must not fail a run that wrote its data
        log.warning("guiforge: could not publish the artifact of stage %s: %s", summary["stage"], exc)


def report_location(lake: Lake, run_id: str) -> str:
    """Where a run's report goes: ``<lake>/_reports/<run_id>.html`` (a path, or a URI for
    lakes on object stores)."""
    return lake.url(lake.path(REPORTS_DIR, f"{run_id}.html"))


def _table(head: tuple[str, ...], rows: list[tuple]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    return out + ["| " + " | ".join(_cell("-" if v is None else str(v)) for v in row) + " |" for row in rows]


def report_markdown(lake: Lake, run_id: str, where: str | None) -> str:
    """The report's key tables as markdown: rows per table, rollouts by domain, exclusions."""
    from guiforge.catalog import counts, rollout_summary
    from guiforge.catalog import exclusion_reasons as all_reasons

    lines = [f"# guiforge run `{run_id}`", "",
             f"Full report (HTML, plots and sample trajectories): `{where}`" if where else
             "The HTML report could not be written (see the flow run's logs).", "", "## rows per table", ""]
    lines += _table(("table", "rows", "shards"), [(c.table, c.rows, c.shards) for c in counts(lake)
                                                   if c.run_id == run_id])
    rollouts = rollout_summary(lake, run_id)
    if rollouts:
        lines += ["", "## rollouts by domain", ""]
        lines += _table(("domain", "tasks", "trajectories", "success rate", "mixed outcomes", "env failures"),
                        rollouts)
    reasons = all_reasons(lake, run_id)
    if reasons:
        lines += ["", "## exclusions", ""]
        lines += _table(("stage", "gate", "rows", "example reason"),
                        [(st, g, n, (r or "")[:120]) for st, g, n, r in reasons])
    return "\n".join(lines)


def publish_report(lake: Lake, run_id: str) -> str | None:
    """Write the run's report where the lake lives and publish its key tables (a markdown
    artifact) and its location (a link artifact); returns where it is (None if it could not
    be written)."""
    try:
        if lake.is_local:
            where = write_report(lake, report_location(lake, run_id), run_id)
        else:  # through the lake's own filesystem (its credentials and endpoint), s3:// included
            with tempfile.TemporaryDirectory() as tmp:
                local = write_report(lake, os.path.join(tmp, "report.html"), run_id)
                lake.fs.makedirs(lake.path(REPORTS_DIR), exist_ok=True)
                lake.fs.put_file(local, lake.path(REPORTS_DIR, f"{run_id}.html"))
                for name in os.listdir(tmp):  # the shared assets beside it (plotly.js, once per lake)
                    if name != "report.html" and not lake.exists(lake.path(REPORTS_DIR, name)):
                        lake.fs.put_file(os.path.join(tmp, name), lake.path(REPORTS_DIR, name))
            where = report_location(lake, run_id)
    except Exception as exc:
        log.warning("guiforge: could not write the report of run %s: %s", run_id, exc)
        where = None
    if _in_flow_run():
        try:
            # heavy: prefect, imported when this runs
            from prefect.artifacts import create_link_artifact, create_markdown_artifact

            create_markdown_artifact(markdown=report_markdown(lake, run_id, where), key=artifact_key("report"),
                                     description=f"the key tables of run {run_id}")
            if where:
                link = f"file://{where}" if "://" not in where else where
                create_link_artifact(link=link, link_text=f"guiforge report: {run_id}",
                                     key=artifact_key("report", "html"), description=f"the report of run {run_id}")
        except Exception as exc:
            log.warning("guiforge: could not publish the report of run %s: %s", run_id, exc)
    return where
