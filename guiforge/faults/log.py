"""What a run's ``faults:`` injected, beside its lake: one file per shard under
``<lake>/_faults/run=<run_id>/<stage>/``, rewritten each time the shard runs (the plan is
seeded, so it says the same). Only committed shards count when it is read back."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from guiforge.faults.plan import Injection
from guiforge.lake.manifests import all_entries


def log_path(lake, run_id: str, stage: str, shard_key: str | None = None) -> str:
    parts = ["_faults", f"run={run_id}", stage]
    if shard_key is not None:
        parts.append(hashlib.sha256(shard_key.encode()).hexdigest()[:16] + ".json")
    return lake.path(*parts)


def write_log(lake, run_id: str, stage: str, shard_key: str, injections: list[Injection]) -> None:
    rows = sorted((asdict(i) for i in injections), key=lambda r: json.dumps(r, sort_keys=True, default=str))
    lake.write_json({"stage": stage, "shard": shard_key, "injections": rows}, log_path(lake, run_id, stage, shard_key))


def read_log(lake, run_id: str) -> list[Injection]:
    """Every injection of a run's committed shards (a shard that was interrupted, stopped by
    the failure share or superseded left no rows, so its injections do not count)."""
    committed = {(e.stage, e.body.get("key")) for e in all_entries(lake, run_id)}
    out = []
    for stage_dir in lake._ls(lake.path("_faults", f"run={run_id}")):
        for path in sorted(lake._ls(stage_dir)):
            if path.endswith(".json"):
                log = lake.read_json(path)
                if (log["stage"], log["shard"]) in committed:
                    out.extend(Injection(**r) for r in log["injections"])
    return out
