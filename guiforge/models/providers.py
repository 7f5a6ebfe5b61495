"""Model providers by name: what a role's ``provider:`` names, besides ``auto`` (a real
model when a key is set, else offline) and ``offline`` (no client: stages use their own
offline builder).

Every provider, guiforge's ``openai`` and ``anthropic`` included, is an entry point of the
``guiforge.providers`` group naming a :class:`~guiforge.models.base.ModelClient` subclass
(built with ``(config, cache)``, implementing ``_send``); ``provider: package.module:Class``
names one directly. A class attribute ``needs_api_key = False`` says it runs without a key.
"""

from __future__ import annotations

import inspect

from guiforge.models.base import ModelClient
from guiforge.plugins import Registry

MODES = ("auto", "offline")  # provider values that name no client


def _is_client(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, ModelClient) and not inspect.isabstract(obj)


PROVIDERS: Registry[type[ModelClient]] = Registry(
    "guiforge.providers", "model provider", "a ModelClient subclass (a concrete one, implementing _send)", _is_client)


def needs_api_key(cls: type[ModelClient]) -> bool:
    return bool(getattr(cls, "needs_api_key", True))
