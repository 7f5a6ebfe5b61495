"""Compaction: the small committed shard files of a run's table merged into a few large ones.

A query over the lake pays per file (DuckDB opens every footer): at the pipeline's ~130 steps
per shard, a million steps are ~7,500 files. ``guiforge lake compact`` (and a run that leaves
at least :data:`AUTO_MIN_FILES` small files of a table) merges them.

What stays true:

- The stage entries are not touched. Each keeps its fingerprint (a resumed run skips it) and
  the path it recorded; the merged file's entry (stage ``_compact``, committed through
  :func:`guiforge.lake.writer.commit_shard`) maps each merged path to its rows (offset,
  count) in the merged file, and :meth:`Lake.read_shard` follows that map once the small
  file is gone. Inputs, plans and fingerprints downstream read the same rows as before.
- Order: the merged file and its entry are committed first, then the small files deleted. A
  crash in between leaves both (a later ``compact`` finishes the deletes first); a reader
  never finds rows missing. A glob reader may count the merged rows twice for that moment.
- Nothing another run references is deleted: a file any other run's entry names is left as
  it is, and a run a live process holds (its lock) is skipped; compaction holds the lock.
- Deleting a stage entry whose rows were merged (pruning, ``--fresh``, gc) rewrites the merged
  file without them (:func:`drop_merged`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pyarrow as pa

from guiforge.lake.blobs import CONTENT_TABLES
from guiforge.lake.lock import RunLock, RunLocked, live_runs
from guiforge.lake.manifests import Entry, all_entries, claimed_files
from guiforge.lake.store import COMPACT_STAGE, Lake
from guiforge.lake.writer import SchemaViolation, ShardCommit, commit_shard

MiB = 1 << 20
SMALL_BYTES = 16 * MiB  # a file at least this big is left as it is
TARGET_BYTES = 256 * MiB  # a merged file grows up to about this
TARGET_ROWS = 2_000_000
MIN_FILES = 8  # fewer small files than this in a run's table: nothing to gain
AUTO_MIN_FILES = 64  # a finished run compacts a table that has at least this many small files


@dataclass
class Source:
    """A file to merge: its path (relative) and the paths whose rows it holds (a stage
    shard holds its own; a merged file, all it merged) with their offset and rows in it."""

    path: str
    bytes: int
    rows: int
    holds: dict[str, tuple[int, int]]
    entry: Entry | None = None  # the _compact entry, when the source is itself a merged file


@dataclass
class Compaction:
    merged: list[str] = field(default_factory=list)  # new files (relative)
    removed: list[str] = field(default_factory=list)  # files merged and deleted
    skipped: list[str] = field(default_factory=list)  # runs or tables left alone, with why

    def line(self, dry_run: bool = False) -> str:
        verb = "would merge" if dry_run else "merged"
        return f"lake compact: {verb} {len(self.removed)} file(s) into {len(self.merged)}"


def _merged_map(e: Entry) -> dict[str, tuple[int, int]]:
    return {p: (int(o), int(n)) for p, (o, n) in (e.body.get("compacted") or {}).items()}


def finish_interrupted(lake: Lake, run_id: str) -> list[str]:
    """Delete what a committed merge already replaced (a compaction stopped between its commit
    and its deletes): the small files it holds, and the merged files it took in with their
    entries. Returns the files that went."""
    gone = []
    entries = [e for e in all_entries(lake, run_id) if e.stage == COMPACT_STAGE]
    by_file = {lake.resolve(path): e for e in entries for path in e.files().values()}
    for e in entries:
        for path in [*_merged_map(e), *e.body.get("replaces", [])]:
            full = lake.resolve(path)
            old = by_file.get(full)
            if old is not None and old.manifest != e.manifest and lake.exists(old.manifest):
                lake.fs.rm(old.manifest)
            if old is not e and lake.exists(full):
                lake.fs.rm(full)
                gone.append(path)
    if gone:
        lake.forget_merges(run_id)
    return gone


def _commit_merged(lake: Lake, run_id: str, table: str, data: pa.Table, holds: dict[str, tuple[int, int]],
                   replaces: list[str]) -> str:
    """Commit ``data`` as one merged file holding the rows of ``holds``; its path."""
    key = hashlib.sha256("\n".join(f"{p}:{o}:{n}" for p, (o, n) in sorted(holds.items())).encode()).hexdigest()
    commit = ShardCommit(stage=COMPACT_STAGE, run_id=run_id, fingerprint=f"compact-{table}-{key[:16]}",
                         key=f"compact {table}", inputs=sorted(holds),
                         meta={"compacted_table": table, "compacted": {p: list(v) for p, v in holds.items()},
                               "replaces": sorted(replaces)})
    return commit_shard(lake, commit, {table: data})["outputs"][table]["path"]


def _sources(lake: Lake, run_id: str, table: str, entries: list[Entry],
             foreign: set[str]) -> list[Source]:
    """The small files of ``table`` in the run that may be merged, by path."""
    out = []
    for e in entries:
        path = e.files().get(table)
        if not path or e.stage == "_kept" or lake.resolve(path) in foreign:
            continue
        full = lake.resolve(path)
        if not lake.exists(full):
            continue  # merged already (the map has it) or missing (lake check reports it)
        size = lake.fs.size(full)
        if size >= SMALL_BYTES:
            continue
        rows = int(e.body["outputs"][table].get("rows") or lake.footer_rows(full))
        if e.stage == COMPACT_STAGE:
            out.append(Source(lake.relative(full), size, rows, _merged_map(e), e))
        else:
            out.append(Source(lake.relative(full), size, rows, {lake.relative(full): (0, rows)}))
    return sorted(out, key=lambda s: s.path)


def _groups(sources: list[Source]) -> list[list[Source]]:
    groups: list[list[Source]] = [[]]
    size = rows = 0
    for s in sources:
        if groups[-1] and (size + s.bytes > TARGET_BYTES or rows + s.rows > TARGET_ROWS):
            groups.append([])
            size = rows = 0
        groups[-1].append(s)
        size, rows = size + s.bytes, rows + s.rows
    return [g for g in groups if len(g) > 1]


def _merge(lake: Lake, run_id: str, table: str, group: list[Source]) -> str:
    """Commit one merged file for ``group``, then delete what it replaces. Returns its path."""
    parts, holds, offset = [], {}, 0
    for s in group:
        parts.append(lake.read_shard(s.path))
        for path, (start, rows) in s.holds.items():
            holds[path] = (offset + start, rows)
        offset += s.rows
    merged = [s.path for s in group if s.entry is not None]
    new = _commit_merged(lake, run_id, table, pa.concat_tables(parts, promote_options="default"), holds, merged)
    for s in group:  # the commit point is passed: now what it replaces
        if s.entry is not None:
            lake.fs.rm(s.entry.manifest)
        if s.path != new and lake.exists(lake.resolve(s.path)):
            lake.fs.rm(lake.resolve(s.path))
    lake.forget_merges(run_id)
    return new


def compact_run(lake: Lake, run_id: str, tables: list[str] | None = None, min_files: int = MIN_FILES,
                dry_run: bool = False, locked: bool = False) -> Compaction:
    """Merge the small files of each table of one run (see the module). ``locked``: the
    caller holds the run's lock (a finishing ``guiforge run``)."""
    result = Compaction()
    lock = None
    if not locked and not dry_run:
        try:
            lock = RunLock(lake, run_id).acquire()
        except RunLocked:
            result.skipped.append(f"run {run_id}: being written by a live process")
            return result
    try:
        if not dry_run:
            result.removed += finish_interrupted(lake, run_id)
        everything = all_entries(lake)
        mine = [e for e in everything if e.run_id == run_id]
        foreign = set(claimed_files(lake, [e for e in everything if e.run_id != run_id]))
        for table in sorted({t for e in mine for t in e.files()} if tables is None else set(tables)):
            sources = _sources(lake, run_id, table, mine, foreign)
            if len(sources) < max(2, min_files):
                continue
            for group in _groups(sources):
                if dry_run:
                    result.merged.append(f"{table}/run={run_id} ({len(group)} files)")
                    result.removed += [s.path for s in group]
                    continue
                try:
                    result.merged.append(_merge(lake, run_id, table, group))
                except SchemaViolation as exc:  # an old lake's shard the current schema does not take
                    result.skipped.append(f"{table} of run {run_id}: {exc}")
                    break
                result.removed += [s.path for s in group]
    finally:
        if lock is not None:
            lock.release()
    return result


