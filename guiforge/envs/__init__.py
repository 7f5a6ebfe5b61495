"""Environments: one interface (acquire, reset, observe, step, evaluate, release) over web,
mobile, desktop and tools adapters, and any environment kind a package registers
(guiforge.envs.kinds)."""

from __future__ import annotations

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
from guiforge.envs.kinds import ENV_KINDS, adapter_factory, default_factories
from guiforge.envs.manager import Deadlines, EnvManager, Lease

__all__ = [
    "ENV_KINDS", "Action", "Criterion", "Deadlines", "EnvFailure", "EnvManager", "EnvSpec",
    "Environment", "FinalState", "Lease", "Observation", "StepResult", "TaskSpec",
    "VerifierResult", "action_pixels", "action_set", "adapter_factory", "default_factories",
    "to_grid", "to_pixels",
]
