"""The compile step's plugin checks (see compile.py): every config field that names a plugin
(``Annotated[str, PluginRef(group)]``: providers, action formats, export formats, acceptance
policies, environment kinds) resolves in its group's registry to an object of the right
type, and every model a stage calls can be reached (its provider loads, its key is set)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from guiforge.config import ROLES
from guiforge.envs.kinds import ENV_KINDS, resolve_kind
from guiforge.envs.service.kind import host_problem
from guiforge.export.formats import EXPORT_FORMATS
from guiforge.harness.formats import ACTION_FORMATS
from guiforge.judge.accept import ACCEPTANCE
from guiforge.lake.tables import TABLES
from guiforge.models.providers import MODES, PROVIDERS, needs_api_key
from guiforge.orchestration.compile_where import Where
from guiforge.orchestration.pipeline import Pipeline
from guiforge.plugins import PluginError, PluginRef, Registry
from guiforge.stages.registry import STAGES
from guiforge.verify.registry import CHECKS, declared_checks
from guiforge.yamlfile import Loc

REGISTRIES: dict[str, Registry] = {r.group: r for r in (
    STAGES, ENV_KINDS, CHECKS, PROVIDERS, ACTION_FORMATS, EXPORT_FORMATS, ACCEPTANCE, TABLES)}


def _marker(annotation: Any) -> PluginRef | None:
    """The PluginRef inside an annotation (``Annotated[str, PluginRef]``, maybe in a list or
    an optional), or None."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, PluginRef):
            return meta
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _marker(arg)
            if found:
                return found
    return None


def plugin_refs(model: BaseModel, loc: Loc = ()) -> Iterator[tuple[Loc, PluginRef, str]]:
    """(field path, marker, value) for every plugin name in a config, nested models included."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        marker = _marker(info.rebuild_annotation())
        if marker is not None:
            if isinstance(value, str):
                yield (*loc, name), marker, value
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        yield (*loc, name, i), marker, item
        elif isinstance(value, BaseModel):
            yield from plugin_refs(value, (*loc, name))


def resolve(marker: PluginRef, value: str) -> object | None:
    """The plugin ``value`` names in ``marker``'s group (None for a built-in mode like auto)."""
    if value in marker.builtin:
        return None
    return REGISTRIES[marker.group].get(value)


def check_stage_plugins(stages: list, where: Where) -> None:
    """Resolve and type-check every plugin a stage's config names."""
    seen: set[str] = set()
    for s in stages:
        name = where.declared(s.name)
        if name in seen:  # a round's copy has its original's config
            continue
        seen.add(name)
        for loc, marker, value in plugin_refs(s.config):
            try:
                resolve(marker, value)
            except PluginError as exc:
                where.fail(("stages", name, *loc), str(exc))


def check_models(pipeline: Pipeline, where: Where) -> None:
    """Every model: its provider and action format resolve. Every role a stage calls: known,
    and its API key set (a missing key is a config error now, not a failure mid-run)."""
    for role, declared in pipeline.config.models.items():
        for loc, marker, value in plugin_refs(declared):
            try:
                resolve(marker, value)
            except PluginError as exc:
                where.fail(("models", role, *loc), str(exc))
    for s in pipeline.stages:
        for role in s.model_roles():
            if role not in ROLES:
                where.fail(("stages", s.name), f"unknown model role {role!r}")
            try:
                model = pipeline.model(role)
                if model.provider in MODES:
                    continue
                try:
                    client = PROVIDERS.get(model.provider)
                except PluginError as exc:
                    where.fail(("models", role, "provider"), str(exc))
                if needs_api_key(client):
                    model.api_key()
            except ValueError as exc:
                where.fail(("models", role), str(exc))


def check_envs_and_checks(pipeline: Pipeline, where: Where) -> None:
    """Every kind ``envs:`` names resolves to an EnvKind serving that domain, and every check
    plugin ``checks:`` names imports as a check function or a mapping of them."""
    hosts = pipeline.config.env_hosts
    for i, url in enumerate(hosts.hosts if hosts else ()):
        if (problem := host_problem(url)) is not None:
            where.fail(("envs", i) if isinstance(pipeline.config.envs, list) else ("envs", "hosts", i), problem)
    for domain, ref in (pipeline.config.envs.items() if isinstance(pipeline.config.envs, dict) else ()):
        try:
            kind = resolve_kind(ref)
        except PluginError as exc:
            where.fail(("envs", domain), str(exc))
        if kind.domain != domain:
            where.fail(("envs", domain), f"environment kind {ref!r} serves domain {kind.domain!r}, not {domain!r}; "
                                         f"give it under envs.{kind.domain} or name a kind for {domain!r}")
    for i, ref in enumerate(pipeline.config.checks):
        try:
            declared_checks(ref)
        except PluginError as exc:
            where.fail(("checks", i), str(exc))
