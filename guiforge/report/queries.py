"""The report's numbers: one function per figure, each a SQL query over the table views
(guiforge.report.views) returning plain rows, so a figure's data can be checked without
drawing it."""

from __future__ import annotations

import duckdb

from guiforge.report.views import rows

FUNNEL_STAGES = (
    ("candidates", "task_candidates", "SELECT domain, count(DISTINCT run_id || '/' || task_id) AS n FROM task_candidates GROUP BY 1"),
    ("gated", "tasks", "SELECT domain, count(DISTINCT run_id || '/' || task_id) AS n FROM tasks GROUP BY 1"),
    ("rolled out", "trajectories",
     "SELECT t.domain, count(DISTINCT r.run_id || '/' || r.task_id) AS n FROM trajectories r JOIN tasks t USING (run_id, task_id) GROUP BY 1"),
    ("accepted", "judgments",
     "SELECT coalesce(j.domain, t.domain) AS domain, count(DISTINCT j.run_id || '/' || j.task_id) AS n "
     "FROM judgments j LEFT JOIN tasks t USING (run_id, task_id) WHERE j.accepted GROUP BY 1"),
    ("RL pool", "rl_tasks", "SELECT domain, count(DISTINCT run_id || '/' || task_id) AS n FROM rl_tasks GROUP BY 1"),
)


def funnel(con: duckdb.DuckDBPyConnection, filled: set[str]) -> list[dict]:
    """Tasks at each step of the funnel by domain; steps whose table has no rows yet are left
    out (a missing judge stage is not a funnel that rejected everything)."""
    out = []
    for step, table, sql in FUNNEL_STAGES:
        if table not in filled:
            continue
        for r in rows(con, sql + " ORDER BY 1"):
            out.append({"step": step, "domain": r["domain"] or "?", "tasks": r["n"]})
    return out


def table_counts(con: duckdb.DuckDBPyConnection, filled: set[str]) -> list[dict]:
    out = []
    for table in sorted(filled):
        n, runs = con.execute(f"SELECT count(*), count(DISTINCT run_id) FROM {table}").fetchone()
        out.append({"table": table, "rows": n, "runs": runs})
    return out


def success_by_domain(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Success rate over valid samples (a fault of the environment, model or verifier has no
    outcome: success is null, never a failure of the agent)."""
    return rows(con, """
        SELECT t.domain, count(*) AS trajectories, sum(r.env_failure::INT) AS env_failures,
               count(*) FILTER (WHERE r.success IS NULL) AS no_outcome,
               avg(r.success::INT) FILTER (WHERE r.success IS NOT NULL) AS success_rate
        FROM trajectories r JOIN tasks t USING (run_id, task_id) GROUP BY 1 ORDER BY 1""")


def success_by_skill(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT t.skill_id, any_value(t.domain) AS domain, count(*) AS trajectories,
               avg(r.success::INT) FILTER (WHERE r.success IS NOT NULL) AS success_rate
        FROM trajectories r JOIN tasks t USING (run_id, task_id) GROUP BY 1 ORDER BY success_rate, 1""")


def steps_per_trajectory(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT n_steps, success FROM trajectories
        WHERE success IS NOT NULL AND n_steps IS NOT NULL""")


def exclusions_by_gate(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT stage, gate, count(*) AS n, any_value(reason) AS example
        FROM exclusions GROUP BY 1, 2 ORDER BY n DESC, 1, 2""")


def top_exclusion_reasons(con: duckdb.DuckDBPyConnection, limit: int = 15) -> list[dict]:
    return rows(con, f"""
        SELECT stage, gate, left(reason, 160) AS reason, count(*) AS n
        FROM exclusions GROUP BY 1, 2, 3 ORDER BY n DESC, 1, 2, 3 LIMIT {int(limit)}""")


def judge_confusion(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Per judge and domain: the judge's verdict against the verifier's, as confusion counts,
    with precision, recall and Cohen's kappa of the judge taking the verifier as truth."""
    out = rows(con, """
        SELECT judge, coalesce(domain, '?') AS domain, count(*) AS n,
               count(*) FILTER (WHERE success AND verifier_success) AS tp,
               count(*) FILTER (WHERE success AND NOT verifier_success) AS fp,
               count(*) FILTER (WHERE NOT success AND verifier_success) AS fn,
               count(*) FILTER (WHERE NOT success AND NOT verifier_success) AS tn,
               count(*) FILTER (WHERE parse_failure) AS parse_failures
        FROM judgments WHERE success IS NOT NULL AND verifier_success IS NOT NULL
        GROUP BY 1, 2 ORDER BY 1, 2""")
    for r in out:
        r.update(agreement_figures(r["tp"], r["fp"], r["fn"], r["tn"]))
    return out


def agreement_figures(tp: int, fp: int, fn: int, tn: int) -> dict:
    n = tp + fp + fn + tn
    observed = (tp + tn) / n if n else None
    # Chance agreement from the two raters' marginal rates of "success".
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n) if n else None
    kappa = None
    if n and expected is not None and expected < 1:
        kappa = (observed - expected) / (1 - expected)
    return {
        "agreement": observed,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "kappa": kappa,
    }


def acceptance(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT judge, accept_policy, coalesce(accept_reason, '') AS reason, accepted, count(*) AS n
        FROM judgments GROUP BY ALL ORDER BY n DESC LIMIT 20""")


def task_success_rates(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every rolled-out task's success rate over its valid samples: the population the RL
    pool is chosen from."""
    return rows(con, """
        SELECT r.run_id, r.task_id, t.domain, avg(r.success::INT) AS success_rate, count(*) AS n_valid
        FROM trajectories r JOIN tasks t USING (run_id, task_id)
        WHERE r.success IS NOT NULL GROUP BY 1, 2, 3""")


def rl_pool(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, "SELECT task_id, domain, skill_id, success_rate, n_valid, selected_reason FROM rl_tasks")


def rounds(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Per round and domain: tasks, and the success rate of their rollouts. Empty when every
    task is from round 0 (no resynthesis yet)."""
    if not con.execute("SELECT count(*) FROM tasks WHERE coalesce(round, 0) > 0").fetchone()[0]:
        return []
    return rows(con, """
        SELECT coalesce(t.round, 0) AS round, t.domain, count(DISTINCT t.run_id || '/' || t.task_id) AS tasks,
               avg(r.success::INT) FILTER (WHERE r.success IS NOT NULL) AS success_rate
        FROM tasks t LEFT JOIN trajectories r USING (run_id, task_id) GROUP BY 1, 2 ORDER BY 1, 2""")


def relabel_summary(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT coalesce(mode, '?') AS mode, coalesce(failed_check, 'consistent') AS check_result,
               count(*) AS n, avg(attempts) AS attempts
        FROM relabels GROUP BY 1, 2 ORDER BY n DESC""")


def diagnosis_summary(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, """
        SELECT level, coalesce(failure_mode, '?') AS failure_mode, count(*) AS n,
               any_value(left(analysis, 200)) AS example
        FROM diagnoses GROUP BY 1, 2 ORDER BY 1, n DESC""")
