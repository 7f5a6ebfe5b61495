"""A run's provenance as every view shows it: the record ``guiforge run`` wrote
(lake/runlog.py: pipeline file hash, config, seed, models per role, code version and
fingerprint, git commit, plugins, libraries) plus what the rows themselves say (the
prompt hashes each role's model sent). A run without a record (an older lake, a
deployment that wrote none) still gets the rows' part and the code versions its manifest
entries name; ``recorded`` says which.
"""

from __future__ import annotations

import duckdb

from guiforge.lake.gc import all_entries
from guiforge.lake.runlog import provenance_records, recorded_runs
from guiforge.lake.store import Lake
from guiforge.report.views import rows

# (role, table, model column): the rows that record which model and prompt made them.
PROMPT_SOURCES = (
    ("world_builder", "worlds", "model"), ("skill_author", "skills", "author_model"),
    ("task_author", "tasks", "author_model"), ("teacher", "trajectories", "teacher_model"),
    ("judge", "judgments", "judge_model"), ("relabeler", "relabels", "relabeler_model"),
    ("diagnoser", "diagnoses", "diagnoser_model"),
)


def lake_runs(lake: Lake) -> list[str]:
    """Every run the lake has rows or records of."""
    return sorted({r for t in lake.tables() for r in lake.runs(t)} | set(recorded_runs(lake)))


def prompt_hashes(con: duckdb.DuckDBPyConnection, filled: set[str], run_id: str) -> list[dict]:
    parts = [f"SELECT '{role}' AS role, {col} AS model, prompt_hash, count(*) AS n_rows FROM {table} "
             f"WHERE run_id = $run AND prompt_hash IS NOT NULL GROUP BY ALL"
             for role, table, col in PROMPT_SOURCES if table in filled]
    if not parts:
        return []
    return rows(con, " UNION ALL ".join(parts) + " ORDER BY role, n_rows DESC", {"run": run_id})


def run_provenance(lake: Lake, run_id: str, con: duckdb.DuckDBPyConnection | None = None,
                   filled: set[str] | None = None) -> dict:
    records = provenance_records(lake, run_id)
    out = dict(records[-1]) if records else {"run_id": run_id}
    out["recorded"] = bool(records)
    out["sessions"] = len(records)
    if records and len({r.get("code", {}).get("fingerprint") for r in records}) > 1:
        out["code_changed_between_sessions"] = True
    if not records:  # what the manifests say: the code version each shard was written with
        versions = sorted({str(e.body.get("code_version")) for e in all_entries(lake, run_id)})
        out["code"] = {"version": ", ".join(versions) or None}
    if con is not None:
        out["prompts"] = prompt_hashes(con, filled or set(), run_id)
    return out


def header_items(p: dict) -> list[tuple[str, str]]:
    """(label, value) pairs for a view's header; values short enough for one line each."""
    pipe, code = p.get("pipeline") or {}, p.get("code") or {}
    items = [("run", p.get("run_id") or "?")]
    if not p.get("recorded"):
        items.append(("provenance", "not recorded for this run (rows and manifests only)"))
    if pipe:
        items.append(("pipeline", f"{pipe.get('source')} sha256 {(pipe.get('file_sha256') or 'n/a')[:12]} "
                                  f"config {pipe.get('fingerprint')}"))
    if "seed" in p:
        items.append(("seed", str(p["seed"])))
    git = code.get("commit")
    items.append(("code", f"guiforge {code.get('version')}" + (f" fingerprint {code['fingerprint']}"
                                                                 if code.get("fingerprint") else "")
                  + (f" git {git[:10]}{' (dirty)' if code.get('dirty') else ''}" if git else "")))
    for role, m in sorted((p.get("models") or {}).items()):
        prompts = sorted({r["prompt_hash"][:10] for r in p.get("prompts", []) if r["role"] == role})
        templates = m.get("prompt_templates_sha")
        items.append((f"model {role}", f"{m.get('provider')}:{m.get('model')}"
                      + (f" templates {templates}" if templates else "")
                      + (f" prompts {', '.join(prompts[:4])}{' …' if len(prompts) > 4 else ''}" if prompts else "")))
    if not p.get("models"):
        for r in p.get("prompts", [])[:8]:
            items.append((f"model {r['role']}", f"{r['model']} prompt {r['prompt_hash'][:10]} ({r['n_rows']} rows)"))
    plugins = [f"{x['name']} ({x.get('distribution')} {x.get('version')})" for x in p.get("plugins") or []
               if x.get("distribution") != "guiforge"]
    items.append(("plugins", ", ".join(plugins) if plugins else "built-ins only"))
    return items


def _flatten(value, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out |= _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        return _flatten({v["name"]: {k: x for k, x in v.items() if k != "name"} for v in value}, prefix)
    return {prefix: value}


# Keys that differ between any two runs and say nothing about what they computed.
_NOISE = ("recorded_at", "run_id", "sessions", "prompts", "pipeline.config.lake", "pipeline.config.run_id")


def differences(a: dict, b: dict) -> list[tuple[str, object, object]]:
    """(key, value in a, value in b) for every config, model, code and plugin setting that
    differs between two provenance dicts."""
    fa, fb = _flatten(a), _flatten(b)
    out = []
    for key in sorted(set(fa) | set(fb)):
        if any(key == n or key.startswith(n + ".") for n in _NOISE):
            continue
        if fa.get(key) != fb.get(key):
            out.append((key, fa.get(key), fb.get(key)))
    return out
