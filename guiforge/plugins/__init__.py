"""The plugin layer: every open registry of guiforge (stages, environment kinds, checks,
model providers, action formats, export formats, acceptance policies, lake tables) reads
one entry-point group and takes ``module:Name`` references, the same way.

A registry lives with the type it holds (``guiforge.stages.registry`` for stage kinds, and
so on); this package only finds, imports and type-checks. It imports nothing of guiforge
but its errors, so every layer can use it.
"""

from guiforge.plugins.groups import GROUPS
from guiforge.plugins.loader import (
           Plugin,
           PluginError,
           entry_points,
           is_reference,
           load_value,
           refresh,
)
from guiforge.plugins.registry import PluginRef, Registry

__all__ = ["GROUPS", "Plugin", "PluginError", "PluginRef", "Registry", "entry_points", "is_reference", "load_value",
           "refresh"]
