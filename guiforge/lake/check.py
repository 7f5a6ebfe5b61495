"""``guiforge lake check``: is everything the lake's manifests promise really there?

Every manifest entry reads; every file it lists exists with its recorded size, sha256 and
row count (the Parquet footer's); no file is named by two entries; every content hash a row
refers to is stored; no file lies in a table folder that no manifest claims (an orphan:
``guiforge lake gc`` removes it). Runs a live process is writing are skipped for orphans.
Entries of schema version 1 recorded no size or hash: they are counted as unverified.

``repair`` drops what is damaged (the entries and their files) so that ``guiforge run``
computes those shards again, and points an entry whose path was edited onto another
shard's file back at its own file when that file still matches its recorded hash.
``run`` and ``export`` call :func:`verify_run` on the shards they read and stop with one line.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field

from guiforge.errors import GuiforgeError
from guiforge.lake.blobs import CONTENT_TABLES
from guiforge.lake.commit import finish_commit, unfinished
from guiforge.lake.gc import REFERENCES, _hashes, delete_entries
from guiforge.lake.lock import live_runs
from guiforge.lake.manifests import DamagedManifest, Entry, all_entries, claimed_files
from guiforge.lake.store import MANIFEST_DIR, Lake

REPAIR = "`guiforge lake check --repair` drops the damaged shard(s) so `guiforge run` computes them again"


class DamagedLake(GuiforgeError):
    """A shard a command was about to read does not match its manifest entry."""


@dataclass
class CheckReport:
    entries: int = 0
    files: int = 0
    unverified: int = 0
    problems: list[str] = field(default_factory=list)
    duplicates: int = 0
    damaged: dict[str, Entry] = field(default_factory=dict)  # manifest path -> entry whose files are damaged
    bad_manifests: list[str] = field(default_factory=list)
    misdirected: list[tuple[Entry, str]] = field(default_factory=list)  # (entry, table) naming another's file
    unfinished: list[Entry] = field(default_factory=list)  # claimed, staged files not yet published
    orphans: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def verdict(self, lake: Lake) -> str:
        head = "ok" if self.ok else f"FAILED ({len(self.problems)} problem(s))"
        extra = f", {self.unverified} without recorded hash (older lake)" if self.unverified else ""
        dup = f", {self.duplicates} content hash(es) stored twice (harmless)" if self.duplicates else ""
        return f"lake check {head}: {lake.uri}: {self.entries} manifest entries, {self.files} files{extra}{dup}"

    def advice(self, lake: Lake) -> list[str]:
        """How to repair what was found, one line per kind of damage."""
        out = []
        if self.unfinished:
            out.append(f"unfinished: `guiforge lake check --repair --lake {lake.uri}` (or resuming the run) publishes "
                       "the staged files of commits a killed writer claimed")
        if self.damaged or self.bad_manifests or self.misdirected:
            out.append(f"repair: `guiforge lake check --repair --lake {lake.uri}` drops the damaged shard(s) and "
                       "unreadable manifest(s) and points misdirected entries back at their own files; "
                       "`guiforge run` then computes the dropped shards again")
        if self.orphans:
            out.append(f"orphans: `guiforge lake gc --lake {lake.uri}` removes files no manifest claims")
        return out


def _sha256(lake: Lake, path: str) -> str:
    h = hashlib.sha256()
    with lake.fs.open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def entry_problems(lake: Lake, e: Entry) -> tuple[list[str], int]:
    """What is wrong with the files of one entry (missing, size, sha256, footer rows, does not
    open), and how many of its files carry no recorded hash."""
    problems, unverified = [], 0
    for table, written in e.body.get("outputs", {}).items():
        if not written.get("path"):
            continue
        path = lake.resolve(written["path"])
        where = f"{e.run_id}/{e.stage}/{e.body.get('fingerprint')} {table}"
        rel = lake.relative(path)
        if not lake.exists(path):
            if lake.merged_into(path) is None:  # compaction moved its rows (the merged file is checked itself)
                problems.append(f"missing file: {rel} ({where})")
            continue
        if "sha256" in written:
            size = lake.fs.size(path)
            if size != written.get("bytes"):
                problems.append(f"size differs: {rel} is {size} bytes, the manifest recorded "
                                f"{written.get('bytes')} ({where})")
                continue
            if _sha256(lake, path) != written["sha256"]:
                problems.append(f"content differs: {rel} does not match its sha256 ({where})")
                continue
        else:
            unverified += 1
        try:
            rows = lake.footer_rows(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            problems.append(f"unreadable: {rel} ({str(exc)[:80]}) ({where})")
            continue
        if rows != written.get("rows"):
            problems.append(f"row count differs: {rel} holds {rows} rows, the manifest recorded "
                            f"{written.get('rows')} ({where})")
    return problems, unverified


def verify_run(lake: Lake, run_id: str, command: str) -> None:
    """Stop ``command`` with one line if a committed shard of ``run_id`` is damaged."""
    problems: list[str] = []
    damaged: list[DamagedManifest] = []
    for e in all_entries(lake, run_id, damaged=damaged):
        problems += entry_problems(lake, e)[0]
    problems = [f"manifest {lake.relative(d.path)} is unreadable ({d.why})" for d in damaged] + problems
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DamagedLake(f"{command}: lake {lake.uri}: run {run_id}: {problems[0]}{more}; nothing was read. "
                          f"`guiforge lake check --lake {lake.uri}` lists the damage; {REPAIR}")


def _readable_hashes(lake: Lake, path: str, column: str, report: CheckReport, entry: Entry | None) -> set[str]:
    """The hashes a shard holds; a shard that does not open is a problem, not a crash."""
    try:
        return _hashes(lake, path, column)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        problem = f"unreadable: {lake.relative(path)} ({str(exc)[:80]})"
        if not any(p.startswith(problem) for p in report.problems):
            report.problems.append(problem)
        if entry is not None:
            report.damaged[entry.manifest] = entry
        return set()


def require_lake(lake: Lake) -> None:
    if not lake.exists(lake.root):
        raise GuiforgeError(f"lake {lake.uri}: no such lake (the path does not exist); check --lake")
    if not lake.fs.isdir(lake.root) or (lake.exists(lake.path(MANIFEST_DIR))
                                        and not lake.fs.isdir(lake.path(MANIFEST_DIR))):
        raise GuiforgeError(f"lake {lake.uri}: not a guiforge lake (a file, not a folder of tables and "
                            f"{MANIFEST_DIR}/); check --lake")
    if not lake.exists(lake.path(MANIFEST_DIR)) and lake.tables():
        raise GuiforgeError(f"lake {lake.uri}: not a guiforge lake: table folders ({', '.join(lake.tables()[:3])}) "
                            f"but no {MANIFEST_DIR}/ folder; check --lake")


def check_lake(lake: Lake) -> CheckReport:
    require_lake(lake)
    report = CheckReport()
    damaged: list[DamagedManifest] = []
    entries = all_entries(lake, damaged=damaged)
    for d in damaged:
        report.problems.append(f"unreadable manifest: {lake.relative(d.path)} ({d.why})")
        report.bad_manifests.append(d.path)
    report.entries = len(entries)
    busy = live_runs(lake)
    for e in entries:
        report.files += len(e.files())
        if unfinished(lake, e.body):  # claimed, not yet published: in flight, or its writer was killed
            if e.run_id not in busy:
                report.problems.append(f"unfinished commit: {e.run_id}/{e.stage}/{e.body.get('fingerprint')}: its "
                                       "files are staged but not published (--repair or resuming the run finishes it)")
                report.unfinished.append(e)
            continue
        problems, unverified = entry_problems(lake, e)
        report.unverified += unverified
        report.problems += problems
        if problems:
            report.damaged[e.manifest] = e
    claims = claimed_files(lake, entries)
    for e in entries:
        for table, recorded in e.files().items():
            path = lake.resolve(recorded)
            others = sorted({lake.relative(x.manifest) for x in claims.get(path, []) if x.manifest != e.manifest})
            if others and path != lake.shard_path(table, e.run_id, e.body["fingerprint"]):
                report.problems.append(f"duplicate reference: {lake.relative(e.manifest)} names {lake.relative(path)}, "
                                       f"the file of {', '.join(others)}")
                report.misdirected.append((e, table))
    _check_content(lake, entries, report)
    _check_orphans(lake, set(claims), report)
    return report


def _check_content(lake: Lake, entries: list[Entry], report: CheckReport) -> None:
    """Every content hash a row refers to is stored in a committed content shard."""
    stored: dict[str, set[str]] = {t: set() for t in CONTENT_TABLES}
    for e in entries:
        for table in CONTENT_TABLES:
            path = e.files().get(table)
            if path and lake.exists(lake.resolve(path)):
                hashes = _readable_hashes(lake, lake.resolve(path), "sha256", report, e)
                report.duplicates += len(stored[table] & hashes)
                stored[table] |= hashes
    for table in CONTENT_TABLES:
        for e in entries:
            for ref_table, column in REFERENCES[table]:
                path = e.files().get(ref_table)
                if not path or not lake.exists(lake.resolve(path)):
                    continue
                missing = _readable_hashes(lake, lake.resolve(path), column, report, e) - stored[table]
                if missing:
                    report.problems.append(
                        f"{len(missing)} {table} missing: {ref_table} of {e.run_id}/{e.stage}/"
                        f"{e.body.get('fingerprint')} refer to {sorted(missing)[0][:16]}... which no committed "
                        f"{table} shard holds")
                    report.damaged[e.manifest] = e


def _check_orphans(lake: Lake, claimed: set[str], report: CheckReport) -> None:
    busy = live_runs(lake)
    for table in lake.tables():
        for run in lake.runs(table):
            if run in busy:
                continue
            for p in lake._ls(lake.run_dir(table, run)):
                if p in claimed:
                    continue
                report.orphans += 1
                if posixpath.basename(p).startswith("part-kept-"):
                    report.problems.append(f"orphan kept file: {lake.relative(p)}")
                else:
                    report.problems.append(f"orphan: {lake.relative(p)} is in no manifest (`guiforge lake gc` removes it)")


@dataclass
class Repair:
    dropped: list[str] = field(default_factory=list)
    redirected: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)


def repair_lake(lake: Lake, report: CheckReport) -> Repair:
    """Fix what ``report`` found: misdirected entries back to their own file (when it still
    matches the recorded hash), else dropped with the damaged ones; unreadable manifests
    removed (their files become orphans for ``lake gc``). Runs being written are refused."""
    busy = live_runs(lake)
    touched = ({e.run_id for e in report.damaged.values()} | {e.run_id for e, _ in report.misdirected}
               | {e.run_id for e in report.unfinished})
    if touched & busy:
        raise GuiforgeError(f"lake check --repair: run {sorted(touched & busy)[0]} is being written by a live "
                            "process; repair it once that run has stopped")
    result = Repair()
    for e in report.unfinished:
        finish_commit(lake, e.body)
        result.finished.append(lake.relative(e.manifest))
    for path in report.bad_manifests:
        lake.fs.rm(path)
        result.dropped.append(lake.relative(path))
    doomed = dict(report.damaged)
    for e, table in report.misdirected:
        own = lake.shard_path(table, e.run_id, e.body["fingerprint"])
        written = e.body["outputs"][table]
        if lake.exists(own) and written.get("sha256") and _sha256(lake, own) == written["sha256"]:
            body = {**e.body, "outputs": {**e.body["outputs"], table: {**written, "path": lake.relative(own)}}}
            lake.write_json(body, e.manifest)
            result.redirected.append(lake.relative(e.manifest))
            doomed.pop(e.manifest, None)  # its only damage was pointing at another shard's file
        else:
            doomed[e.manifest] = e
    if doomed:
        delete_entries(lake, list(doomed.values()))
        result.dropped += [lake.relative(m) for m in doomed]
    return result
