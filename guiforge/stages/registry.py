"""Stage kinds by name: what ``stages.<name>.uses`` (or the stage's name) refers to.

Every kind, guiforge's own included, is an entry point of the ``guiforge.stages`` group
(see pyproject.toml); ``uses: package.module:Class`` names one directly.
"""

from __future__ import annotations

import inspect

from guiforge.plugins import Registry
from guiforge.stages.base import Stage, StageConfig


def _is_stage(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, Stage) and not inspect.isabstract(obj)


def _check_stage(name: str, cls: type[Stage]) -> str | None:
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not kind:
        return "the class sets no `kind`"
    config_model = getattr(cls, "config_model", None)
    if not (isinstance(config_model, type) and issubclass(config_model, StageConfig)):
        return "its `config_model` is not a StageConfig subclass"
    if ":" not in name and kind != name:
        return f"registered as {name!r} but the class says kind {kind!r}; make them the same"
    return None


STAGES: Registry[type[Stage]] = Registry(
    "guiforge.stages", "stage kind", "a Stage subclass (a concrete one, with kind and config_model)",
    _is_stage, _check_stage)
