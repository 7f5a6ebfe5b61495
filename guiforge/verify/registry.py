"""Checks by name: what a rubric criterion's ``check.fn`` names. Each is an entry point of
the ``guiforge.checks`` group: a check function (registered under the entry point's name),
or a mapping of names to check functions (a set: guiforge's own are the set ``guiforge``,
verify/checks.py's ``CHECKS``). A run may also declare checks in its pipeline file
(``checks: [package.module:NAME]``, a function or such a mapping), which the verifier worker
loads before it scores (:func:`declare`); a criterion may name a check as ``module:Name``
too. A check takes the final state and the criterion's arguments; it reads the state, never
the screen, and returns a bool, a number in [0, 1] or ``(value, reason)``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from guiforge.plugins import PluginError, Registry, is_reference, load_value

CHECKS: Registry[Callable[..., object]] = Registry(
    "guiforge.checks", "check", "a check function (state, **arguments)", callable, sets=True)

_declared: dict[str, Callable[..., object]] = {}  # this process's declared checks, by name
_loaded: set[str] = set()
_lock = threading.Lock()


def declared_checks(ref: str) -> dict[str, Callable[..., object]]:
    """name -> check for one declared plugin: a mapping's items, or a function under its
    own name (and under ``ref``)."""
    obj = load_value(ref, f"check plugin {ref!r}")
    if isinstance(obj, Mapping):
        bad = [str(k) for k, v in obj.items() if not callable(v)]
        if bad:
            raise PluginError(f"check plugin {ref!r}: {bad[0]!r} is not a check function")
        return {str(k): v for k, v in obj.items()}
    if callable(obj):
        return {ref.rpartition(":")[2].split(".")[-1]: obj, ref: obj}
    raise PluginError(f"check plugin {ref!r} is a {type(obj).__name__}, not a check function or a mapping of them")


def declare(refs: tuple[str, ...] | list[str]) -> None:
    """Load the run's declared check plugins into this process (once each). A declared name
    that an installed package already registers is an error: a rubric would be ambiguous."""
    for ref in refs:
        with _lock:
            if ref in _loaded:
                continue
        found = declared_checks(ref)
        for name, fn in found.items():
            if name != ref and name in CHECKS and CHECKS.get(name) is not fn:
                owner = CHECKS.plugin(name).dist or "an installed package"
                raise PluginError(f"check plugin {ref!r} declares {name!r}, which {owner} already registers; rename it")
        with _lock:
            _declared.update(found)
            _loaded.add(ref)


def find_check(name: str | None) -> Callable[..., object] | None:
    """The check called ``name`` (declared, installed, or a ``module:Name``), or None."""
    if not name:
        return None
    with _lock:
        if name in _declared:
            return _declared[name]
    if not is_reference(name) and name not in CHECKS:
        return None
    try:
        return CHECKS.get(name)
    except PluginError:
        return None


def check_names() -> list[str]:
    with _lock:
        return sorted(set(CHECKS.names()) | {n for n in _declared if not is_reference(n)})
