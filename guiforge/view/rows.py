"""The viewer's row tables: tasks, trajectories, judgments and exclusions, each one SQL query
with the same columns to filter on (run, domain, app, skill, outcome, judge/verifier
agreement, failure kind, tier, round, and a few of the table's own) and to sort by. A link
from any count in the report or the viewer is a set of these filters."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

# Filters every table understands, with the SQL each stands for over the table's query.
COMMON = {
    "run": "run_id = ?",
    "domain": "domain = ?",
    "app": "list_contains(apps, ?)",
    "skill": "skill_id = ?",
    "skill_group": "split_part(skill_id, '.', 1) = ?",  # the skills of one application (mail.*)
    "tier": "tier = ?",
    "round": "round = TRY_CAST(? AS INTEGER)",
}
OUTCOME = {"success": "outcome = 'success'", "failure": "outcome = 'failure'", "none": "outcome IS NULL"}
TRUTH = {"yes": "= true", "no": "= false", "none": "IS NULL"}


def _failure_kind(con: duckdb.DuckDBPyConnection) -> str:
    """trajectories.failure_kind where the lake has it; older rows: derived from env_failure
    and the error (a model or verifier failure was not told apart then)."""
    columns = {r[0] for r in con.execute("DESCRIBE trajectories").fetchall()}
    derived = ("CASE WHEN r.env_failure THEN 'env_failure' WHEN r.error LIKE 'parse failure%' "
               "THEN 'parse_failure' END")
    return f"coalesce(r.failure_kind, {derived})" if "failure_kind" in columns else derived


_VERDICTS = """(SELECT run_id, trajectory_id, bool_and(success) AS judge_success, bool_and(agrees) AS agrees,
                bool_and(accepted) AS accepted, string_agg(DISTINCT judge, ', ') AS judges
         FROM judgments GROUP BY ALL)"""

_TASK = "t.domain, t.apps, t.skill_id, t.difficulty AS tier, coalesce(t.round, 0) AS round"


def base_sql(table: str, con: duckdb.DuckDBPyConnection) -> str:
    if table == "trajectories":
        return f"""
            SELECT r.run_id, r.trajectory_id, r.task_id, {_TASK}, r.sample_index,
                   CASE WHEN r.success THEN 'success' WHEN NOT r.success THEN 'failure' END AS outcome,
                   r.score, r.n_steps, {_failure_kind(con)} AS failure_kind, v.judge_success, v.agrees,
                   v.accepted, r.wall_s, r.input_tokens, r.output_tokens, r.error, t.instruction
            FROM trajectories r LEFT JOIN tasks t USING (run_id, task_id)
            LEFT JOIN {_VERDICTS} v USING (run_id, trajectory_id)"""
    if table == "judgments":
        return """
            SELECT j.run_id, j.trajectory_id, j.task_id, coalesce(j.domain, t.domain) AS domain, t.apps,
                   coalesce(j.skill_id, t.skill_id) AS skill_id, t.difficulty AS tier, coalesce(t.round, 0) AS round,
                   j.judge, CASE WHEN j.success THEN 'success' WHEN NOT j.success THEN 'failure' END AS outcome,
                   j.verifier_success, j.agrees, j.accepted, j.accept_reason, j.parse_failure,
                   j.input_tokens, j.output_tokens, j.rationale
            FROM judgments j LEFT JOIN tasks t USING (run_id, task_id)"""
    if table == "tasks":
        return f"""
            WITH rolled AS (
                SELECT run_id, task_id, count(*) AS trajectories, avg(success::INT) AS success_rate
                FROM trajectories GROUP BY ALL)
            SELECT t.run_id, t.task_id, {_TASK}, t.variant, t.instruction, t.parent_task_id,
                   coalesce(rolled.trajectories, 0) AS trajectories, rolled.success_rate,
                   CASE WHEN rolled.success_rate = 1 THEN 'success' WHEN rolled.success_rate = 0 THEN 'failure'
                        WHEN rolled.success_rate IS NOT NULL THEN 'mixed' END AS outcome
            FROM tasks t LEFT JOIN rolled USING (run_id, task_id)"""
    if table == "exclusions":
        return """
            WITH subjects AS (
                SELECT run_id, task_id AS subject_id, domain, apps, skill_id, difficulty AS tier,
                       coalesce(round, 0) AS round FROM task_candidates
                UNION ALL BY NAME
                SELECT run_id, task_id AS subject_id, domain, apps, skill_id, difficulty AS tier,
                       coalesce(round, 0) AS round FROM tasks
                UNION ALL BY NAME
                SELECT r.run_id, r.trajectory_id AS subject_id, t.domain, t.apps, t.skill_id, t.difficulty AS tier,
                       coalesce(t.round, 0) AS round
                FROM trajectories r JOIN tasks t USING (run_id, task_id)),
            one AS (SELECT run_id, subject_id, any_value(domain) AS domain, any_value(apps) AS apps,
                           any_value(skill_id) AS skill_id, any_value(tier) AS tier, any_value(round) AS round
                    FROM subjects GROUP BY ALL)
            SELECT e.run_id, e.stage, e.gate, reason_pattern(e.reason) AS pattern, e.subject_id, e.subject_table,
                   one.domain, one.apps, one.skill_id, one.tier, one.round, NULL AS outcome, e.reason
            FROM exclusions e LEFT JOIN one USING (run_id, subject_id)"""
    raise KeyError(table)


TABLES = ("trajectories", "tasks", "judgments", "exclusions")
# Filters of one table beyond COMMON.
OWN = {
    "trajectories": {"outcome": OUTCOME, "agreement": "agrees", "accepted": "accepted",
                     "failure_kind": "failure_kind = ?", "task": "task_id = ?", "trajectory": "trajectory_id = ?"},
    "judgments": {"outcome": OUTCOME, "agreement": "agrees", "accepted": "accepted", "judge": "judge = ?",
                  "trajectory": "trajectory_id = ?", "task": "task_id = ?"},
    "tasks": {"outcome": {**OUTCOME, "mixed": "outcome = 'mixed'"}, "task": "task_id = ?",
              "parent": "parent_task_id = ?"},
    "exclusions": {"stage": "stage = ?", "gate": "gate = ?", "pattern": "pattern = ?",
                   "subject": "subject_id = ?"},
}


def filter_names(table: str) -> list[str]:
    return [*COMMON, *OWN[table]]


@dataclass
class Page:
    table: str
    columns: list[str]
    rows: list[tuple]
    total: int
    filters: dict[str, str]
    sort: str | None
    desc: bool
    offset: int
    limit: int
    choices: dict[str, list[str]]  # filter -> values seen in this table (for the filter form)


def where_clause(table: str, filters: dict[str, str]) -> tuple[str, list]:
    """SQL conditions and parameters for ``filters`` (unknown names and empty values ignored;
    a value a filter does not know gives no rows, never an error)."""
    conds, params = [], []
    own = OWN[table]
    for name, value in filters.items():
        if value in ("", None):
            continue
        spec = COMMON.get(name, own.get(name))
        if spec is None:
            continue
        if isinstance(spec, dict):  # a closed set of values
            conds.append(spec.get(value, "false"))
        elif " " not in spec:  # a boolean column: yes / no / none
            conds.append(f"{spec} {TRUTH[value]}" if value in TRUTH else "false")
        else:
            conds.append(spec)
            params.append(value)
    return (" WHERE " + " AND ".join(conds)) if conds else "", params


def list_rows(con: duckdb.DuckDBPyConnection, table: str, filters: dict[str, str], sort: str | None = None,
              desc: bool = False, offset: int = 0, limit: int = 100) -> Page:
    base = base_sql(table, con)
    where, params = where_clause(table, filters)
    columns = [d[0] for d in con.execute(f"SELECT * FROM ({base}) LIMIT 0").description]
    order = f" ORDER BY {sort} {'DESC' if desc else 'ASC'} NULLS LAST" if sort in columns else ""
    total = con.execute(f"SELECT count(*) FROM ({base}){where}", params).fetchone()[0]
    data = con.execute(f"SELECT * FROM ({base}){where}{order} LIMIT {int(limit)} OFFSET {int(offset)}",
                       params).fetchall()
    choices = {}
    run_only = {"run": filters["run"]} if filters.get("run") else {}
    scope, scope_params = where_clause(table, run_only)
    for name, column in (("domain", "domain"), ("skill", "skill_id"), ("tier", "tier"), ("round", "round"),
                         ("failure_kind", "failure_kind"), ("judge", "judge"), ("gate", "gate"),
                         ("stage", "stage"), ("pattern", "pattern")):
        if column in columns and name in filter_names(table):
            choices[name] = [str(v[0]) for v in con.execute(
                f"SELECT DISTINCT {column} FROM ({base}){scope} ORDER BY 1 LIMIT 300", scope_params).fetchall()
                if v[0] is not None]
    if "apps" in columns:
        choices["app"] = [v[0] for v in con.execute(
            f"SELECT DISTINCT unnest(apps) FROM ({base}){scope} ORDER BY 1", scope_params).fetchall()]
    return Page(table, columns, data, total, filters, sort if order else None, desc, offset, limit, choices)
