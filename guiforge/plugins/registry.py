"""One registry per plugin group: the names its entry points register (guiforge's own
built-ins included, from its pyproject.toml), plus ``module:Name`` references. Whatever a
name resolves to is imported once per process and type-checked before use.

Some groups hold many small things (checks, lake tables): there an entry point may name a
*set*, a mapping of names to objects, and each key is registered under its own name.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from guiforge.plugins.loader import (
    Plugin,
    PluginError,
    entry_points,
    is_reference,
    load_value,
    reference_plugin,
)
from guiforge.plugins.loader import refresh as _refresh_entry_points

T = TypeVar("T")
_registries: weakref.WeakSet[Registry] = weakref.WeakSet()


@dataclass(frozen=True)
class PluginRef:
    """Marks a config field whose value names a plugin of ``group`` (``Annotated[str,
    PluginRef(...)]``): the compile step resolves and type-checks it. ``builtin`` lists
    values that are no plugin (``auto``)."""

    group: str
    builtin: tuple[str, ...] = ()


def describe(obj: object) -> str:
    """What an object is, for a wrong-type error."""
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    if type(obj).__name__ == "module":
        return f"the module {getattr(obj, '__name__', obj)}"
    if callable(obj):
        return f"the function {getattr(obj, '__qualname__', obj)!r}"
    return f"a {type(obj).__name__} object"


class Registry(Generic[T]):
    """Names of ``group`` -> objects of one type. ``accepts(obj)`` says whether a loaded
    object has the right type (``expected`` says which, in words); ``validate(name, obj)``
    may add a check of its own and return the problem in words. With ``sets``, an entry
    point may name a mapping of names to such objects."""

    def __init__(self, group: str, noun: str, expected: str, accepts: Callable[[object], bool],
                 validate: Callable[[str, T], str | None] | None = None, sets: bool = False):
        self.group = group
        self.noun = noun
        self.expected = expected
        self.sets = sets
        self._accepts = accepts
        self._validate = validate
        self._loaded: dict[str, T] = {}
        self._members: dict[str, tuple[Plugin, object]] | None = None  # sets: name -> (record, object)
        self._lock = threading.RLock()
        _registries.add(self)

    def __repr__(self) -> str:
        return f"Registry({self.group!r})"

    def plugins(self) -> dict[str, Plugin]:
        """name -> where it comes from. Two entry points registering one name is an error."""
        if self.sets:
            return {name: plugin for name, (plugin, _) in self._set_members().items()}
        out: dict[str, Plugin] = {}
        for p in entry_points(self.group):
            self._claim(out, p)
        return out

    def _claim(self, out: dict[str, Plugin], p: Plugin) -> None:
        first = out.get(p.name)
        if first is not None and first.value != p.value:
            raise PluginError(
                f"{self.noun} {p.name!r} is registered twice in {self.group}: by {_who(first)} and by {_who(p)}; "
                "uninstall one of them or ask its author to rename it")
        out[p.name] = p

    def _set_members(self) -> dict[str, tuple[Plugin, object]]:
        with self._lock:
            if self._members is not None:
                return self._members
            records: dict[str, Plugin] = {}
            objects: dict[str, object] = {}
            for ep in entry_points(self.group):
                obj = load_value(ep.value, f"{self.noun} set {ep.name!r} (from {_who(ep)})")
                items = obj.items() if isinstance(obj, Mapping) else [(ep.name, obj)]
                for name, member in items:
                    value = f"{ep.value}[{name}]" if isinstance(obj, Mapping) else ep.value
                    self._claim(records, Plugin(self.group, str(name), value, ep.dist, ep.version))
                    objects[str(name)] = member
            self._members = {name: (records[name], objects[name]) for name in records}
            return self._members

    def names(self) -> list[str]:
        return sorted(self.plugins())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.plugins()

    def plugin(self, ref: str) -> Plugin:
        """The record of a registered name or a ``module:Name`` reference."""
        if is_reference(ref):
            return reference_plugin(self.group, ref)
        found = self.plugins().get(ref)
        if found is None:
            raise PluginError(self.unknown(ref))
        return found

    def unknown(self, ref: str) -> str:
        names = self.names()
        if not names:
            return (f"unknown {self.noun} {ref!r}: no {self.group} entry points are installed (guiforge's own are "
                    "missing too): reinstall guiforge with `pip install -e .`")
        return f"unknown {self.noun} {ref!r}; installed: {', '.join(names)} (or module:Name)"

    def get(self, ref: str) -> T:
        """The object ``ref`` names (a registered name or ``module:Name``), type-checked."""
        with self._lock:
            if ref in self._loaded:
                return self._loaded[ref]
        plugin = self.plugin(ref)
        what = f"{self.noun} {ref!r}" + (f" ({plugin.value}, from {_who(plugin)})" if plugin.value != ref else "")
        if self.sets and not is_reference(ref):
            obj = self._set_members()[ref][1]
        else:
            obj = load_value(plugin.value, what)
        if not self._accepts(obj):
            raise PluginError(f"{what} is {describe(obj)}, not {self.expected}")
        problem = self._validate(ref, obj) if self._validate else None  # type: ignore[arg-type]
        if problem:
            raise PluginError(f"{what}: {problem}")
        with self._lock:
            self._loaded.setdefault(ref, obj)  # type: ignore[arg-type]
            return self._loaded[ref]

    def load_all(self) -> dict[str, T | PluginError]:
        """Every registered name loaded (or the reason it cannot be): for ``guiforge plugins``."""
        out: dict[str, T | PluginError] = {}
        for name in self.names():
            try:
                out[name] = self.get(name)
            except PluginError as exc:
                out[name] = exc
        return out

    def forget(self) -> None:
        """Drop what was loaded (after :func:`guiforge.plugins.refresh`, in tests)."""
        with self._lock:
            self._loaded.clear()
            self._members = None


def _who(p: Plugin) -> str:
    return f"{p.dist or 'an unknown distribution'} {p.version or ''}".strip() + f" ({p.value})"


def refresh() -> None:
    """Forget what every registry found and loaded, so a package installed after start-up
    (or removed) is seen."""
    _refresh_entry_points()
    for registry in list(_registries):
        registry.forget()
