"""The compile step: a pipeline file's data -> a runnable :class:`Pipeline`.

The config (guiforge.config) is plain data; here its names become objects and every
reference is checked before anything runs, the same way in the CLI, on the local executor
and in every Prefect worker process (flows/dag.py rebuilds a pipeline through
:func:`build_pipeline`):

1. stage kinds (``uses:`` or the stage's name) resolve through the stage registry and
   their configs validate;
2. plugins: every name a config field gives a plugin group (export formats, acceptance
   policies, environment kinds, action formats) resolves and has the right type
   (compile_plugins.py);
3. a bounded resynthesis loop unrolls into named round stages (orchestration/rounds.py);
4. tables: every table a stage writes has a schema, every table a stage reads has a
   producer, and the DAG is ordered (compile_graph.py);
5. columns: every column a stage declares it reads exists, and its producers write it;
6. models: every role's provider and action format resolve, and a missing API key is an
   error now, not mid-run;
7. environment kinds (``envs:``) and check plugins (``checks:``) resolve and have the right
   type.

Errors are one line naming the file, the field and its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guiforge.config import parse_config
from guiforge.orchestration.compile_graph import check_columns, declare_tables, order
from guiforge.orchestration.compile_plugins import (
    check_envs_and_checks,
    check_models,
    check_stage_plugins,
)
from guiforge.orchestration.compile_where import Where
from guiforge.orchestration.pipeline import Pipeline
from guiforge.orchestration.rounds import expand_rounds
from guiforge.paths import DEFAULT_PIPELINE
from guiforge.plugins import PluginError
from guiforge.stages.base import Stage
from guiforge.stages.registry import STAGES
from guiforge.yamlfile import describe_validation_error, load_yaml


def load_pipeline(path: str | Path | None = None, lake: str | None = None, run_id: str | None = None,
                  **overrides: str | None) -> Pipeline:
    """The pipeline file at ``path`` compiled; ``lake``, ``run_id`` and ``overrides``
    (``executor``, ``ray_address``: the command line's) win over the file's."""
    path = Path(path) if path else DEFAULT_PIPELINE
    data, lines = load_yaml(path)
    return build_pipeline(data, str(path), lines, lake=lake, run_id=run_id, **overrides)


def build_pipeline(
    data: Any, source: str, lines: dict | None = None, lake: str | None = None, run_id: str | None = None,
    executor: str | None = None, ray_address: str | None = None,
) -> Pipeline:
    lines = lines or {}
    config = parse_config(data, source, lines, lake=lake, run_id=run_id, executor=executor, ray_address=ray_address)
    where = Where(source, lines, config)
    stages = [make_stage(name, raw, data["stages"][name], where) for name, raw in config.stages.items()]
    check_stage_plugins(stages, where)
    # a bounded resynthesis loop becomes named round stages
    stages = expand_rounds(stages, lambda stage, message: where.fail(("stages", stage), message))
    declare_tables(stages, where)
    check_resources(config, stages, where)
    ordered = order(stages, where)
    check_columns(ordered, where)
    pipeline = Pipeline(config, ordered, source)
    pipeline.lines = lines  # for errors found later (preflight) to name the line
    check_models(pipeline, where)
    check_envs_and_checks(pipeline, where)
    return pipeline


def make_stage(name: str, raw: dict[str, Any] | None, declared: Any, where: Where) -> Stage:
    """One configured stage: its kind resolved (type-checked) and its config validated."""
    raw = dict(raw or {})
    kind = raw.pop("uses", None) or name
    try:
        cls = STAGES.get(kind)
    except PluginError as exc:
        where.fail(("stages", name, "uses") if "uses" in (declared or {}) else ("stages", name), str(exc))
    try:
        stage_config = cls.config_model.model_validate(raw)
    except ValidationError as exc:
        raise describe_validation_error(exc, where.source, where.lines, ("stages", name)) from None
    return cls(name=name, config=stage_config)


def check_resources(config, stages: list, where: Where) -> None:
    """Every stage ``ray.resources`` names is a stage of the pipeline (by name or kind)."""
    known = {s.name for s in stages} | {s.kind for s in stages}
    for name in config.ray.resources:
        if name not in known:
            where.fail(("ray", "resources", name), f"no stage or stage kind {name!r} in this pipeline; "
                       f"stages are {', '.join(s.name for s in stages)}")
