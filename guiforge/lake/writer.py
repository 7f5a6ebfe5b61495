"""Commit one stage shard: validate rows against the table schemas, stage each output
table, claim the manifest entry that marks the shard done, publish (commit.py)."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from guiforge import __version__
from guiforge.errors import GuiforgeError
from guiforge.lake.commit import check_published, claim, finish_commit
from guiforge.lake.store import TMP_MARK, Lake, read_manifest
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


def commit_shard(lake: Lake, commit: ShardCommit, outputs: Mapping[str, Rows], replace: bool = False) -> dict[str, Any]:
    """Commit one stage shard (commit.py: stage every table, claim the manifest entry, publish).
    The same fingerprint always names the same files, so a rerun never duplicates a row; of
    two writers of one shard, one commits and the other gets the committed entry with
    ``lost: True``. ``replace`` swaps an existing entry for this one (a repeated export)."""
    tables = {name: to_arrow(name, rows, commit.run_id) for name, rows in outputs.items()}
    attempt = uuid.uuid4().hex[:12]
    written: dict[str, dict[str, Any]] = {}
    staged: dict[str, str] = {}
    claimed = lost = False
    try:
        for name, table in tables.items():
            final = lake.shard_path(name, commit.run_id, commit.fingerprint)
            if not table.num_rows:
                written[name] = {"rows": 0, "path": None}
                continue
            tmp = f"{final}{TMP_MARK}{attempt}"
            size, sha256 = lake.write_file(table, tmp)
            staged[name] = lake.relative(tmp)
            # Relative to the lake root, so a moved or copied lake reads its own files.
            written[name] = {"rows": table.num_rows, "path": lake.relative(final), "bytes": size, "sha256": sha256}
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
            "attempt": attempt,
            "staged": staged,
            **commit.meta,
        }
        claimed = claim(lake, entry, replace) is not None
        if not claimed:  # another writer committed this shard: theirs stands, whole
            lost = True
            path = lake.manifest_path(commit.run_id, commit.stage, commit.fingerprint)
            theirs = read_manifest(lake, path)
            finish_commit(lake, theirs)  # in case they were killed before publishing
            return {**theirs, "lost": True}
        finish_commit(lake, entry)
        check_published(lake, entry)
        return entry
    finally:
        if not claimed and (lost or not _claimed_by(lake, commit, attempt)):  # staged, never to be published
            for tmp in staged.values():
                with contextlib.suppress(FileNotFoundError):
                    lake.fs.rm(lake.resolve(tmp))


def _claimed_by(lake: Lake, commit: ShardCommit, attempt: str) -> bool:
    """After an error: whether the shard's entry is this attempt's all the same (the claim
    went through before the error), or cannot be told: then its staged files are kept."""
    try:
        body = read_manifest(lake, lake.manifest_path(commit.run_id, commit.stage, commit.fingerprint))
    except FileNotFoundError:
        return False
    except Exception:  # noqa: BLE001 - unknown: keep the files (a later sweep removes unclaimed ones)
        return True
    return body.get("attempt") == attempt
