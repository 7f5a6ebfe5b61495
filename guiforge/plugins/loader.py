"""Finding and importing plugins: the entry points of one group, and ``module:Name``
references, each turned into the object it names or into one line saying why not."""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import threading
from dataclasses import dataclass
from functools import cache

from guiforge.errors import GuiforgeError

_lock = threading.RLock()  # a plugin module may look another plugin up while it loads


class PluginError(GuiforgeError):
    """A plugin that cannot be used: missing module, wrong type, name clash. One line."""


@dataclass(frozen=True)
class Plugin:
    """One registered object: where it comes from (``module:attr``) and who ships it."""

    group: str
    name: str
    value: str
    dist: str | None = None
    version: str | None = None

    def identity(self) -> dict[str, str | None]:
        """What names this plugin's code: enough to notice an upgrade."""
        return {"name": self.name, "value": self.value, "dist": self.dist, "version": self.version}


def is_reference(text: str) -> bool:
    """``package.module:Name``: an object named directly rather than by a registered name."""
    module, sep, attr = text.partition(":")
    return bool(sep) and bool(module) and bool(attr) and all(p.isidentifier() for p in (*module.split("."),
                                                                                        *attr.split(".")))


@cache
def entry_points(group: str) -> tuple[Plugin, ...]:
    """Every entry point of ``group`` in the installed distributions (one per distribution:
    importlib.metadata already drops a distribution found twice on the path)."""
    found = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        found.append(Plugin(group, ep.name, ep.value, dist.name if dist else None, dist.version if dist else None))
    return tuple(sorted(found, key=lambda p: (p.name, p.dist or "")))


def refresh() -> None:
    """Forget what was found, so a package installed after start-up is seen."""
    importlib.invalidate_caches()
    entry_points.cache_clear()
    _distribution_of.cache_clear()


@cache
def _distribution_of(top_module: str) -> tuple[str | None, str | None]:
    names = metadata.packages_distributions().get(top_module) or []
    if not names:
        return None, None
    try:
        return names[0], metadata.version(names[0])
    except metadata.PackageNotFoundError:
        return names[0], None


def reference_plugin(group: str, ref: str) -> Plugin:
    """The record of a ``module:Name`` reference, with the distribution that ships its module."""
    dist, version = _distribution_of(ref.partition(":")[0].split(".")[0])
    return Plugin(group, ref, ref, dist, version)


def load_value(value: str, what: str) -> object:
    """Import ``module:attr`` (``attr`` may be dotted) and return the object. ``what`` names
    it in the error: ``stage kind 'x'``."""
    module_name, _, attr = value.partition(":")
    with _lock:  # one plugin import at a time: a half-made module is never handed out
        try:
            obj: object = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = exc.name or module_name
            hint = "install the package that provides it" if missing.split(".")[0] == module_name.split(".")[0] \
                else f"it needs {missing!r}: install that"
            raise PluginError(f"{what}: no module named {missing!r} ({value}); {hint}") from None
        except Exception as exc:  # noqa: BLE001 - whatever a plugin's import raises is the plugin's fault
            first = (str(exc).strip().splitlines() or [""])[0]
            raise PluginError(f"{what}: importing {module_name!r} failed: {type(exc).__name__}: {first}") from None
    for part in attr.split(".") if attr else []:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"{what}: module {module_name!r} has no {attr!r} ({value}); check the name") from None
    return obj
