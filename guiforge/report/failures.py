"""Failures by kind, stage and domain (guiforge.failures), for ``guiforge stats`` and the
report: trajectories and judgments carry a ``failure_kind``; a gate or a curation stage
records its faults as exclusions whose gate is the kind. Each row is counted under the stage
whose shard wrote it (the manifests say which), so resynthesis rounds count apart. Where the
run declared ``faults:``, what was injected is counted beside it."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.compute as pc

from guiforge.failures import FAILURE_KINDS, failure_kind
from guiforge.faults.log import read_log
from guiforge.lake.manifests import all_entries
from guiforge.lake.store import Lake

_COLUMNS = {"trajectories": ("task_id", "failure_kind", "env_failure"),
            "judgments": ("domain", "failure_kind"),
            "exclusions": ("stage", "gate", "details_json")}


def _read(lake: Lake, path: str, wanted: tuple[str, ...]) -> list[dict]:
    """The wanted columns a shard has (shards of schema 2 have no failure_kind), of the rows
    that may have failed: the others never reach Python (a million-step run has few)."""
    table = lake.read_shard(path)  # through the merge map once compaction merged the file
    table = table.select([c for c in wanted if c in table.column_names])
    marks = [pc.is_valid(table["failure_kind"])] if "failure_kind" in table.column_names else []
    if "env_failure" in table.column_names:
        marks.append(pc.fill_null(table["env_failure"], False))
    if marks and "gate" not in table.column_names:  # every exclusion counts under its gate
        table = table.filter(marks[0] if len(marks) == 1 else pc.or_(*marks))
    return table.to_pylist()


def failure_counts(lake: Lake, run_id: str | None = None) -> list[dict]:
    """Rows {run_id, stage, domain, failure kinds..., total}, one per stage and domain that met
    any failure, in run order."""
    entries = [e for e in all_entries(lake, run_id) if not e.stage.startswith("_")]  # _compact holds merged copies
    domains: dict[tuple[str, str], str] = {}
    for e in entries:
        path = e.files().get("tasks")
        if path:
            for r in _read(lake, path, ("task_id", "domain")):
                domains[(e.run_id, r["task_id"])] = r["domain"]
    counts: dict[tuple[str, str, str], Counter] = {}
    for e in entries:
        for table, path in e.files().items():
            if table not in _COLUMNS:
                continue
            for row in _read(lake, path, _COLUMNS[table]):
                kind, domain = _kind_and_domain(table, row, e, domains)
                if kind in FAILURE_KINDS:
                    counts.setdefault((e.run_id, e.stage, domain or "?"), Counter())[kind] += 1
    return [{"run_id": run, "stage": stage, "domain": domain, **{k: c.get(k, 0) for k in FAILURE_KINDS},
             "total": sum(c.values())} for (run, stage, domain), c in sorted(counts.items())]


def _kind_and_domain(table: str, row: dict, entry, domains: dict) -> tuple[str | None, str | None]:
    if table == "trajectories":
        return failure_kind(row), domains.get((entry.run_id, row["task_id"]))
    if table == "judgments":
        return row.get("failure_kind"), row.get("domain")
    details = json.loads(row.get("details_json") or "{}")
    return row["gate"], details.get("domain") if isinstance(details, dict) else None


def injected_counts(lake: Lake, run_id: str) -> list[dict]:
    """What a run's ``faults:`` injected: rows {stage, site, kind, n}."""
    counts = Counter((i.stage, i.site, i.kind) for i in read_log(lake, run_id))
    return [{"stage": s, "site": site, "kind": k, "n": n} for (s, site, k), n in sorted(counts.items())]
