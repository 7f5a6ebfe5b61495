"""Ready-made DuckDB views over the per-table views of the catalog.

- ``funnel``: per run and domain, candidates -> gated -> rolled out -> accepted -> RL pool;
- ``judge_audit``: per run and judge, overall, per domain and per skill: confusion counts
  against the code verifier, precision, recall, accuracy, Cohen's kappa and the ids of the
  trajectories where they disagree;
- ``judge_blind_spots``: the skill rows of ``judge_audit`` where the verifier passed some
  trajectories and the judge accepted fewer than half of them (recall below 0.5), worst first:
  a judge rule that wipes out a whole skill shows here;
- ``rl_pool``: the RL tasks with their success rates and quotas;
- ``sft_rows``: the steps of accepted trajectories, minus steps a ``relabels`` row marks
  inconsistent.
Every table exists in the catalog even when empty, so these bind on any lake.
"""

from __future__ import annotations

import duckdb

FUNNEL = """
WITH cand AS (SELECT run_id, domain, count(*) AS n FROM task_candidates GROUP BY ALL),
gated AS (SELECT run_id, domain, count(*) AS n FROM tasks GROUP BY ALL),
rolled AS (
    SELECT r.run_id, t.domain, count(DISTINCT r.task_id) AS tasks, count(*) AS trajectories,
           sum(r.success::INT) AS verified, sum(r.env_failure::INT) AS env_failures
    FROM trajectories r JOIN tasks t ON t.task_id = r.task_id AND t.run_id = r.run_id GROUP BY ALL),
judged AS (
    SELECT run_id, domain, count(DISTINCT trajectory_id) AS judged,
           count(DISTINCT trajectory_id) FILTER (WHERE success) AS judge_passed
    FROM judgments GROUP BY ALL),
accepted AS (
    SELECT run_id, domain, count(*) AS n FROM (
        SELECT run_id, domain, trajectory_id FROM judgments GROUP BY ALL HAVING bool_and(accepted))
    GROUP BY ALL),
pool AS (SELECT run_id, domain, count(*) AS n, max(quota) AS pool_quota FROM rl_tasks GROUP BY ALL),
keys AS (SELECT run_id, domain FROM cand UNION SELECT run_id, domain FROM gated
         UNION SELECT run_id, domain FROM rolled)
SELECT k.run_id, k.domain,
       coalesce(cand.n, 0) AS candidates, coalesce(gated.n, 0) AS gated,
       coalesce(rolled.tasks, 0) AS rolled_out_tasks, coalesce(rolled.trajectories, 0) AS trajectories,
       coalesce(rolled.env_failures, 0) AS env_failures, coalesce(rolled.verified, 0) AS verifier_passed,
       coalesce(judged.judge_passed, 0) AS judge_passed, coalesce(accepted.n, 0) AS accepted,
       coalesce(pool.n, 0) AS rl_pool, pool.pool_quota AS rl_quota
FROM keys k
LEFT JOIN cand USING (run_id, domain) LEFT JOIN gated USING (run_id, domain)
LEFT JOIN rolled USING (run_id, domain) LEFT JOIN judged USING (run_id, domain)
LEFT JOIN accepted USING (run_id, domain) LEFT JOIN pool USING (run_id, domain)
ORDER BY k.run_id, k.domain
"""

JUDGE_AUDIT = """
WITH j AS (
    SELECT * FROM judgments WHERE success IS NOT NULL AND verifier_success IS NOT NULL),
counts AS (
    SELECT run_id, judge,
           CASE WHEN grouping(domain) = 1 THEN 'all' WHEN grouping(skill_id) = 1 THEN 'domain'
                ELSE 'skill' END AS level,
           CASE WHEN grouping(domain) = 1 THEN NULL ELSE domain END AS domain,
           CASE WHEN grouping(skill_id) = 1 THEN NULL ELSE skill_id END AS skill_id,
           count(*) AS n,
           count(*) FILTER (WHERE success AND verifier_success) AS tp,
           count(*) FILTER (WHERE success AND NOT verifier_success) AS fp,
           count(*) FILTER (WHERE NOT success AND NOT verifier_success) AS tn,
           count(*) FILTER (WHERE NOT success AND verifier_success) AS fn,
           list(trajectory_id ORDER BY trajectory_id) FILTER (WHERE success <> verifier_success) AS disagreeing
    FROM j
    GROUP BY GROUPING SETS ((run_id, judge), (run_id, judge, domain), (run_id, judge, domain, skill_id)))
SELECT run_id, judge, level, domain, skill_id, n, tp, fp, tn, fn,
       round(tp / nullif(tp + fp, 0)::DOUBLE, 4) AS precision,
       round(tp / nullif(tp + fn, 0)::DOUBLE, 4) AS recall,
       round((tp + tn) / nullif(n, 0)::DOUBLE, 4) AS accuracy,
       -- Cohen's kappa: observed agreement against the agreement the two marginals give by chance
       round((((tp + tn) / n::DOUBLE) - chance) / nullif(1 - chance, 0), 4) AS kappa,
       coalesce(disagreeing, []) AS disagreeing
FROM (SELECT *, ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)::DOUBLE AS chance FROM counts)
ORDER BY run_id, judge, level = 'skill', level = 'domain', domain, skill_id
"""

JUDGE_BLIND_SPOTS = """
SELECT run_id, judge, domain, skill_id, n, tp, fn, fp, tn, recall, precision, kappa, disagreeing
FROM judge_audit WHERE level = 'skill' AND tp + fn > 0 AND recall < 0.5
ORDER BY run_id, judge, recall, tp + fn DESC, skill_id
"""

RL_POOL = """
SELECT run_id, domain, rank, task_id, skill_id, success_rate, n_success, n_valid, n_samples, quota, filled,
       instruction, selected_reason
FROM rl_tasks ORDER BY run_id, domain, rank
"""

SFT_ROWS = """
WITH accepted AS (
    SELECT run_id, trajectory_id FROM judgments GROUP BY ALL HAVING bool_and(accepted)),
inconsistent AS (
    SELECT DISTINCT run_id, trajectory_id, step_index FROM relabels WHERE consistent = false)
SELECT s.* FROM steps s
JOIN accepted a ON a.run_id = s.run_id AND a.trajectory_id = s.trajectory_id
ANTI JOIN inconsistent i ON i.run_id = s.run_id AND i.trajectory_id = s.trajectory_id
                        AND i.step_index = s.step_index
ORDER BY s.run_id, s.trajectory_id, s.step_index
"""

VIEWS = {"funnel": FUNNEL, "judge_audit": JUDGE_AUDIT, "judge_blind_spots": JUDGE_BLIND_SPOTS, "rl_pool": RL_POOL,
         "sft_rows": SFT_ROWS}


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
