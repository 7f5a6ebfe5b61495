"""Fault injection declared in the pipeline file (``faults:``, off by default): environments
that crash, hang or lose their page, model endpoints that misbehave, verifiers that crash
or hang, at seeded rates. Every injected fault must come back as a row of its failure kind
(:mod:`guiforge.failures`); the injections of a run are logged beside its lake
(:mod:`guiforge.faults.log`)."""

from guiforge.faults.config import EnvFaults, FaultsConfig, ModelFaults, VerifierFaults
from guiforge.faults.plan import Injection, Injector, carried, inject, shard_faults, unit

__all__ = ["EnvFaults", "FaultsConfig", "Injection", "Injector", "ModelFaults", "VerifierFaults", "carried",
           "inject", "shard_faults", "unit"]
