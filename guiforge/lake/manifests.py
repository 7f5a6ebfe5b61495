"""Reading a lake's manifest entries: each one whole or named as unreadable, never a bare
``JSONDecodeError``; and which files the entries claim (by path, or by the fingerprint in
their file name) so that nothing any manifest points at is ever taken for an orphan."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from guiforge.lake.store import (
    MANIFEST_DIR,
    READ_ONCE,
    TMP_MARK,
    DamagedManifest,
    Lake,
    read_manifest,
)


@dataclass
class Entry:
    """A manifest entry and where it lies."""

    run_id: str
    stage: str
    manifest: str
    body: dict[str, Any]

    def files(self) -> dict[str, str]:
        """table -> recorded file path, for outputs that hold rows."""
        return {t: w["path"] for t, w in self.body.get("outputs", {}).items() if w.get("path")}


def manifest_files(lake: Lake, run_id: str | None = None) -> list[tuple[str, str, str]]:
    """(run id, stage, path) of every committed manifest file, in a stable order."""
    out = []
    runs = [f"run={run_id}"] if run_id else [posixpath.basename(p.rstrip("/"))
                                             for p in lake._ls(lake.path(MANIFEST_DIR))]
    for run in sorted(runs):
        if not run.startswith("run="):
            continue
        for stage_dir in sorted(lake._ls(lake.path(MANIFEST_DIR, run))):
            stage = posixpath.basename(stage_dir.rstrip("/"))
            for p in sorted(lake._ls(stage_dir)):
                if p.endswith(".json") and TMP_MARK not in posixpath.basename(p):
                    out.append((run[4:], stage, p))
    return out


@contextmanager
def entries_snapshot() -> Iterator[None]:
    """Within this block each lake's entries are listed and parsed once, then served from
    memory: for a read-only command (``guiforge stats``) whose parts each ask for every
    entry (thousands of files in a large run). Never around code that commits."""
    token = READ_ONCE.set({})
    try:
        yield
    finally:
        READ_ONCE.reset(token)


def all_entries(lake: Lake, run_id: str | None = None, damaged: list[DamagedManifest] | None = None) -> list[Entry]:
    """Every manifest entry (of one run, or of the lake). An unreadable one raises
    :class:`DamagedManifest`, or is added to ``damaged`` when a list is given."""
    cache = READ_ONCE.get()
    if cache is None or damaged is not None:
        return _read_entries(lake, run_id, damaged)
    whole = cache.get(("entries", lake.uri, None))
    if whole is not None:  # the whole lake was listed already: a run's entries are a part of it
        return [e for e in whole if run_id is None or e.run_id == run_id]
    key = ("entries", lake.uri, run_id)
    if key not in cache:
        cache[key] = _read_entries(lake, run_id, None)
    return list(cache[key])


def _read_entries(lake: Lake, run_id: str | None, damaged: list[DamagedManifest] | None) -> list[Entry]:
    out = []
    for run, stage, p in manifest_files(lake, run_id):
        try:
            out.append(Entry(run, stage, p, read_manifest(lake, p)))
        except DamagedManifest as exc:
            if damaged is None:
                raise
            damaged.append(exc)
    return out


def claimed_files(lake: Lake, entries: list[Entry]) -> dict[str, list[Entry]]:
    """Resolved file path -> the entries that claim it: by the path they record, and by the
    file their fingerprint names (``<table>/run=<run>/part-<fingerprint>.parquet``), so that
    an entry whose path was edited to point elsewhere still protects its own file; and the
    files an entry staged and has not published yet (lake/commit.py)."""
    out: dict[str, list[Entry]] = {}
    for e in entries:
        for staged in (e.body.get("staged") or {}).values():
            out.setdefault(lake.resolve(staged), []).append(e)
        for table, path in e.files().items():
            out.setdefault(lake.resolve(path), []).append(e)
            own = lake.shard_path(table, e.run_id, e.body["fingerprint"])
            if own != lake.resolve(path):
                out.setdefault(own, []).append(e)
    return out
