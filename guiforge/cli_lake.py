"""``guiforge lake check`` and ``guiforge lake gc``: verify a lake, remove what nothing uses."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from guiforge.errors import GuiforgeError

lake_app = typer.Typer(help="Check a lake's files against its manifests; collect unused files.",
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
          limit: Annotated[int, typer.Option(help="problems to list at most")] = 20) -> None:
    """Every manifest entry's file exists with its recorded size and sha256, every image a
    row refers to is stored, no file is outside the manifests. Exit 1 on any problem."""
    # heavy: numpy, imported when this runs
    from guiforge.lake.check import check_lake

    the_lake = _lake(lake)
    report = check_lake(the_lake)
    out.print(report.verdict(the_lake), highlight=False, soft_wrap=True)
    for problem in report.problems[:limit]:
        out.print(f"  {problem}", highlight=False, soft_wrap=True)
    if len(report.problems) > limit:
        out.print(f"  ... and {len(report.problems) - limit} more", highlight=False)
    if not report.ok:
        raise typer.Exit(1)


@lake_app.command("gc")
def gc(lake: LakeOpt = None,
       dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would go, delete nothing")] = False) -> None:
    """Mark and sweep: delete files no manifest lists (half-written or left by a killed run)
    unless a committed row refers to their content; runs being written are left alone."""
    # heavy: numpy, imported when this runs
    from guiforge.lake.gc import collect

    the_lake = _lake(lake)
    try:
        result = collect(the_lake, dry_run=dry_run)
    except PermissionError as exc:
        raise GuiforgeError(f"lake {the_lake.uri}: cannot delete {exc.filename}: {exc.strerror}") from None
    verb = "would delete" if dry_run else "deleted"
    out.print(f"lake gc: {the_lake.uri}: {verb} {len(result.deleted)} file(s), kept {len(result.kept)} "
              "referenced content file(s)", highlight=False, soft_wrap=True)
    for path in result.deleted[:50]:
        out.print(f"  {verb}: {the_lake.relative(path)}", highlight=False, soft_wrap=True)
