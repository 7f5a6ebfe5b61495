"""Safe deletes: pruning, ``--fresh`` and ``guiforge lake gc`` never remove content that a
committed row still refers to.

Rows refer to content (images, blobs) by sha256 (:data:`REFERENCES`). Deleting shards
deletes their content files too, unless such a file holds a hash that rows outside the
deleted shards refer to and no other committed file holds: that file is kept, renamed
``part-kept-<fp>.parquet`` and listed under the ``_kept`` stage of its run's manifest, so
it stays committed. ``gc`` is mark-and-sweep: files no manifest lists are deleted (or
adopted as kept when referenced); kept files nothing needs any more are deleted.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field

from guiforge.errors import GuiforgeError
from guiforge.lake.blobs import CONTENT_TABLES
from guiforge.lake.compact import drop_merged
from guiforge.lake.lock import live_runs
from guiforge.lake.manifests import DamagedManifest, Entry, all_entries, claimed_files
from guiforge.lake.store import Lake

# content table -> the (table, column) pairs whose values name its hashes
REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "images": (("steps", "image_sha256"), ("judgments", "evidence_images"), ("grounding", "image_sha256"),
               ("grounding_screens", "image_sha256")),
    "blobs": (),
}
KEPT_STAGE = "_kept"


def _hashes(lake: Lake, path: str, column: str = "sha256") -> set[str]:
    values = lake.read_shard(path, columns=[column]).column(column).to_pylist()
    out: set[str] = set()
    for v in values:
        if isinstance(v, list):
            out.update(x for x in v if x)
        elif v:
            out.add(v)
    return out


def _readable_hashes(lake: Lake, path: str) -> set[str]:
    """The hashes a content file holds; none if it is gone or does not open (a damaged file
    is not kept for what it might hold)."""
    try:
        return _hashes(lake, path)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return set()


def referenced(lake: Lake, table: str, entries: Iterable[Entry]) -> set[str]:
    """Hashes of ``table`` that the rows of ``entries`` refer to."""
    out: set[str] = set()
    for e in entries:
        for ref_table, column in REFERENCES.get(table, ()):
            path = e.files().get(ref_table)
            if path:
                try:
                    out |= _hashes(lake, lake.resolve(path), column)
                except (OSError, ValueError) as exc:  # what it refers to is unknown: delete nothing

                    raise GuiforgeError(f"lake gc: {lake.relative(lake.resolve(path))} does not open ({str(exc)[:80]}); "
                                        "nothing was deleted: see `guiforge lake check`") from None
    return out


@dataclass
class Deletion:
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _keep(lake: Lake, entry: Entry, table: str, dry_run: bool) -> str:
    """Move ``entry``'s ``table`` file to a kept name with an entry of its own."""
    old = lake.resolve(entry.files()[table])
    name = posixpath.basename(old)
    new = old if name.startswith("part-kept-") else posixpath.join(posixpath.dirname(old), "part-kept-" + name[5:])
    if not dry_run:
        if new != old:
            lake.fs.mv(old, new)
        fp = name[5:-8].removeprefix("kept-")
        written = {**entry.body["outputs"][table], "path": lake.relative(new)}
        if "sha256" not in written:  # an orphan adopted, or an entry of schema 1: record them now
            with lake.fs.open(new, "rb") as fh:
                data = fh.read()
            written.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        if written.get("rows") is None:
            written["rows"] = lake.footer_rows(new)
        body = {"stage": KEPT_STAGE, "run_id": entry.run_id, "fingerprint": f"{table}-{fp}", "key": f"kept {table}",
                "inputs": [], "outputs": {table: written}, "kept_from": entry.body.get("stage")}
        lake.write_json(body, lake.manifest_path(entry.run_id, KEPT_STAGE, f"{table}-{fp}"))
    return new


