"""Reading what the curation stages need from their input shards: rows of some ids only,
a task index, screenshots by hash."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from guiforge.failures import valid_sample
from guiforge.lake.images import ImageReader


def read_rows(ctx, table: str, columns: list[str] | None = None, where: tuple[str, set] | None = None) -> list[dict]:
    """Rows of ``table`` from the shards this stage sees; ``where=(column, values)`` keeps
    only the rows whose column is among the values."""
    out: list[dict] = []
    for shard in ctx.input_shards(table):
        t = ctx.lake.read_shard(shard.path, columns=columns)
        if where is not None:
            column, values = where
            t = t.filter(pc.is_in(t.column(column), value_set=pa.array(sorted(values), type=t.schema.field(column).type)))
        out.extend(t.to_pylist())
    for row in out:
        row.pop("run_id", None)
    return out


def fingerprints(ctx, *tables: str) -> list[str]:
    return [s.fingerprint for t in tables for s in ctx.input_shards(t)]


def task_index(ctx) -> dict[str, dict]:
    return {r["task_id"]: r for r in read_rows(ctx, "tasks")}


def images_by_sha(ctx, shas: set[str]) -> dict[str, tuple[bytes, str]]:
    """sha256 -> (bytes, media type) for the screenshots asked for."""
    if not shas:
        return {}

    # through the lake's one image API: it also finds frames kept when their shard was pruned
    reader = ctx.resource("image-reader", lambda: ImageReader(ctx.lake))
    found = reader.get_many(shas, missing_ok=True)
    return {sha: (data, "image/jpeg" if data[:2] == b"\xff\xd8" else "image/png") for sha, data in found.items()}


def accepted_trajectories(ctx, source: str) -> set[str]:
    """Trajectory ids SFT may learn from: the judge's acceptance, or the verifier's success."""
    if source == "judgments":
        return {r["trajectory_id"] for r in read_rows(ctx, "judgments", ["trajectory_id", "accepted"])
                if r["accepted"]}
    return {r["trajectory_id"] for r in read_rows(ctx, "trajectories", ["trajectory_id", "success", "env_failure",
                                                                         "failure_kind"])
            if valid_sample(r) and r["success"]}
