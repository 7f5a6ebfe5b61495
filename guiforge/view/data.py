"""What the viewer reads from the lake, read-only through DuckDB: the runs, one run's
overview (provenance, funnel, stage timeline, time and cost, success by skill, judge audit,
exclusions by pattern), row tables (rows.py), one trajectory with its steps, a screenshot by
hash, and two runs side by side. One connection, one query at a time (a lock), views over
every table of every run; ``refresh()`` picks up tables that were empty at start."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from guiforge.catalog import connect, create_table_views
from guiforge.lake.store import Lake
from guiforge.report.costs import cost_summary, trajectory_costs
from guiforge.report.patterns import register
from guiforge.report.provenance import differences, header_items, lake_runs, run_provenance
from guiforge.report.timing import shard_times, stage_times
from guiforge.report.views import open_views, rows
from guiforge.view.rows import Page, list_rows

FUNNEL = """
SELECT 'candidates' AS step, 'tasks' AS unit, count(*) AS n, 'task_candidates' AS rows_of, '' AS query
    FROM task_candidates WHERE run_id = $run
UNION ALL SELECT 'gated', 'tasks', count(*), 'tasks', '' FROM tasks WHERE run_id = $run
UNION ALL SELECT 'rolled out', 'trajectories', count(*), 'trajectories', '' FROM trajectories WHERE run_id = $run
UNION ALL SELECT 'verifier passed', 'trajectories', count(*) FILTER (WHERE success), 'trajectories', 'outcome=success'
    FROM trajectories WHERE run_id = $run
UNION ALL SELECT 'judged', 'judgments', count(*), 'judgments', '' FROM judgments WHERE run_id = $run
UNION ALL SELECT 'accepted (SFT)', 'trajectories', count(DISTINCT trajectory_id) FILTER (WHERE accepted),
    'trajectories', 'accepted=yes' FROM judgments WHERE run_id = $run
UNION ALL SELECT 'RL pool', 'tasks', count(*), 'rl_tasks', '' FROM rl_tasks WHERE run_id = $run
UNION ALL SELECT 'excluded', 'rows', count(*), 'exclusions', '' FROM exclusions WHERE run_id = $run
"""

BY_SKILL = """
SELECT t.domain, t.skill_id, count(*) AS trajectories,
       count(*) FILTER (WHERE r.success) AS successes, count(*) FILTER (WHERE NOT r.success) AS failures,
       avg(r.success::INT) FILTER (WHERE r.success IS NOT NULL) AS success_rate
FROM trajectories r JOIN tasks t USING (run_id, task_id) WHERE r.run_id = $run
GROUP BY ALL ORDER BY success_rate NULLS LAST, t.skill_id
"""

AUDIT = """
SELECT judge, level, coalesce(domain, 'all') AS domain, n, tp, fp, tn, fn, precision, recall, kappa,
       len(disagreeing) AS disagree