def delete_entries(lake: Lake, doomed: list[Entry | dict], dry_run: bool = False) -> Deletion:
    """Delete committed shards: their files and manifest entries, keeping content files
    that rows outside ``doomed`` still need."""
    doomed_entries = [e if isinstance(e, Entry) else Entry(
        e["run_id"], e["stage"], lake.manifest_path(e["run_id"], e["stage"], e["fingerprint"]), e) for e in doomed]
    doomed_manifests = {e.manifest for e in doomed_entries}
    if not dry_run:
        drop_merged(lake, doomed_entries)  # rows of theirs that compaction merged go too
    result = Deletion()
    keep_files: set[str] = set()
    # A manifest that does not read could name any file: then nothing is deleted (it raises).
    survivors = [e for e in all_entries(lake) if e.manifest not in doomed_manifests]
    protected = set(claimed_files(lake, survivors))  # a file another entry names is never deleted
    if any(t in CONTENT_TABLES for e in doomed_entries for t in e.files()):
        for table in CONTENT_TABLES:
            mine = [e for e in doomed_entries if table in e.files()]
            if not mine:
                continue
            needed = referenced(lake, table, survivors)
            for e in survivors:
                if table in e.files():
                    needed -= _readable_hashes(lake, lake.resolve(e.files()[table]))
            for e in mine:
                if lake.resolve(e.files()[table]) in protected or not lake.exists(lake.resolve(e.files()[table])):
                    continue  # another entry's file, or merged (content stays in the merged file)
                if needed & _readable_hashes(lake, lake.resolve(e.files()[table])):
                    keep_files.add(lake.resolve(e.files()[table]))
                    result.kept.append(_keep(lake, e, table, dry_run))
    for e in doomed_entries:
        for path in e.files().values():
            path = lake.resolve(path)
            if path in keep_files or path in protected:
                continue
            result.deleted.append(path)
            if not dry_run and lake.exists(path):
                lake.fs.rm(path)
        if not dry_run and lake.exists(e.manifest) and not (e.stage == KEPT_STAGE and any(
                lake.resolve(p) in keep_files for p in e.files().values())):
            lake.fs.rm(e.manifest)
    return result


def remove_run(lake: Lake, run_id: str, dry_run: bool = False) -> Deletion:
    """``--fresh``: every shard of the run, then whatever else lies in its folders, except
    content files other runs' rows still refer to."""
    result = delete_entries(lake, all_entries(lake, run_id), dry_run)
    kept = set(result.kept)
    for table in lake.tables():
        for p in lake._ls(lake.run_dir(table, run_id)):
            if p not in kept:
                result.deleted.append(p)
                if not dry_run:
                    lake.fs.rm(p, recursive=True)
    return result


def collect(lake: Lake, dry_run: bool = False) -> Deletion:
    """Mark and sweep the whole lake, skipping runs a live process is writing."""
    busy = live_runs(lake)
    damaged: list[DamagedManifest] = []
    entries = all_entries(lake, damaged=damaged)
    if damaged:  # it could list any file: collecting now could delete a committed shard
        raise GuiforgeError(f"lake gc: manifest {lake.relative(damaged[0].path)} is unreadable ({damaged[0].why}); "
                            "nothing was deleted: see `guiforge lake check`")
    claims = claimed_files(lake, entries)
    for path, claimants in claims.items():
        names = sorted({lake.relative(e.manifest) for e in claimants})
        if len(names) > 1:
            raise GuiforgeError(f"lake gc: {lake.relative(path)} is named by {len(names)} manifest entries "
                                f"({', '.join(names)}); nothing was deleted: see `guiforge lake check`")
    listed = set(claims)
    result = Deletion()
    needed = {t: referenced(lake, t, entries) for t in CONTENT_TABLES}
    for table in lake.tables():
        for run in lake.runs(table):
            if run in busy:
                continue
            for p in lake._ls(lake.run_dir(table, run)):
                if p in listed:
                    continue
                name = posixpath.basename(p)
                if table in CONTENT_TABLES and name.endswith(".parquet") and needed[table] & _hashes(lake, p):
                    orphan = Entry(run, "_orphan", "", {"outputs": {table: {"path": lake.relative(p), "rows": None}}})
                    result.kept.append(_keep(lake, orphan, table, dry_run))
                    continue
                result.deleted.append(p)
                if not dry_run:
                    lake.fs.rm(p, recursive=True)
    # kept files that nothing needs any more (their referrers were deleted since)
    stale = [e for e in all_entries(lake) if e.stage == KEPT_STAGE and e.run_id not in busy]
    for e in stale:
        table, path = next(iter(e.files().items()))
        others = {lake.resolve(p) for x in entries if x.manifest != e.manifest
                  for t, p in x.files().items() if t == table}
        elsewhere: set[str] = set()
        for p in others:
            elsewhere |= _readable_hashes(lake, p)
        if not ((needed[table] - elsewhere) & _hashes(lake, lake.resolve(path))):
            result.deleted += delete_entries(lake, [e], dry_run).deleted
    return result
