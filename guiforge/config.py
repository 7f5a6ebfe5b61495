"""The pipeline file as plain data: one YAML document declares a whole run (lake, seed,
models per role, stages and their configs). This module only reads and validates the
document's own shape; resolving stage kinds and plugins, unrolling rounds and ordering the
DAG is the compile step's job (guiforge.orchestration.compile), and nothing here imports it."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guiforge.errors import ConfigError
from guiforge.faults.config import FaultsConfig
from guiforge.models.config import ModelConfig
from guiforge.yamlfile import describe_validation_error, line_of

ROLES = ("world_builder", "task_author", "teacher", "judge", "fallback_judge", "relabeler", "diagnoser")


class StageEntry(BaseModel):
    """A stage as declared: ``uses`` names the stage kind (defaults to the stage's name)."""

    model_config = ConfigDict(extra="allow")
    uses: str | None = None


class RayConfig(BaseModel):
    """Where ``executor: ray`` runs shards: one Ray cluster for the whole run."""

    model_config = ConfigDict(extra="forbid")
    address: str | None = Field(default=None, description="a running cluster (host:port, ray://host:10001, auto); "
                                                          "null: a local cluster started for the run")
    # stage name (or kind) -> what each of its shards asks Ray for: num_cpus, num_gpus, memory,
    # or a custom resource a node offers (`ray start --resources '{"desktop": 4}'`: desktop slots)
    resources: dict[str, dict[str, float]] = Field(default_factory=dict)


class EnvHosts(BaseModel):
    """Env hosts (``guiforge envs serve``) with how this run leases their instances."""

    model_config = ConfigDict(extra="forbid")
    hosts: list[str] = Field(min_length=1, description="http://host:port of each env host")
    # a lease its client stops using is freed after this long (a crashed worker's instances
    # come back to the pool): longer than the slowest step a teacher takes
    lease_ttl_s: float = Field(default=300.0, gt=0, le=86400, description="an idle lease is freed after this")
    acquire_s: float = Field(default=45.0, gt=0, le=3600,
                             description="how long to wait for a free instance before the episode is an env_failure")


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    description: str = ""
    lake: str = "data/lake"
    seed: int = Field(default=0, ge=0)
    workers: int = Field(default=3, ge=1, le=64, description="shards run at once (prefect, local)")
    executor: Literal["prefect", "local", "ray"] = Field(default="prefect", description="what runs the shards; "
                                                         "`guiforge run --executor` overrides it")
    ray: RayConfig = Field(default_factory=RayConfig)
    run_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    stages: dict[str, dict[str, Any]] = Field(min_length=1)
    # a stage whose share of failed units (guiforge.failures) passes this stops the run
    max_failure_share: float | None = Field(default=0.5, ge=0, le=1, description="per stage; null: never stop")
    faults: FaultsConfig | None = Field(default=None, description="fault injection (guiforge.faults); off by default")
    # environment kinds and check plugins (guiforge.envs.kind, guiforge.verify.registry): a
    # domain given another kind than the one registered under its name, or a list of env
    # hosts (`guiforge envs serve`) whose pools serve the domains they declare; and the checks
    # the verifier worker loads besides the installed ones; the compile step resolves both
    envs: dict[str, str] | list[str] | EnvHosts = Field(
        default_factory=dict, description="domain -> environment kind (name or module:Name), "
                                          "or env hosts [http://host:port, ...] "
                                          "(or {hosts: [...], lease_ttl_s, acquire_s})")
    checks: list[str] = Field(default_factory=list, description="check plugins to load (module:Name)")

    @property
    def env_hosts(self) -> EnvHosts | None:
        """The env hosts ``envs:`` lists (either form), or None when instances are local."""
        if isinstance(self.envs, list):
            return EnvHosts(hosts=self.envs) if self.envs else None
        return self.envs if isinstance(self.envs, EnvHosts) else None


def parse_config(data: Any, source: str, lines: dict | None = None, lake: str | None = None,
                 run_id: str | None = None, executor: str | None = None, ray_address: str | None = None) -> PipelineConfig:
    """``data`` (a parsed pipeline file) as a PipelineConfig, with ``lake`` and ``run_id``
    overriding the file's; errors name ``source``, the field and its line."""
    lines = lines or {}
    if not isinstance(data, dict):
        raise ConfigError(source, "", "the pipeline file must be a YAML mapping (name, lake, seed, models, stages)")
    try:
        config = PipelineConfig.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc, source, lines) from None
    if lake:
        config.lake = lake
    if run_id:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}", run_id):
            raise ConfigError(source, "run_id", f"{run_id!r} is not a valid run id (letters, digits, _ . -)")
        config.run_id = run_id
    if ray_address:
        if (executor or "ray") != "ray":
            raise ConfigError(source, "executor", f"--ray-address needs --executor ray, not {executor}")
        executor, config.ray.address = "ray", ray_address
    if executor:
        if executor not in ("prefect", "local", "ray"):
            raise ConfigError(source, "executor", f"{executor!r} is not one of prefect, local, ray")
        config.executor = executor
    for role in config.models:
        if role not in ROLES:
            raise ConfigError(source, f"models.{role}", f"unknown role; roles are {', '.join(ROLES)}",
                              line_of(lines, ("models", role)))
    for name in config.stages:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name):
            raise ConfigError(source, f"stages.{name}", "stage names are lower_snake_case",
                              line_of(lines, ("stages", name)))
    return config
