"""Environments: one interface (acquire, reset, observe, step, evaluate, release) over web,
mobile, desktop and tools adapters, and any environment kind a package registers: an
:class:`EnvKind` owns its facts (guiforge.envs.kind), the ``guiforge.envs`` group names them
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
from guiforge.envs.kind import EnvKind
from guiforge.envs.kinds import ENV_KINDS, RunKinds, adapter_factory, default_factories, kind_of
from guiforge.envs.manager import Deadlines, EnvManager, Lease

__all__ = [
    "ENV_KINDS", "Action", "Criterion", "Deadlines", "EnvFailure", "EnvKind", "EnvManager", "EnvSpec",
    "Environment", "FinalState", "Lease", "Observation", "RunKinds", "StepResult", "TaskSpec",
    "VerifierResult", "action_pixels", "action_set", "adapter_factory", "default_factories",
    "kind_of", "to_grid", "to_pixels",
]
