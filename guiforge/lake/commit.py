"""The commit protocol of a shard, the same on every filesystem, safe where there is no
rename (object stores) and when two writers compute the same shard at once.

1. **Stage**: each output table is written whole under a name of this attempt,
   ``part-<fp>.parquet.tmp-<attempt>``, which no ``*.parquet`` glob matches.
2. **Claim**: the manifest entry is *created*, never replaced: ``If-None-Match: *`` on S3, a
   hard link on a local disk (exclusive.py). The entry names the final files, their sizes
   and hashes, and the staged names (``staged``). Of two writers of one shard exactly one
   creates it; the other deletes what it staged and returns the winner's entry
   (``lost: True``), so a shard is committed once, with one writer's rows in all its tables.
3. **Publish**: each staged file is moved to its final name (a rename; on S3 a server-side
   copy, which makes the object appear whole, then a delete of the staged one).

A kill between 2 and 3 leaves an entry whose staged files are still there: whoever sees it
next finishes the publish (:func:`finish_commit`: the run that resumes, ``guiforge lake
check --repair``, a losing writer); the files are the ones the entry hashed, so finishing
twice is harmless. A kill before 2 leaves only temporaries, which the next run of the stage
deletes (:func:`sweep_stage`) and which no manifest names.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from guiforge.errors import GuiforgeError
from guiforge.lake.exclusive import ExclusiveFile
from guiforge.lake.manifests import all_entries
from guiforge.lake.store import TMP_MARK, Lake, read_manifest


class CommitLost(GuiforgeError):
    """The staged files of a claimed entry vanished before they were published."""


def encode_entry(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, indent=1, default=str).encode()


def claim(lake: Lake, entry: dict[str, Any], replace: bool = False) -> dict[str, Any] | None:
    """Create ``entry``'s manifest file; None if another writer's entry is there already
    (``replace``: swap that one for ours instead, as a re-export does)."""
    store = ExclusiveFile(lake)
    path = lake.manifest_path(entry["run_id"], entry["stage"], entry["fingerprint"])
    body = encode_entry(entry)
    for _ in range(20):  # each pass wins, or saw the entry change under it
        version = store.create(path, body)
        if version is not None:
            return entry
        current = store.read(path)
        if current is None:
            continue  # deleted meanwhile (a prune): create again
        if not replace:
            return None
        if store.swap(path, body, current[1]) is not None:
            return entry
    raise GuiforgeError(f"lake {lake.uri}: the manifest {lake.relative(path)} kept changing under this commit; "
                        "another process is writing the same shard: stop it, then run again")


def pending(lake: Lake, entry: dict[str, Any]) -> dict[str, str]:
    """table -> staged path of what ``entry`` staged and has not published yet."""
    out = {}
    for table, staged in (entry.get("staged") or {}).items():
        path = lake.resolve(staged)
        lake.fs.invalidate_cache(posixpath.dirname(path))  # another process may have published it
        if lake.exists(path):
            out[table] = path
    return out


def finish_commit(lake: Lake, entry: dict[str, Any]) -> int:
    """Publish what a claimed entry staged (idempotent: a file another process published
    meanwhile is skipped) and delete a final file of a table the entry wrote no rows to (an
    earlier attempt's). Returns how many files were published."""
    moved = 0
    for table, staged in pending(lake, entry).items():
        final = lake.resolve(entry["outputs"][table]["path"])
        try:
            lake.fs.mv(staged, final)
            moved += 1
        except FileNotFoundError:
            pass  # another process published it first
        finally:
            lake.fs.invalidate_cache(posixpath.dirname(final))
    for table, written in entry.get("outputs", {}).items():
        if not written.get("path"):
            own = lake.shard_path(table, entry["run_id"], entry["fingerprint"])
            if lake.exists(own):
                lake.fs.rm(own)
    return moved


def check_published(lake: Lake, entry: dict[str, Any]) -> None:
    """After publishing our own claim: every file it names is there. If a sweep deleted our
    staged files before we claimed (another process took the run over meanwhile), the
    claim is withdrawn so no entry points at nothing, and the shard fails (a rerun redoes it)."""
    missing = [t for t, w in entry["outputs"].items() if w.get("path") and not lake.exists(lake.resolve(w["path"]))]
    if not missing:
        return
    store = ExclusiveFile(lake)
    path = lake.manifest_path(entry["run_id"], entry["stage"], entry["fingerprint"])
    current = store.read(path)
    if current is not None and json.loads(current[0]).get("attempt") == entry.get("attempt"):
        store.delete(path, current[1])
    raise CommitLost(f"lake {lake.uri}: shard {entry['stage']}/{entry['fingerprint']}: the staged file of "
                     f"{missing[0]} vanished before it was published (another process swept it); run again")


def finish_run(lake: Lake, run_id: str | None = None) -> int:
    """Finish every interrupted commit of ``run_id`` (or of the lake): a resumed run does this
    before it reads or verifies anything. Returns how many files were published."""
    return sum(finish_commit(lake, e.body) for e in all_entries(lake, run_id) if unfinished(lake, e.body))


def unfinished(lake: Lake, entry: dict[str, Any]) -> bool:
    """Whether ``entry`` was claimed but not wholly published (a staged file of it is still
    there: a replaced entry's final file may exist, holding the rows it replaced)."""
    return bool(entry.get("staged")) and bool(pending(lake, entry))


def sweep_stage(lake: Lake, run_id: str, stage: str, tables: list[str]) -> tuple[int, int]:
    """Before a stage runs: publish what its entries staged and left (a kill after the
    claim), delete every other temporary (a kill before it). Returns (published, deleted)."""
    entries = {}
    for p in lake._ls(lake.manifest_dir(run_id, stage)):
        if p.endswith(".json") and TMP_MARK not in posixpath.basename(p):
            body = read_manifest(lake, p)
            for staged in (body.get("staged") or {}).values():
                entries[lake.resolve(staged)] = body
    published = deleted = 0
    for table in tables:
        for p in lake._ls(lake.run_dir(table, run_id)):
            if TMP_MARK not in posixpath.basename(p):
                continue
            if p in entries:
                published += finish_commit(lake, entries[p])
            elif lake.exists(p):
                lake.fs.rm(p)
                deleted += 1
    deleted += lake.remove_stale_temporaries(lake.manifest_dir(run_id, stage))
    return published, deleted
