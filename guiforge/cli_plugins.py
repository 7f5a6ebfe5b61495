"""``guiforge plugins``: what is installed in every plugin group, from which distribution
and version; ``--check`` also imports each one and type-checks it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from guiforge.errors import GuiforgeError
from guiforge.orchestration.compile_plugins import REGISTRIES
from guiforge.plugins import GROUPS, PluginError, entry_points, load_value

out = Console()


def plugins(
    check: Annotated[bool, typer.Option("--check", help="import every plugin and check its type")] = False,
    group: Annotated[str | None, typer.Option("--group", help="only this group (guiforge.stages, ...)")] = None,
) -> None:
    """List the installed plugins by group: stage kinds, environment kinds, checks, model
    providers, action formats, export formats, acceptance policies, lake tables."""
    if group and group not in GROUPS:
        raise GuiforgeError(f"--group: {group!r} is not a plugin group; groups: {', '.join(GROUPS)}")
    problems = 0
    for name, what in GROUPS.items():
        if group and name != group:
            continue
        table = Table(title=f"{name}: {what}", title_justify="left")
        for col in ("name", "object", "distribution", "version", *(["check"] if check else [])):
            table.add_column(col)
        registry = REGISTRIES[name]
        for p in entry_points(name):
            row = [p.name, p.value, p.dist or "-", p.version or "-"]
            if check:
                verdict = _check(registry, p.name, p.value)
                problems += not verdict.startswith("ok")
                row.append(verdict)
            table.add_row(*row)
        out.print(table)
    if problems:
        raise GuiforgeError(f"{problems} plugin(s) failed their check (see the check column)")


def _check(registry, name: str, value: str) -> str:
    """'ok', 'ok: N checks' for a set, or why the plugin cannot be used."""
    try:
        if registry.sets:
            obj = load_value(value, f"{registry.noun} set {name!r}")
            members = list(obj) if isinstance(obj, Mapping) else [name]
            for member in members:
                registry.get(member)
            return f"ok: {len(members)} {registry.noun}s" if isinstance(obj, Mapping) else "ok"
        registry.get(name)
        return "ok"
    except PluginError as exc:
        return f"error: {exc}"
