"""Every tool module, imported once: their ``@tool`` decorators fill ``REGISTRY``."""

from __future__ import annotations

from guiforge.envs.tools import (  # noqa: F401
    coding,
    currency,
    dates,
    images,
    lookup,
    search,
    tables,
    text,
    units,
)
from guiforge.envs.tools.registry import REGISTRY


def areas() -> dict[str, list[str]]:
    """Tool names per area."""
    out: dict[str, list[str]] = {}
    for t in REGISTRY.values():
        out.setdefault(t.area, []).append(t.name)
    return out
