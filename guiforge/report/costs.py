"""Tokens and money: what a run's model calls took, priced, and what one trajectory, one
accepted SFT row and one RL task cost. ``guiforge stats``, the report and the viewer all
read these figures from here, so they agree.

Prices are US dollars per million tokens. A role's ``prices:`` in the pipeline file (the
run's provenance records it) wins; else ``data/prices.yaml`` (or ``GUIFORGE_PRICES``), by
the model name the rows record (``openai:gpt-4o-mini``), then by the name alone. A model in
neither is unpriced: its cost is unknown (None), never zero.

Tokens: the teacher's from ``trajectories`` (and ``steps``), the judges' from
``judgments``. Cached tokens are those of replies the call cache replayed (a rerun paid
nothing for them); they are priced like the rest, so a cost is what the data took to make.
(``judgments.cost_usd`` is priced at call time by the role's knob alone, zero when unset:
these figures are priced here instead, the same way for every role.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from guiforge.errors import ConfigError
from guiforge.paths import DATA_DIR
from guiforge.report.views import rows
from guiforge.yamlfile import load_yaml

PRICES_FILE = DATA_DIR / "prices.yaml"


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    source: str  # where it came from: the pipeline's role, or the prices file

    def cost(self, prompt: int, completion: int) -> float:
        return (prompt * self.input_per_mtok + completion * self.output_per_mtok) / 1e6


def prices_path() -> Path:
    return Path(os.environ.get("GUIFORGE_PRICES") or PRICES_FILE)


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """model name -> Price, from the prices file; a bad entry is one line naming it."""
    path = Path(path) if path else prices_path()
    if not path.exists():
        return {}
    data, lines = load_yaml(path)
    models = (data or {}).get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(str(path), "models", "expected a mapping of model name -> "
                          "{input_per_mtok, output_per_mtok}")
    out = {}
    for name, entry in models.items():
        line = lines.get(("models", name))
        if not isinstance(entry, dict) or set(entry) - {"input_per_mtok", "output_per_mtok"}:
            raise ConfigError(str(path), f"models.{name}", "give input_per_mtok and output_per_mtok (dollars per "
                              "million tokens) and nothing else", line)
        try:
            price_in, price_out = (float(entry.get(k, 0)) for k in ("input_per_mtok", "output_per_mtok"))
        except (TypeError, ValueError):
            raise ConfigError(str(path), f"models.{name}", "prices must be numbers", line) from None
        if price_in < 0 or price_out < 0:
            raise ConfigError(str(path), f"models.{name}", "prices cannot be negative", line)
        out[str(name)] = Price(price_in, price_out, path.name)
    return out


def role_prices(provenance: dict | None) -> dict[str, Price]:
    """model name as rows record it -> the price a pipeline role set (only where set)."""
    out = {}
    for role, m in ((provenance or {}).get("models") or {}).items():
        p = m.get("prices") or {}
        if p.get("input_per_mtok") or p.get("output_per_mtok"):
            out[f"{m.get('provider')}:{m.get('model')}"] = Price(p.get("input_per_mtok", 0.0),
                                                                 p.get("output_per_mtok", 0.0), f"pipeline ({role})")
    return out


def price_for(model: str | None, table: dict[str, Price], pipeline: dict[str, Price]) -> Price | None:
    if not model:
        return None
    if model in pipeline:
        return pipeline[model]
    bare = model.split(":", 1)[1] if ":" in model else model
    provider = model.split(":", 1)[0] if ":" in model else ""
    for key in (model, bare, provider if provider == "offline" else None):
        if key and key in table:
            return table[key]
    return None


# Per trajectory: the teacher's tokens (cached ones from its steps' attempts) and each
# judgment's tokens. A step's tokens count as cached in the share of its attempts the call
# cache served.
TOKENS_SQL = """
WITH cached AS (
    SELECT run_id, trajectory_id,
           sum(coalesce(input_tokens, 0) * share) AS cached_in, sum(coalesce(output_tokens, 0) * share) AS cached_out
    FROM (SELECT run_id, trajectory_id, input_tokens, output_tokens,
                 CASE WHEN attempts_json IS NULL OR json_array_length(attempts_json) = 0 THEN 0
                      ELSE len(list_filter(json_extract(attempts_json, '$[*].cached')::BOOLEAN[], lambda c: c))
                           / json_array_length(attempts_json) END AS share
          FROM steps)
    GROUP BY ALL)
SELECT 'teacher' AS role, r.run_id, r.trajectory_id, r.teacher_model AS model,
       coalesce(r.input_tokens, 0) AS prompt_tokens, coalesce(r.output_tokens, 0) AS completion_tokens,
       round(coalesce(c.cached_in, 0) + coalesce(c.cached_out, 0))::BIGINT AS cached_tokens
