"""Commit one stage shard: validate rows against the table schemas, write each output
table atomically, then write the manifest entry that marks the shard done."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from guiforge import __version__
from guiforge.errors import GuiforgeError
from guiforge.lake.store import Lake
from guiforge.lake.tables import table_spec
from guiforge.schemas import SCHEMA_VERSION

Rows = Sequence[Mapping[str, Any]] | pa.Table


class SchemaViolation(GuiforgeError):
    pass


def to_arrow(table: str, rows: Rows, run_id: str) -> pa.Table:
    """Rows (dicts or an Arrow table) as an Arrow table of exactly the table's schema."""
    spec = table_spec(table)
    schema = spec.with_metadata()
    names = set(schema.names)
    if isinstance(rows, pa.Table):
        extra = set(rows.column_names) - names
        if extra:
            raise SchemaViolation(f"table {table}: unknown column(s) {sorted(extra)}; add them to schemas/")
        if "run_id" not in rows.column_names:
            rows = rows.append_column("run_id", pa.array([run_id] * rows.num_rows, pa.string()))
        data = {n: rows.column(n) if n in rows.column_names else pa.nulls(rows.num_rows, schema.field(n).type) for n in schema.names}
        try:
            out = pa.table(data).cast(schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise SchemaViolation(f"table {table}: {exc}") from None
    else:
        prepared = []
        for i, row in enumerate(rows):
            extra = set(row) - names
            if extra:
                raise SchemaViolation(
                    f"table {table}: row {i} has unknown column(s) {sorted(extra)}; add them to schemas/"
                )
            prepared.append({"run_id": run_id, **row})
        try:
            out = pa.Table.from_pylist(prepared, schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise SchemaViolation(f"table {table}: {_culprit(prepared, schema)}{exc}") from None
    for f in schema:
        if not f.nullable and out.column(f.name).null_count:
            raise SchemaViolation(f"table {table}: column {f.name} is required but has nulls")
    return out


def _culprit(rows: list[dict[str, Any]], schema: pa.Schema) -> str:
    """Which row and column a failed conversion came from (``row 3: column apps: ``)."""
    for f in schema:
        for i, row in enumerate(rows):
            try:
                pa.array([row.get(f.name)], type=f.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                return f"row {i}: column {f.name}: "
    return ""


@dataclass
class ShardCommit:
    stage: str
    run_id: str
    fingerprint: str
    key: str
    inputs: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def commit_shard(lake: Lake, commit: ShardCommit, outputs: Mapping[str, Rows]) -> dict[str, Any]:
    """Write every output table of one shard, then its manifest entry (the commit point
    for the stage shard). Rewriting a shard with the same fingerprint overwrites the same
    file names, so a rerun after a crash never duplicates a row."""
    tables = {name: to_arrow(name, rows, commit.run_id) for name, rows in outputs.items()}
    written = {}
    for name, table in tables.items():
        path = lake.shard_path(name, commit.run_id, commit.fingerprint)
        if table.num_rows:
            size, sha256 = lake.write_parquet(table, path)
            # Relative to the lake root, so a moved or copied lake reads its own files.
            written[name] = {"rows": table.num_rows, "path": lake.relative(path), "bytes": size, "sha256": sha256}
        else:
            if lake.exists(path):  # an earlier attempt wrote rows this one does not have
                lake.fs.rm(path)
            written[name] = {"rows": 0, "path": None}
    entry = {
        "stage": commit.stage,
        "run_id": commit.run_id,
        "fingerprint": commit.fingerprint,
        "key": commit.key,
        "inputs": commit.inputs,
        "outputs": written,
        "code_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "committed_at": time.time(),
        **commit.meta,
    }
    lake.write_json(entry, lake.manifest_path(commit.run_id, commit.stage, commit.fingerprint))
    return entry
