"""Per-round figures of the resynthesis loop (``guiforge stats``): tasks made, gated,
success rate and mixed-outcome share, targeted tasks against the rest.

A round's "targeted" tasks answer a knowledge-level standout (their diagnosis names a
weakness that stood out); the rest answer single failed tasks. Round 0 has neither.
"""

from __future__ import annotations

ROUNDS_SQL = """
WITH standout AS (SELECT diagnosis_id FROM diagnoses WHERE level = 'knowledge' AND failure_mode NOT IN ('rates', 'never_solved')),
     cand AS (
        SELECT DISTINCT task_id, coalesce(round, 0) AS round,
               CASE WHEN coalesce(round, 0) = 0 THEN 'round 0'
                    WHEN diagnosis_id IN (SELECT diagnosis_id FROM standout) THEN 'targeted'
                    ELSE 'rest' END AS aim
        FROM task_candidates),
     gated AS (SELECT DISTINCT task_id FROM tasks),
     outcome AS (
        SELECT task_id, count(*) AS k, sum(CASE WHEN success THEN 1 ELSE 0 END) AS wins
        FROM trajectories WHERE NOT coalesce(env_failure, false) AND success IS NOT NULL GROUP BY task_id)
SELECT c.round, c.aim, count(*) AS made, count(g.task_id) AS gated, count(o.k) AS rolled_out,
       round(sum(o.wins) / nullif(sum(o.k), 0), 3) AS success_rate,
       round(avg(CASE WHEN o.k IS NULL THEN NULL WHEN o.wins > 0 AND o.wins < o.k THEN 1.0 ELSE 0.0 END), 3)
           AS mixed_share
FROM cand c LEFT JOIN gated g USING (task_id) LEFT JOIN outcome o USING (task_id)
GROUP BY c.round, c.aim ORDER BY c.round, c.aim
"""

NEEDED = ("task_candidates", "tasks", "trajectories", "diagnoses")


def round_summary(lake, run_id: str | None = None) -> list[tuple]:
    """Rows (round, aim, made, gated, rolled_out, success_rate, mixed_share) of one run (or
    every run); [] when the lake has no diagnoses (no loop ran)."""
    # heavy: duckdb, numpy, imported when this runs
    from guiforge.catalog import connect, table_source

    sources = {t: table_source(lake, t) for t in NEEDED}
    if not all(sources.values()):
        return []
    con = connect(lake)
    try:
        for table, source in sources.items():
            where = " WHERE run_id = $run" if run_id else ""
            con.execute(f"CREATE TEMP VIEW {table} AS SELECT * FROM {source}{where}".replace(
                "$run", "'" + (run_id or "").replace("'", "''") + "'"))
        return con.execute(ROUNDS_SQL).fetchall()
    finally:
        con.close()
