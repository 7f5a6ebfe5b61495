"""What the report points out: figures weaker than the thresholds in
``data/report_thresholds.yaml`` (judge agreement, skills too hard or too easy, faults,
gate losses), and "what to fix next": the diagnoses grouped by level, failure mode and
skill, biggest first, each with a link to its rows in the viewer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from guiforge.errors import ConfigError
from guiforge.paths import DATA_DIR
from guiforge.report.links import Links
from guiforge.report.queries import agreement_figures
from guiforge.report.views import rows
from guiforge.yamlfile import load_yaml

THRESHOLDS_FILE = DATA_DIR / "report_thresholds.yaml"
DEFAULTS = {"min_n": 5, "judge_kappa_min": 0.4, "judge_precision_min": 0.8, "judge_recall_min": 0.6,
            "skill_success_min": 0.2, "skill_success_max": 0.98, "no_outcome_share_max": 0.05,
            "exclusion_share_max": 0.5}


def load_thresholds(path: str | Path | None = None) -> dict[str, float]:
    path = Path(path or os.environ.get("GUIFORGE_REPORT_THRESHOLDS") or THRESHOLDS_FILE)
    if not path.exists():
        return dict(DEFAULTS)
    data, lines = load_yaml(path)
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", "expected a mapping of threshold name -> number")
    for key, value in data.items():
        if key not in DEFAULTS:
            raise ConfigError(str(path), key, f"unknown threshold; known: {', '.join(DEFAULTS)}", lines.get((key,)))
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(str(path), key, "must be a number", lines.get((key,)))
    return {**DEFAULTS, **data}


def _flag(what: str, value: float, limit: float, op: str, url: str) -> dict:
    return {"what": what, "value": round(value, 3), "threshold": f"{op} {limit}", "url": url}


def weak_figures(con: duckdb.DuckDBPyConnection, filled: set[str], links: Links, t: dict) -> list[dict]:
    """Every figure that misses its threshold, with the rows behind it."""
    out = []
    if "judgments" in filled:
        for r in rows(con, """
                SELECT judge, coalesce(domain, '?') AS domain, count(*) AS n,
                       count(*) FILTER (WHERE success AND verifier_success) AS tp,
                       count(*) FILTER (WHERE success AND NOT verifier_success) AS fp,
                       count(*) FILTER (WHERE NOT success AND verifier_success) AS fn,
                       count(*) FILTER (WHERE NOT success AND NOT verifier_success) AS tn
                FROM judgments WHERE success IS NOT NULL AND verifier_success IS NOT NULL GROUP BY 1, 2"""):
            if r["n"] < t["min_n"]:
                continue
            f = agreement_figures(r["tp"], r["fp"], r["fn"], r["tn"])
            url = links.rows("judgments", judge=r["judge"], domain=r["domain"], agreement="no")
            for key, name in (("kappa", "kappa"), ("precision", "precision"), ("recall", "recall")):
                limit = t[f"judge_{key}_min"]
                if f[key] is not None and f[key] < limit:
                    out.append(_flag(f"judge {r['judge']} {name} on {r['domain']} ({r['n']} judged)", f[key], limit,
                                     "≥", url))
    if "trajectories" in filled:
        for r in rows(con, """
                SELECT t.skill_id, count(*) AS n, avg(r.success::INT) FILTER (WHERE r.success IS NOT NULL) AS rate,
                       count(*) FILTER (WHERE r.success IS NULL) AS no_outcome
                FROM trajectories r JOIN tasks t USING (run_id, task_id) GROUP BY 1 ORDER BY rate"""):
            if r["n"] < t["min_n"] or r["rate"] is None:
                continue
            if r["rate"] < t["skill_success_min"]:
                out.append(_flag(f"skill {r['skill_id']} success ({r['n']} samples)", r["rate"],
                                 t["skill_success_min"], "≥", links.rows("trajectories", skill=r["skill_id"],
                                                                         outcome="failure")))
            elif r["rate"] > t["skill_success_max"]:
                out.append(_flag(f"skill {r['skill_id']} success ({r['n']} samples): too easy to teach", r["rate"],
                                 t["skill_success_max"], "≤", links.rows("trajectories", skill=r["skill_id"])))
        n, none = con.execute("SELECT count(*), count(*) FILTER (WHERE success IS NULL) FROM trajectories").fetchall()[0]
        if n >= t["min_n"] and none / n > t["no_outcome_share_max"]:
            out.append(_flag(f"trajectories with no outcome ({none} of {n})", none / n, t["no_outcome_share_max"],
                             "≤", links.rows("trajectories", outcome="none")))
    if "task_candidates" in filled:
        n, dropped = con.execute("""SELECT (SELECT count(*) FROM task_candidates),
            (SELECT count(*) FROM exclusions WHERE subject_table = 'task_candidates')""").fetchall()[0]
        if n >= t["min_n"] and dropped / n > t["exclusion_share_max"]:
            out.append(_flag(f"candidates the gates dropped ({dropped} of {n})", dropped / n, t["exclusion_share_max"],
                             "≤", links.rows("exclusions")))
    return out


def fix_next(con: duckdb.DuckDBPyConnection, filled: set[str], links: Links, limit: int = 10) -> list[dict]:
    """The diagnoses grouped by level, failure mode and skill (or app), most frequent first:
    the example analysis, the proposal, and links to the failing trajectories."""
    if "diagnoses" not in filled:
        return []
    out = []
    for r in rows(con, f"""
            SELECT level, coalesce(failure_mode, '?') AS failure_mode, skill_id, any_value(domain) AS domain,
                   any_value(app) AS app, count(*) AS n, any_value(analysis) AS analysis,
                   any_value(proposal_json) AS proposal_json, list(evidence_json) AS evidence
            FROM diagnoses GROUP BY 1, 2, 3 ORDER BY n DESC, level, failure_mode LIMIT {int(limit)}"""):
        example = next((e for e in (_trajectories(x) for x in r["evidence"]) if e), [])
        proposal = _json(r["proposal_json"])
        aim = proposal.get("aim") or proposal.get("summary") if isinstance(proposal, dict) else None
        out.append({"level": r["level"], "failure_mode": r["failure_mode"], "skill_id": r["skill_id"] or
                    (f"app {r['app']}" if r["app"] else "–"), "n": r["n"], "analysis": (r["analysis"] or "")[:240],
                    "proposal": str(aim or "")[:160],
                    "url": links.rows("trajectories", skill=r["skill_id"], outcome="failure") if r["skill_id"]
                    else links.rows("trajectories", app=r["app"], outcome="failure") if r["app"]
                    else links.rows("trajectories", outcome="failure"),
                    "example_url": links.trajectory(example[0]) if example else None})
    return out


def _json(text):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _trajectories(evidence_json: str | None) -> list[str]:
    """Trajectory ids an evidence record names (whatever its shape)."""
    found: list[str] = []

    def walk(v) -> None:
        if isinstance(v, str) and v.startswith("trj_"):
            found.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(_json(evidence_json))
    return found
