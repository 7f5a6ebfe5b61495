"""Environments: one interface (acquire, reset, observe, step, evaluate, release) over web,
mobile, desktop and tools adapters."""

from __future__ import annotations

from importlib import import_module

from guiforge.envs.actions import Action, action_pixels, action_set, to_grid, to_pixels
from guiforge.envs.base import (
    Criterion,
    EnvFailure,
    Environment,
    EnvSpec,
    FinalState,
    Observation,
    StepResult,
    TaskSpec,
    VerifierResult,
)
from guiforge.envs.manager import Deadlines, EnvManager, Lease

# domain -> "module:Class"; imported lazily so that using one domain never loads another's
# heavy dependencies (Playwright, X clients).
ADAPTERS: dict[str, str] = {
    "web": "guiforge.envs.web:WebEnv",
    "mobile": "guiforge.envs.web:MobileEnv",
    "desktop": "guiforge.envs.desktop:DesktopEnv",
    "tools": "guiforge.envs.tools:ToolsEnv",
}


def adapter_factory(domain: str):
    module, _, cls = ADAPTERS[domain].partition(":")
    return getattr(import_module(module), cls)


def default_factories() -> dict:
    return {domain: (lambda spec, d=domain: adapter_factory(d)(spec)) for domain in ADAPTERS}


__all__ = [
    "ADAPTERS", "Action", "Criterion", "Deadlines", "EnvFailure", "EnvManager", "EnvSpec",
    "Environment", "FinalState", "Lease", "Observation", "StepResult", "TaskSpec",
    "VerifierResult", "action_pixels", "action_set", "adapter_factory", "default_factories",
    "to_grid", "to_pixels",
]
