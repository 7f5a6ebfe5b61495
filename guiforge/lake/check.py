"""``guiforge lake check``: is everything the lake's manifests promise really there?

Every manifest entry's file exists with its recorded size and sha256 (entries of schema
version 1 recorded neither: they are counted as unverified), every content hash a row
refers to is stored, and no file lies in a table folder that no manifest lists (an orphan;
``guiforge lake gc`` removes them). Runs a live process is writing are skipped for orphans.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field

from guiforge.lake.blobs import CONTENT_TABLES
from guiforge.lake.gc import REFERENCES, _hashes, all_entries
from guiforge.lake.lock import live_runs
from guiforge.lake.store import Lake


@dataclass
class CheckReport:
    entries: int = 0
    files: int = 0
    unverified: int = 0
    problems: list[str] = field(default_factory=list)
    duplicates: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def verdict(self, lake: Lake) -> str:
        head = "ok" if self.ok else f"FAILED ({len(self.problems)} problem(s))"
        extra = f", {self.unverified} without recorded hash (older lake)" if self.unverified else ""
        dup = f", {self.duplicates} content hash(es) stored twice (harmless)" if self.duplicates else ""
        return f"lake check {head}: {lake.uri}: {self.entries} manifest entries, {self.files} files{extra}{dup}"


def _sha256(lake: Lake, path: str) -> str:
    h = hashlib.sha256()
    with lake.fs.open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _readable_hashes(lake, path: str, column: str, report) -> set[str]:
    """The hashes a shard holds; a shard that does not open is a problem, not a crash."""
    try:
        return _hashes(lake, path, column)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        problem = f"unreadable: {lake.relative(path)} ({str(exc)[:80]})"
        if problem not in report.problems:
            report.problems.append(problem)
        return set()


def check_lake(lake: Lake) -> CheckReport:
    report = CheckReport()
    entries = all_entries(lake)
    report.entries = len(entries)
    listed: set[str] = set()
    for e in entries:
        for table, written in e.body.get("outputs", {}).items():
            if not written.get("path"):
                continue
            path = lake.resolve(written["path"])
            listed.add(path)
            report.files += 1
            where = f"{e.run_id}/{e.stage}/{e.body.get('fingerprint')} {table}"
            if not lake.exists(path):
                report.problems.append(f"missing file: {lake.relative(path)} ({where})")
                continue
            if "sha256" not in written:
                report.unverified += 1
                continue
            size = lake.fs.size(path)
            if size != written.get("bytes"):
                report.problems.append(f"size differs: {lake.relative(path)} is {size} bytes, "
                                       f"the manifest recorded {written.get('bytes')} ({where})")
            elif _sha256(lake, path) != written["sha256"]:
                report.problems.append(f"content differs: {lake.relative(path)} does not match its sha256 ({where})")
    stored: dict[str, set[str]] = {t: set() for t in CONTENT_TABLES}
    for e in entries:
        for table in CONTENT_TABLES:
            path = e.files().get(table)
            if path and lake.exists(lake.resolve(path)):
                hashes = _readable_hashes(lake, lake.resolve(path), "sha256", report)
                report.duplicates += len(stored[table] & hashes)
                stored[table] |= hashes
    for table in CONTENT_TABLES:
        for e in entries:
            for ref_table, column in REFERENCES[table]:
                path = e.files().get(ref_table)
                if not path or not lake.exists(lake.resolve(path)):
                    continue
                missing = _readable_hashes(lake, lake.resolve(path), column, report) - stored[table]
                if missing:
                    report.problems.append(
                        f"{len(missing)} {table} missing: {ref_table} of {e.run_id}/{e.stage}/"
                        f"{e.body.get('fingerprint')} refer to {sorted(missing)[0][:16]}... which no committed "
                        f"{table} shard holds")
    busy = live_runs(lake)
    for table in lake.tables():
        for run in lake.runs(table):
            if run in busy:
                continue
            for p in lake._ls(lake.run_dir(table, run)):
                if p not in listed:
                    report.problems.append(f"orphan: {lake.relative(p)} is in no manifest "
                                           f"(`guiforge lake gc` removes it)" if not posixpath.basename(p).startswith(
                                               "part-kept-") else f"orphan kept file: {lake.relative(p)}")
    return report
