"""The plugin layer: every open registry of guiforge (stages, environment kinds, checks,
model providers, action formats, export formats, acceptance policies, lake tables) reads
one entry-point group and takes ``module:Name`` references, the same way.

A registry lives with the type it holds (``guiforge.stages.registry`` for stage kinds, and
so on); this package only finds, imports and type-checks. It imports nothing of guiforge
but its errors, so every layer can use it.
"""

from guiforge.plugins.groups import GROUPS
from guiforge.plugins.loader import Plugin, PluginError, entry_points, is_reference, load_value
from guiforge.plugins.registry import PluginRef, Registry, refresh


def registered(group: str) -> list[str]:
    """The names ``group``'s entry points register, without importing anything: for a quick
    check of a name where the type it must have lives in a layer above."""
    return sorted({p.name for p in entry_points(group)})


__all__ = ["GROUPS", "Plugin", "PluginError", "PluginRef", "Registry", "entry_points", "is_reference", "load_value",
           "refresh", "registered"]
