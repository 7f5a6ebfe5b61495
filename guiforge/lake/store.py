"""The lake: a root URI (local path or any fsspec URI) holding one directory per table.

Layout::

    <lake>/<table>/run=<run_id>/part-<fingerprint>.parquet     committed shards
    <lake>/<table>/run=<run_id>/part-<fp>.parquet.tmp-<uuid>   being written (invisible to globs)
    <lake>/_manifest/run=<run_id>/<stage>/<fingerprint>.json    one entry per committed shard

A shard is committed by the protocol in commit.py: its tables staged under temporary
names, its manifest entry created (never replaced) to mark the whole stage shard done, then
each staged file moved to its final name.

Every path a lake records (manifest entries, shard plans) is relative to its root, so a lake
can be moved or copied and read where it lies. Lakes of schema version 1 recorded absolute
paths: :meth:`Lake.resolve` maps those by their part below the lake root.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import re
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from guiforge.errors import GuiforgeError
from guiforge.lake.tables import table_spec

MANIFEST_DIR = "_manifest"
MERGED_READS_KEPT = 4  # merged files kept read per Lake (a reader alternates between a few tables)
TMP_MARK = ".tmp-"
COMPACT_STAGE = "_compact"  # entries of merged files (guiforge.lake.compact)


def _below_root(path: str) -> str:
    """The part of an old absolute shard or manifest path below its lake root: the table
    directory before the last ``run=`` component, and everything after it."""
    parts = path.strip("/").split("/")
    for i in range(len(parts) - 1, 0, -1):  # the last run= component: the root may hold one too
        if parts[i].startswith("run="):
            return "/".join(parts[i - 1:])
    return path.strip("/")


RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.=-]{0,120}")


def checked_run_id(run_id: str) -> str:
    """``run_id`` if it is one folder name (never ``..`` or a path): what a lake writes stays in it."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise GuiforgeError(f"run id {run_id!r} is not valid: letters, digits, _ . - (one folder name)")
    return run_id


class DamagedManifest(GuiforgeError):
    """A manifest entry that does not parse or lacks its fields."""

    def __init__(self, lake: Lake, path: str, why: str):
        self.path, self.why = path, why
        super().__init__(f"lake {lake.uri}: manifest {lake.relative(path)} is unreadable ({why}); "
                         f"`guiforge lake check --lake {lake.uri}` lists the damage and how to repair it")


# What a read-only command read, while it holds a snapshot (manifests.entries_snapshot):
# manifest entries by path, and the entry lists built from them.
READ_ONCE: ContextVar[dict[Any, Any] | None] = ContextVar("lake_read_once", default=None)


def read_manifest(lake: Lake, path: str) -> dict[str, Any]:
    """One manifest entry, checked for the fields readers rely on (read once per snapshot)."""
    cache = READ_ONCE.get()
    if cache is None:
        return _read_manifest(lake, path)
    key = ("manifest", lake.uri, path)
    if key not in cache:
        cache[key] = _read_manifest(lake, path)
    return cache[key]


