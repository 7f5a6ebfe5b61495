"""The pipeline file: one YAML document declares a whole run (lake, seed, models per role,
stages and their configs). It is validated completely before anything runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guiforge.errors import ConfigError
from guiforge.lake.fingerprint import fingerprint
from guiforge.models.config import ModelConfig
from guiforge.paths import DEFAULT_PIPELINE
from guiforge.yamlfile import describe_validation_error, line_of, load_yaml

ROLES = ("world_builder", "task_author", "teacher", "judge", "fallback_judge", "relabeler", "diagnoser")


class StageEntry(BaseModel):
    """A stage as declared: ``uses`` names the stage kind (defaults to the stage's name)."""

    model_config = ConfigDict(extra="allow")
    uses: str | None = None


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    description: str = ""
    lake: str = "data/lake"
    seed: int = Field(default=0, ge=0)
    workers: int = Field(default=3, ge=1, le=64, description="shards run at once")
    run_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    stages: dict[str, dict[str, Any]] = Field(min_length=1)


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
        body = self.config.model_dump(exclude={"lake", "run_id", "description"})
        body["models"] = {role: self.model(role).identity() for role in sorted(self.model_roles())}
        return fingerprint(body, 12)

    @property
    def run_id(self) -> str:
        return self.config.run_id or f"{self.config.name}-{self.fingerprint}"

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

    def to_dict(self) -> dict[str, Any]:
        return self.config.model_dump(mode="json")


def load_pipeline(path: str | Path | None = None, lake: str | None = None, run_id: str | None = None) -> Pipeline:
    path = Path(path) if path else DEFAULT_PIPELINE
    data, lines = load_yaml(path)
    return build_pipeline(data, str(path), lines, lake=lake, run_id=run_id)


def build_pipeline(
    data: Any, source: str, lines: dict | None = None, lake: str | None = None, run_id: str | None = None
) -> Pipeline:
    from guiforge.stages.registry import STAGES

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
    for role in config.models:
        if role not in ROLES:
            raise ConfigError(source, f"models.{role}", f"unknown role; roles are {', '.join(ROLES)}",
                              line_of(lines, ("models", role)))

    stages = []
    for name, raw in config.stages.items():
        loc = ("stages", name)
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name):
            raise ConfigError(source, f"stages.{name}", "stage names are lower_snake_case", line_of(lines, loc))
        raw = dict(raw or {})
        kind = raw.pop("uses", None) or name
        cls = STAGES.get(kind)
        if cls is None:
            field = f"stages.{name}.uses" if "uses" in (data["stages"][name] or {}) else f"stages.{name}"
            raise ConfigError(source, field, f"unknown stage kind {kind!r}; known: {', '.join(sorted(STAGES))}",
                              line_of(lines, loc))
        try:
            stage_config = cls.config_model.model_validate(raw)
        except ValidationError as exc:
            raise describe_validation_error(exc, source, lines, loc) from None
        stages.append(cls(name=name, config=stage_config))

    from guiforge.curation.rounds import expand_rounds

    def fail(stage: str, message: str):
        raise ConfigError(source, f"stages.{stage}", message, line_of(lines, ("stages", stage)))

    stages = expand_rounds(stages, fail)  # a bounded resynthesis loop becomes named round stages
    ordered = _order(stages, source, lines)
    pipeline = Pipeline(config, ordered, source)
    pipeline.lines = lines  # for errors found later (preflight) to name the line
    for s in ordered:
        for role in s.model_roles():
            if role not in ROLES:
                raise ConfigError(source, f"stages.{s.name}", f"unknown model role {role!r}")
            try:
                model = pipeline.model(role)
                if not model.offline:
                    model.api_key()  # a missing key is a config error now, not a failure mid-run
            except ValueError as exc:
                raise ConfigError(source, f"models.{role}", str(exc), line_of(lines, ("models", role))) from None
    return pipeline


def _order(stages: list, source: str, lines: dict) -> list:
    """Topological order by tables: a stage runs after every stage producing its inputs."""
    producers: dict[str, list[str]] = {}
    for s in stages:
        for t in s.outputs():
            producers.setdefault(t, []).append(s.name)
    for s in stages:
        for t in s.inputs():
            if t not in producers:
                raise ConfigError(
                    source, f"stages.{s.name}",
                    f"reads table {t!r} but no stage in this pipeline produces it; add a stage that "
                    f"writes {t!r} or remove {s.name!r}",
                    line_of(lines, ("stages", s.name)),
                )
    by_name = {s.name: s for s in stages}
    done: list = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if any(d.name == name for d in done):
            return
        if name in visiting:
            raise ConfigError(source, f"stages.{name}", "stages depend on each other in a cycle",
                              line_of(lines, ("stages", name)))
        visiting.add(name)
        stage = by_name[name]
        for t in stage.inputs():
            # A stage in a resynthesis round reads only its round's producers (curation/rounds.py).
            for p in stage.sources(t, producers[t]) if hasattr(stage, "sources") else producers[t]:
                if p != name:
                    visit(p)
        visiting.discard(name)
        done.append(by_name[name])

    for s in stages:
        visit(s.name)
    return done
