"""One registry per plugin group: the names its entry points register (guiforge's own
built-ins included, from its pyproject.toml), plus ``module:Name`` references. Whatever a
name resolves to is imported once per process and type-checked before use."""

from __future__ import annotations

import threading
from collections.abc import Callable
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

T = TypeVar("T")


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
    if callable(obj):
        return f"the function {getattr(obj, '__qualname__', obj)!r}"
    if type(obj).__name__ == "module":
        return f"the module {getattr(obj, '__name__', obj)}"
    return f"a {type(obj).__name__} object"


class Registry(Generic[T]):
    """Names of ``group`` -> objects of one type. ``accepts(obj)`` says whether a loaded
    object has the right type (``expected`` says which, in words); ``validate(name, obj)``
    may add a check of its own and return the problem in words."""

    def __init__(self, group: str, noun: str, expected: str, accepts: Callable[[object], bool],
                 validate: Callable[[str, T], str | None] | None = None):
        self.group = group
        self.noun = noun
        self.expected = expected
        self._accepts = accepts
        self._validate = validate
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Registry({self.group!r})"

    def plugins(self) -> dict[str, Plugin]:
        """name -> where it comes from. Two distributions registering one name is an error."""
        out: dict[str, Plugin] = {}
        for p in entry_points(self.group):
            if p.name in out and out[p.name].value != p.value:
                first = out[p.name]
                raise PluginError(
                    f"{self.noun} {p.name!r} is registered twice in {self.group}: by {_who(first)} and by "
                    f"{_who(p)}; uninstall one of them or ask its author to rename it")
            out[p.name] = p
        return out

    def names(self) -> list[str]:
        return sorted(self.plugins())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.plugins()

    def plugin(self, ref: str) -> Plugin:
        """The record of a registered name or a ``module:Name`` reference (no import)."""
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


def _who(p: Plugin) -> str:
    return f"{p.dist or 'an unknown distribution'} {p.version or ''}".strip() + f" ({p.value})"