FROM judge_audit WHERE run_id = $run AND level <> 'skill' ORDER BY judge, level = 'domain', domain
"""

EXCLUSIONS = """
SELECT stage, gate, reason_pattern(reason) AS pattern, count(*) AS n, any_value(reason) AS example
FROM exclusions WHERE run_id = $run GROUP BY ALL ORDER BY n DESC LIMIT 40
"""


class ViewData:
    def __init__(self, lake: Lake):
        self.lake = lake
        self._lock = threading.Lock()
        self._images: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self.con = connect(lake)
        self.refresh()

    def refresh(self) -> None:
        """Views over the tables as they are now (a table empty at start gets its view)."""
        with self._lock:
            for (name,) in self.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall():
                self.con.execute(f'DROP VIEW IF EXISTS "{name}"')
            for (name,) in self.con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
                self.con.execute(f'DROP TABLE IF EXISTS "{name}"')
            create_table_views(self.con, self.lake)
            register(self.con)

    def close(self) -> None:
        with self._lock:
            self.con.close()

    def _rows(self, sql: str, params: dict | list | None = None) -> list[dict]:
        with self._lock:
            return rows(self.con, sql, params)

    # -- pages ---------------------------------------------------------------------------
    def runs(self) -> list[dict]:
        out = []
        for run in lake_runs(self.lake):
            counts = self._rows("""SELECT (SELECT count(*) FROM tasks WHERE run_id = $run) AS tasks,
                (SELECT count(*) FROM trajectories WHERE run_id = $run) AS trajectories,
                (SELECT avg(success::INT) FROM trajectories WHERE run_id = $run) AS success_rate,
                (SELECT count(*) FROM rl_tasks WHERE run_id = $run) AS rl_tasks""", {"run": run})[0]
            p = run_provenance(self.lake, run)
            out.append({"run_id": run, **counts, "provenance": header_items(p)[1:4],
                        "recorded_at": p.get("recorded_at")})
        return out

    def figures(self, run: str) -> dict:
        """Provenance, time and cost: the figures stats and the report print, for one run."""
        con, filled = open_views(self.lake, run)
        try:
            provenance = run_provenance(self.lake, run, con, filled)
            costs = cost_summary(con, filled, {run: provenance})
        finally:
            con.close()
        return {"provenance": provenance, "costs": costs, "stages": stage_times(self.lake, run, provenance)}

    def run_overview(self, run: str) -> dict:
        figures = self.figures(run)
        params = {"run": run}
        return {"run_id": run, **figures, "header": header_items(figures["provenance"]),
                "funnel": self._rows(FUNNEL, params), "by_skill": self._rows(BY_SKILL, params),
                "audit": self._rows(AUDIT, params), "exclusions": self._rows(EXCLUSIONS, params),
                "shards": shard_times(self.lake, run)}

    def page(self, table: str, filters: dict[str, str], sort: str | None, desc: bool, offset: int,
             limit: int) -> Page:
        with self._lock:
            return list_rows(self.con, table, filters, sort, desc, offset, limit)

    def trajectory(self, run: str, trajectory_id: str) -> dict | None:
        params = {"run": run, "id": trajectory_id}
        found = self._rows("""
            SELECT r.*, t.instruction, t.domain, t.skill_id, t.apps, t.rubric_json, t.difficulty, t.round
            FROM trajectories r LEFT JOIN tasks t USING (run_id, task_id)
            WHERE r.run_id = $run AND r.trajectory_id = $id""", params)
        if not found:
            return None
        trajectory = found[0]
        steps = self._rows("""SELECT step_index, image_sha256, image_width, image_height, thought, raw_output,
                action, action_pixels_json, feedback, error, latency_s, input_tokens, output_tokens, prompt_hash,
                prompt_messages, target_json, attempts_json
            FROM steps WHERE run_id = $run AND trajectory_id = $id ORDER BY step_index""", params)
        judgments = self._rows("""SELECT judge, judge_model, success, score, verifier_success, agrees, rationale,
                evidence_steps, evidence_images, flags, parse_failure, accepted, accept_policy, accept_reason,
                input_tokens, output_tokens
            FROM judgments WHERE run_id = $run AND trajectory_id = $id ORDER BY judge""", params)
        siblings = self._rows("""SELECT trajectory_id, sample_index, success FROM trajectories
            WHERE run_id = $run AND task_id = $task ORDER BY sample_index""",
                              {"run": run, "task": trajectory["task_id"]})
        con, filled = open_views(self.lake, run)
        try:
            cost = trajectory_costs(con, {run: run_provenance(self.lake, run)}).get((run, trajectory_id))
        finally:
            con.close()
        return {"trajectory": trajectory, "steps": steps, "judgments": judgments, "siblings": siblings,
                "cost": cost, "criteria": _json(trajectory.get("criteria_json")),
                "rubric": _json(trajectory.get("rubric_json"))}

    def image(self, sha256: str) -> tuple[bytes, str] | None:
        if sha256 in self._images:
            self._images.move_to_end(sha256)
            return self._images[sha256]
        found = self._rows("SELECT data, format FROM images WHERE sha256 = $sha LIMIT 1", {"sha": sha256})
        if not found:
            return None
        value = (found[0]["data"], found[0]["format"] or "png")
        self._images[sha256] = value
        while len(self._images) > 256:  # a few trajectories' frames
            self._images.popitem(last=False)
        return value

    def compare(self, a: str, b: str) -> dict:
        """Two runs side by side: funnel, success by skill, judge audit, their figures, and
        what changed between them in config, models, code and plugins."""
        sides = {}
        for run in (a, b):
            figures = self.figures(run)
            sides[run] = {**figures, "funnel": {r["step"]: r["n"] for r in self._rows(FUNNEL, {"run": run})},
                          "by_skill": {r["skill_id"]: r for r in self._rows(BY_SKILL, {"run": run})},
                          "audit": self._rows(AUDIT, {"run": run})}
        skills = sorted(set(sides[a]["by_skill"]) | set(sides[b]["by_skill"]))
        return {"a": a, "b": b, "sides": sides, "skills": skills,
                "changes": differences(sides[a]["provenance"], sides[b]["provenance"])}


def _json(text: str | None):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None
