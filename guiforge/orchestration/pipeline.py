"""A compiled pipeline: its config plus one configured Stage object per stage, in dependency
order (orchestration/compile.py makes it); what the engine, the runner and the Prefect flows
run, and what names the run (its fingerprint and run id)."""

from __future__ import annotations

from typing import Any

from guiforge.config import PipelineConfig
from guiforge.envs.kinds import RunKinds
from guiforge.envs.service.kind import RemoteKinds
from guiforge.lake.fingerprint import fingerprint
from guiforge.models.config import ModelConfig


class Pipeline:
    """A validated pipeline: its config plus one configured Stage object per stage, in
    dependency order."""

    def __init__(self, config: PipelineConfig, stages: list, source: str):
        self.config = config
        self.stages = stages
        self.source = source

    @property
    def fingerprint(self) -> str:
        # The lake location and explicit run id do not change what a run computes.
        # Neither does the failure share that stops a run, nor what runs the shards (the same
        # rows on every executor); injected faults do, where declared. Kinds and checks a
        # pipeline does not declare leave its fingerprint as it was.
        empty = {k for k in ("envs", "checks") if not getattr(self.config, k)}
        if self.config.env_hosts is not None or isinstance(self.config.envs, list):
            empty.add("envs")  # env hosts: where instances run, not what a run computes
        body = self.config.model_dump(exclude={"lake", "run_id", "description", "max_failure_share", "faults",
                                               "executor", "ray", *empty})
        if self.config.faults is not None and self.config.faults.enabled:
            body["faults"] = self.config.faults.model_dump()
        body["models"] = {role: self.model(role).identity() for role in sorted(self.model_roles())}
        return fingerprint(body, 12)

    @property
    def run_id(self) -> str:
        return self.config.run_id or f"{self.config.name}-{self.fingerprint}"

    def kinds(self) -> RunKinds:
        """The environment kinds this run uses, by domain (the pipeline's ``envs:``, else the
        kind registered under the domain's name; with env hosts listed, the same kinds with
        their instances on the hosts)."""
        hosts = self.config.env_hosts
        if hosts is not None:
            return RemoteKinds(hosts.hosts, lease_ttl_s=hosts.lease_ttl_s, acquire_s=hosts.acquire_s)
        return RunKinds(self.config.envs if isinstance(self.config.envs, dict) else {})

    def model_roles(self) -> set[str]:
        return set(self.config.models) | {r for s in self.stages for r in s.model_roles()}

    def model(self, role: str) -> ModelConfig:
        return self.config.models.get(role, ModelConfig()).resolved()

    def stage(self, name: str):
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def producers(self) -> dict[str, list[str]]:
        """table -> the stages that write it, in run order (exclusions: many stages)."""
        out: dict[str, list[str]] = {}
        for s in self.stages:
            for t in s.outputs():
                out.setdefault(t, []).append(s.name)
        return out

    def readers(self, table: str, producer: str) -> list:
        """The stages that read ``table`` from stage ``producer`` (a round's stage reads only
        its round's producers)."""
        producers = self.producers().get(table, [])
        return [s for s in self.stages if table in s.inputs()
                and producer in (s.sources(table, producers) if hasattr(s, "sources") else producers)]

    def to_dict(self) -> dict[str, Any]:
        return self.config.model_dump(mode="json")
