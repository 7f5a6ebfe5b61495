"""Checks by name: what a rubric criterion's ``check.fn`` names. Each is an entry point of
the ``guiforge.checks`` group: a check function (registered under the entry point's name),
or a mapping of names to check functions (a set: guiforge's own are the set ``guiforge``,
verify/checks.py's ``CHECKS``). A check takes the final state and the criterion's
arguments; it reads the state, never the screen."""

from __future__ import annotations

from collections.abc import Callable

from guiforge.plugins import PluginError, Registry

CHECKS: Registry[Callable[..., object]] = Registry(
    "guiforge.checks", "check", "a check function (state, **arguments)", callable, sets=True)


def find_check(name: str | None) -> Callable[..., object] | None:
    """The check called ``name``, or None if no installed package registers it."""
    if not name or name not in CHECKS:
        return None
    try:
        return CHECKS.get(name)
    except PluginError:
        return None


def check_names() -> list[str]:
    return CHECKS.names()