FROM trajectories r LEFT JOIN cached c USING (run_id, trajectory_id)
UNION ALL
SELECT 'judge:' || judge, run_id, trajectory_id, judge_model, coalesce(input_tokens, 0), coalesce(output_tokens, 0), 0
FROM judgments
"""

ACCEPTED_SQL = {
    # Accepted for SFT as the export decides: the judge stage's verdict, else the verifier's.
    True: "SELECT run_id, trajectory_id FROM judgments GROUP BY ALL HAVING bool_and(accepted)",
    False: "SELECT run_id, trajectory_id FROM trajectories WHERE success",
}


def token_rows(con: duckdb.DuckDBPyConnection, provenance: dict[str, dict], table: dict[str, Price] | None = None,
               ) -> list[dict]:
    """One row per (role, trajectory) with its tokens and cost (None where unpriced)."""
    table = load_prices() if table is None else table
    out = rows(con, TOKENS_SQL)
    pipeline = {run: role_prices(p) for run, p in provenance.items()}
    for r in out:
        price = price_for(r["model"], table, pipeline.get(r["run_id"], {}))
        r["cost_usd"] = price.cost(r["prompt_tokens"], r["completion_tokens"]) if price else None
        r["price_source"] = price.source if price else None
    return out


def _sum(values) -> float | None:
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def cost_summary(con: duckdb.DuckDBPyConnection, filled: set[str], provenance: dict[str, dict],
                 table: dict[str, Price] | None = None) -> dict:
    """Tokens and cost by role and model, the run's total, and the cost per unit: per
    trajectory, per accepted SFT row (a step of an accepted trajectory, less the steps a
    relabel marked inconsistent) and per RL task. A total with an unpriced model's tokens
    in it is None."""
    by_trajectory = token_rows(con, provenance, table)
    roles: dict[tuple[str, str], dict] = {}
    for r in by_trajectory:
        key = (r["role"], r["model"] or "?")
        agg = roles.setdefault(key, {"role": r["role"], "model": r["model"] or "?", "trajectories": 0,
                                     "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0,
                                     "cost_usd": 0.0, "price_source": r["price_source"]})
        agg["trajectories"] += 1
        for k in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            agg[k] += r[k]
        agg["cost_usd"] = None if agg["cost_usd"] is None or r["cost_usd"] is None else agg["cost_usd"] + r["cost_usd"]
    by_role = sorted(roles.values(), key=lambda a: (a["role"], a["model"]))
    total = _sum(a["cost_usd"] for a in by_role if a["prompt_tokens"] + a["completion_tokens"])
    accepted_sql = ACCEPTED_SQL["judgments" in filled]
    units = con.execute(f"""
        WITH accepted AS ({accepted_sql}),
        inconsistent AS (SELECT DISTINCT run_id, trajectory_id, step_index FROM relabels WHERE consistent = false)
        SELECT (SELECT count(*) FROM trajectories),
               (SELECT count(*) FROM accepted),
               (SELECT count(*) FROM steps s JOIN accepted a USING (run_id, trajectory_id)
                ANTI JOIN inconsistent i USING (run_id, trajectory_id, step_index)),
               (SELECT count(*) FROM rl_tasks)""").fetchone()
    n = dict(zip(("trajectories", "accepted_trajectories", "sft_rows", "rl_tasks"), units, strict=True))
    tokens = {k: sum(a[k] for a in by_role) for k in ("prompt_tokens", "completion_tokens", "cached_tokens")}

    def per(unit: str) -> float | None:
        return None if total is None or not n[unit] else total / n[unit]

    return {"by_role": by_role, "tokens": tokens, "total_cost_usd": total, "units": n,
            "accepted_by": "judgments" if "judgments" in filled else "verifier success",
            "per_unit": {"trajectory": per("trajectories"), "accepted_trajectory": per("accepted_trajectories"),
                         "accepted_sft_row": per("sft_rows"), "rl_task": per("rl_tasks")},
            "unpriced": sorted({a["model"] for a in by_role if a["cost_usd"] is None})}


def trajectory_costs(con: duckdb.DuckDBPyConnection, provenance: dict[str, dict],
                     table: dict[str, Price] | None = None) -> dict[tuple[str, str], dict]:
    """(run_id, trajectory_id) -> {prompt_tokens, completion_tokens, cached_tokens, cost_usd}."""
    out: dict[tuple[str, str], dict] = {}
    for r in token_rows(con, provenance, table):
        agg = out.setdefault((r["run_id"], r["trajectory_id"]), {"prompt_tokens": 0, "completion_tokens": 0,
                                                                 "cached_tokens": 0, "cost_usd": 0.0})
        for k in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            agg[k] += r[k]
        agg["cost_usd"] = None if agg["cost_usd"] is None or r["cost_usd"] is None else agg["cost_usd"] + r["cost_usd"]
    return out