def compact_lake(lake: Lake, run_id: str | None = None, tables: list[str] | None = None,
                 min_files: int = MIN_FILES, dry_run: bool = False) -> Compaction:
    """:func:`compact_run` over one run or every run not being written."""
    runs = [run_id] if run_id else sorted({e.run_id for e in all_entries(lake)})
    busy = live_runs(lake)
    result = Compaction()
    for run in runs:
        if run in busy:
            result.skipped.append(f"run {run}: being written by a live process")
            continue
        one = compact_run(lake, run, tables, min_files, dry_run)
        result.merged += one.merged
        result.removed += one.removed
        result.skipped += one.skipped
    return result


def drop_merged(lake: Lake, doomed: list[Entry]) -> None:
    """Before ``doomed`` stage entries are deleted: rewrite each merged file that holds their
    rows without them (a new merged file and entry, committed before the old go). Content
    (images, blobs) stays: other rows may refer to it by hash, and a row nothing refers to
    costs only its bytes."""
    doomed_manifests = {e.manifest for e in doomed}
    paths = {lake.relative(p) for e in doomed if e.stage != COMPACT_STAGE
             for t, p in e.files().items() if t not in CONTENT_TABLES}
    if not paths:
        return
    for run in sorted({e.run_id for e in doomed}):
        for e in all_entries(lake, run):
            holds = _merged_map(e) if e.stage == COMPACT_STAGE else {}
            if not paths & set(holds) or e.manifest in doomed_manifests:
                continue
            table = e.body["compacted_table"]
            current = lake.resolve(e.files()[table])
            kept = sorted(((p, v) for p, v in holds.items() if p not in paths), key=lambda kv: kv[1][0])
            if kept:
                data = lake.read_shard(current)
                rest, offset = {}, 0
                for p, (_, n) in kept:
                    rest[p] = (offset, n)
                    offset += n
                _commit_merged(lake, run, table, pa.concat_tables([data.slice(o, n) for _, (o, n) in kept]),
                               rest, [lake.relative(current)])
            lake.fs.rm(e.manifest)
            if lake.exists(current):
                lake.fs.rm(current)
            lake.forget_merges(run)