def _read_manifest(lake: Lake, path: str) -> dict[str, Any]:
    try:
        with lake.fs.open(path, "rb") as fh:
            body = json.loads(fh.read())
    except UnicodeDecodeError:
        raise DamagedManifest(lake, path, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DamagedManifest(lake, path, f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(body, dict) or not isinstance(body.get("outputs"), dict) \
            or not isinstance(body.get("fingerprint"), str):
        raise DamagedManifest(lake, path, "not a manifest entry: it needs 'fingerprint' and 'outputs'")
    for table, written in body["outputs"].items():
        if not isinstance(written, dict) or not isinstance(written.get("rows") or 0, int) \
                or not isinstance(written.get("path") or "", str):
            raise DamagedManifest(lake, path, f"outputs.{table} is not {{rows, path, bytes, sha256}}")
        try:
            if written.get("path"):
                lake.resolve(written["path"])
        except GuiforgeError:
            raise DamagedManifest(lake, path, f"outputs.{table}.path {written['path']!r} lies outside the lake") from None
    return body


@dataclass(frozen=True)
class ShardFile:
    table: str
    run_id: str
    fingerprint: str
    path: str


class Lake:
    def __init__(self, uri: str | os.PathLike[str], storage_options: dict[str, Any] | None = None):
        self.uri = str(uri)
        try:
            self.fs, root = fsspec.core.url_to_fs(self.uri, **(storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise GuiforgeError(f"lake {self.uri!r}: cannot open this filesystem ({exc})") from None
        self.root = root.rstrip("/") or "/"
        self.protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        self.is_local = self.protocol in ("file", "local")
        if self.is_local:
            self.root = os.path.abspath(self.root)
        self._merges: dict[str, dict[str, tuple[str, int, int]]] = {}  # run -> small path -> where merged
        # (merged file, columns) -> its rows: a reader of many merged shards reads the file once
        self._merged_reads: dict[tuple[str, tuple[str, ...] | None], pa.Table] = {}

    def __repr__(self) -> str:
        return f"Lake({self.uri!r})"

    # -- paths -------------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def relative(self, path: str) -> str:
        """``path`` (absolute in this lake, or already relative) relative to the lake root."""
        path = self.resolve(path)
        prefix = self.root.rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else path.lstrip("/")

    def resolve(self, path: str) -> str:
        """The filesystem path of a recorded ``path``: relative paths are taken from the lake
        root; an absolute path under the root is kept; any other absolute path (an old lake,
        moved or copied) is mapped by its part below the lake root (``<table>/run=...`` or
        ``_manifest/run=...``), never read where it points. A path that leads out of the lake
        (``..``) is refused: nothing a manifest says is read or deleted outside the lake."""
        if "://" in path:
            path = path.split("://", 1)[1]
        root = self.root.rstrip("/")
        out = path if path.startswith(root + "/") else self.path(_below_root(path))
        if "/.." in out or out.startswith(".."):
            out = posixpath.normpath(out)
            if not out.startswith(root + "/"):
                raise GuiforgeError(f"lake {self.uri}: {path!r} lies outside the lake")
        return out

    def url(self, path: str) -> str:
        """A URL for ``path`` that DuckDB or another reader can open."""
        return path if self.is_local else f"{self.protocol}://{path.lstrip('/')}"

    def run_dir(self, table: str, run_id: str) -> str:
        return self.path(table, f"run={checked_run_id(run_id)}")

    def shard_path(self, table: str, run_id: str, fingerprint: str) -> str:
        return posixpath.join(self.run_dir(table, run_id), f"part-{fingerprint}.parquet")

    def manifest_dir(self, run_id: str, stage: str) -> str:
        return self.path(MANIFEST_DIR, f"run={checked_run_id(run_id)}", stage)

    def manifest_path(self, run_id: str, stage: str, fingerprint: str) -> str:
        return posixpath.join(self.manifest_dir(run_id, stage), f"{fingerprint}.json")

    def table_glob(self, table: str, run_id: str | None = None) -> str:
        run = f"run={run_id}" if run_id else "*"
        return self.url(self.path(table, run, "*.parquet"))

    # -- low-level atomic writes -------------------------------------------------------
    def _tmp_name(self, final: str) -> str:
        return f"{final}{TMP_MARK}{uuid.uuid4().hex[:12]}"

    def write_file(self, table: pa.Table, path: str) -> tuple[int, str]:
        """Write ``table`` as one Parquet file at ``path`` (a staged name: commit.py publishes
        it). Returns the file's size and sha256, which its manifest entry records."""
        buffer = io.BytesIO()
        pq.write_table(table, buffer, compression="zstd")
        data = buffer.getvalue()
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        self.fs.pipe_file(path, data)  # one PUT on an object store: whole or absent
        return len(data), hashlib.sha256(data).hexdigest()

    def write_json(self, value: Any, final: str) -> None:
        self.fs.makedirs(posixpath.dirname(final), exist_ok=True)
        tmp = self._tmp_name(final)
        with self.fs.open(tmp, "w") as fh:
            json.dump(value, fh, sort_keys=True, indent=1, default=str)
        self.fs.mv(tmp, final)

    def read_json(self, path: str) -> Any:
        with self.fs.open(path, "r") as fh:
            return json.load(fh)

    def exists(self, path: str) -> bool:
        return self.fs.exists(path)

    def _ls(self, path: str) -> list[str]:
        try:
            return [p if isinstance(p, str) else p["name"] for p in self.fs.ls(path, detail=False)]
        except FileNotFoundError:
            return []

    # -- listing -----------------------------------------------------------------------
    def tables(self) -> list[str]:
        return sorted(
            posixpath.basename(p.rstrip("/"))
            for p in self._ls(self.root)
            if not posixpath.basename(p.rstrip("/")).startswith(("_", "."))
            and self.fs.isdir(p)
        )

    def runs(self, table: str) -> list[str]:
        out = []
        for p in self._ls(self.path(table)):
            name = posixpath.basename(p.rstrip("/"))
            if name.startswith("run="):
                out.append(name[4:])
        return sorted(out)

    def shard_files(self, table: str, run_id: str | None = None) -> list[ShardFile]:
        """Committed shard files only: temporary names never end in ``.parquet``."""
        runs = [run_id] if run_id else self.runs(table)
        files = []
        for run in runs:
            for p in self._ls(self.run_dir(table, run)):
                name = posixpath.basename(p)
                if name.startswith("part-") and name.endswith(".parquet"):
                    files.append(ShardFile(table, run, name[5:-8], p))
        return sorted(files, key=lambda f: (f.run_id, f.path))

    def manifest_entries(self, run_id: str, stage: str) -> Iterator[dict[str, Any]]:
        """The committed entries of one stage of one run; an unreadable one raises
        :class:`DamagedManifest` naming its file."""
        for p in sorted(self._ls(self.manifest_dir(run_id, stage))):
            if p.endswith(".json") and TMP_MARK not in posixpath.basename(p):
                yield read_manifest(self, p)

    def remove_stale_temporaries(self, directory: str) -> int:
        """Delete half-written files a killed writer left in ``directory``; returns how many."""
        stale = [p for p in self._ls(directory) if TMP_MARK in posixpath.basename(p)]
        for p in stale:
            self.fs.rm(p)
        return len(stale)

    def remove_run(self, run_id: str) -> None:
        """Delete one run (``--fresh``), keeping content other runs' rows refer to (gc.py)."""
        from guiforge.lake.gc import remove_run

        remove_run(self, run_id)

    # -- reading -----------------------------------------------------------------------
    def read_table(
        self, table: str, run_id: str | None = None, columns: list[str] | None = None
    ) -> pa.Table:
        schema = table_spec(table).schema
        files = self.shard_files(table, run_id)
        if not files:
            return schema.empty_table() if columns is None else schema.empty_table().select(columns)
        parts = [self.read_shard(f.path, columns) for f in files]
        return pa.concat_tables(parts, promote_options="default")

    def footer_rows(self, path: str) -> int:
        """The row count a shard's Parquet footer records (reads the footer only)."""
        try:
            with self.fs.open(self.resolve(path), "rb") as fh:
                return pq.ParquetFile(fh).metadata.num_rows
        except FileNotFoundError:
            merged = self.merged_into(path)
            if merged is None:
                raise
            return merged[2]

    def read_shard(self, path: str, columns: list[str] | None = None) -> pa.Table:
        """One shard file; ``path`` as recorded (relative to the root, or an old absolute one).
        A shard merged by ``guiforge lake compact`` is read from its rows in the merged file."""
        known = self._known_merge(path)
        if known is not None:  # straight to the merged rows: no failed open per merged shard
            try:
                return self._read_merged(known[0], columns).slice(known[1], known[2])
            except FileNotFoundError:
                self._merges.clear()  # merged again or pruned since the map was read
        try:
            with self.fs.open(self.resolve(path), "rb") as fh:
                return pq.read_table(fh, columns=columns)
        except FileNotFoundError:
            merged = self.merged_into(path)
            if merged is None:
                raise
        return self._read_merged(merged[0], columns).slice(merged[1], merged[2])

    def _read_merged(self, path: str, columns: list[str] | None) -> pa.Table:
        """A merged file's rows, kept for the next shard read from it (merged files are
        named by their content and never rewritten); the few most recent only."""
        key = (path, None if columns is None else tuple(columns))
        table = self._merged_reads.pop(key, None)
        if table is None:
            with self.fs.open(self.resolve(path), "rb") as fh:
                table = pq.read_table(fh, columns=columns)
        self._merged_reads[key] = table  # most recent last
        while len(self._merged_reads) > MERGED_READS_KEPT:
            del self._merged_reads[next(iter(self._merged_reads))]
        return table

    def _known_merge(self, path: str) -> tuple[str, int, int] | None:
        """Where a shard was merged, if this Lake has read its run's merge map already."""
        if not self._merges:
            return None
        rel = self.relative(path)
        run = next((part[4:] for part in rel.split("/") if part.startswith("run=")), None)
        return self._merges.get(run, {}).get(rel) if run is not None else None

    def merged_into(self, path: str) -> tuple[str, int, int] | None:
        """(merged file, offset, rows) of a shard file compaction merged; None if it was not."""
        rel = self.relative(path)
        run = next((part[4:] for part in rel.split("/") if part.startswith("run=")), None)
        if run is None:
            return None
        if rel not in self._merges.get(run, {}):
            self.forget_merges(run)  # merged since it was read
            index: dict[str, tuple[str, int, int]] = {}
            for entry in self.manifest_entries(run, COMPACT_STAGE):
                table = entry.get("compacted_table")
                target = (entry["outputs"].get(table) or {}).get("path")
                for small, (offset, rows) in (entry.get("compacted") or {}).items() if target else ():
                    index[small] = (target, int(offset), int(rows))
            self._merges[run] = index
        return self._merges[run].get(rel)

    def forget_merges(self, run_id: str) -> None:
        self._merges.pop(run_id, None)
