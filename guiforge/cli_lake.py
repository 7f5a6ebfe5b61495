"""``guiforge lake check`` and ``guiforge lake gc``: verify a lake, remove what nothing uses."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from guiforge.errors import GuiforgeError

lake_app = typer.Typer(help="Check a lake's files against its manifests; collect unused files; merge small files.",
                       no_args_is_help=True)
out = Console()
LakeOpt = Annotated[str | None, typer.Option("--lake", help="lake root: a path or any fsspec URI (s3://...)")]


def _lake(uri: str | None):
    # heavy: jinja2, numpy, imported when this runs
    from guiforge.lake.store import Lake
    from guiforge.orchestration.compile import load_pipeline

    return Lake(uri or load_pipeline(None).config.lake)


@lake_app.command("check")
def check(lake: LakeOpt = None,
          limit: Annotated[int, typer.Option(help="problems to list at most")] = 20,
          repair: Annotated[bool, typer.Option("--repair", help="drop damaged shards (a rerun computes them "
                                                                 "again) and unreadable manifests")] = False) -> None:
    """Every manifest entry reads, its files exist with their recorded size, sha256 and row
    count, no file is named twice, every image a row refers to is stored, no file is outside
    the manifests. Exit 1 on any problem (0 after --repair fixed them all)."""
    # heavy: numpy, imported when this runs
    from guiforge.lake.check import check_lake, repair_lake

    the_lake = _lake(lake)
    report = check_lake(the_lake)
    out.print(report.verdict(the_lake), highlight=False, soft_wrap=True)
    for problem in report.problems[:limit]:
        out.print(f"  {problem}", highlight=False, soft_wrap=True)
    if len(report.problems) > limit:
        out.print(f"  ... and {len(report.problems) - limit} more", highlight=False)
    if report.ok:
        return
    if not repair:
        for line in report.advice(the_lake):
            out.print(line, highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    done = repair_lake(the_lake, report)
    if done.finished:
        out.print(f"finished: published the staged files of {len(done.finished)} interrupted commit(s)",
                  highlight=False, soft_wrap=True)
    out.print(f"repaired: dropped {len(done.dropped)} manifest entr(ies) with their files, pointed "
              f"{len(done.redirected)} back at their own file; rerun `guiforge run` to compute the dropped shards",
              highlight=False, soft_wrap=True)
    after = check_lake(the_lake)
    out.print(after.verdict(the_lake), highlight=False, soft_wrap=True)
    if not after.ok:
        for line in after.advice(the_lake):
            out.print(line, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


@lake_app.command("gc")
def gc(lake: LakeOpt = None,
       dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would go, delete nothing")] = False) -> None:
    """Mark and sweep: delete files no manifest lists (half-written or left by a killed run)
    unless a committed row refers to their content; runs being written are left alone."""
    # heavy: numpy, imported when this runs
    from guiforge.lake.check import require_lake
    from guiforge.lake.gc import collect

    the_lake = _lake(lake)
    require_lake(the_lake)
    try:
        result = collect(the_lake, dry_run=dry_run)
    except PermissionError as exc:
        raise GuiforgeError(f"lake {the_lake.uri}: cannot delete {exc.filename}: {exc.strerror}") from None
    verb = "would delete" if dry_run else "deleted"
    out.print(f"lake gc: {the_lake.uri}: {verb} {len(result.deleted)} file(s), kept {len(result.kept)} "
              "referenced content file(s)", highlight=False, soft_wrap=True)
    for path in result.deleted[:50]:
        out.print(f"  {verb}: {the_lake.relative(path)}", highlight=False, soft_wrap=True)


@lake_app.command("compact")
def compact(lake: LakeOpt = None,
            run_id: Annotated[str | None, typer.Option("--run-id", help="one run (default: every run)")] = None,
            table: Annotated[list[str] | None, typer.Option("--table", help="only these tables (repeat)")] = None,
            min_files: Annotated[int, typer.Option("--min-files", min=2,
                                                   help="merge a run's table only from this many small files")] = 8,
            dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would merge, change nothing")] = False
            ) -> None:
    """Merge the small shard files of each run's tables into a few large files (queries pay
    per file). Stage entries keep their fingerprints: a resumed run skips them and reads their
    rows from the merged files; runs being written are left alone."""
    # heavy: numpy, imported when this runs
    from guiforge.lake.check import require_lake
    from guiforge.lake.compact import compact_lake

    the_lake = _lake(lake)
    require_lake(the_lake)
    try:
        result = compact_lake(the_lake, run_id, table or None, min_files, dry_run)
    except PermissionError as exc:
        raise GuiforgeError(f"lake {the_lake.uri}: cannot write {exc.filename}: {exc.strerror}") from None
    out.print(result.line(dry_run), highlight=False, soft_wrap=True)
    for path in result.merged[:50]:
        out.print(f"  {'would write' if dry_run else 'wrote'}: {path}", highlight=False, soft_wrap=True)
    for why in result.skipped:
        out.print(f"  skipped: {why}", highlight=False, soft_wrap=True)
    if result.merged and not dry_run:
        # heavy: duckdb, imported when this runs
        from guiforge.catalog import write_catalog

        write_catalog(the_lake)
