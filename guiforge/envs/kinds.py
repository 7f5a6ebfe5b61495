"""Environment kinds by name: the domain a task names (web, mobile, desktop, tools, or one
an installed package adds) -> the adapter class that serves it. Each is an entry point of
the ``guiforge.envs`` group, guiforge's own four too; a kind's module is imported only when
a task of that kind runs (Playwright and X clients stay unloaded otherwise)."""

from __future__ import annotations

import inspect

from guiforge.envs.base import Environment
from guiforge.plugins import Registry


def _is_adapter(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, Environment) and not inspect.isabstract(obj)


ENV_KINDS: Registry[type[Environment]] = Registry(
    "guiforge.envs", "environment kind", "an Environment subclass (guiforge.envs.base)", _is_adapter)


def adapter_factory(domain: str) -> type[Environment]:
    return ENV_KINDS.get(domain)


def default_factories() -> dict:
    """domain -> factory(spec) for every installed environment kind (each loaded on first use)."""
    return {domain: (lambda spec, d=domain: adapter_factory(d)(spec)) for domain in ENV_KINDS.names()}
