"""What several stages read and hold the same way: the run's worlds (by id, loaded once per
process), the run's environment manager (warm instances carry over between stages) and the
resynthesis round a stage runs in."""

from __future__ import annotations

import pyarrow as pa

from guiforge.envs import EnvManager
from guiforge.verify.runner import VerifierPool


def load_worlds(ctx, path: str) -> dict:
    """world_id -> World for one shard of the worlds table."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.model import World

    table = ctx.lake.read_shard(path, columns=["world_id", "world_json"])
    return {wid: World.model_validate_json(js) for wid, js in zip(table.column("world_id").to_pylist(),
                                                                  table.column("world_json").to_pylist(), strict=True)}


def read_with_optional(lake, path: str, columns: list[str], optional: list[str]) -> pa.Table:
    """One shard's ``columns`` and those of ``optional`` it has (a shard written before a
    column existed lacks it; readers then see it missing, never an error)."""
    try:
        return lake.read_shard(path, columns=[*columns, *optional])
    except pa.ArrowInvalid:
        return lake.read_shard(path, columns=columns)


def world_index(ctx) -> dict:
    """world_id -> World for every world of this run (built once per process)."""

    def build():
        out = {}
        if "worlds" not in ctx.pipeline.producers():  # tasks without worlds (a task-source stage)
            return out
        for shard in ctx.input_shards("worlds"):
            out.update(load_worlds(ctx, shard.path))
        return out

    return ctx.resource("worlds-index", build)


def task_world(worlds: dict, row: dict):
    """The world of a task row, or None for a task that has none (its setup is its own)."""
    world_id = row.get("world_id")
    if not world_id:
        return None
    try:
        return worlds[world_id]
    except KeyError:
        raise ValueError(f"task {row['task_id']}: its world {world_id!r} is not among this run's worlds") from None


def round_of(ctx) -> int:
    """The resynthesis round a stage runs in (0 outside a loop; orchestration/rounds.py)."""
    return getattr(ctx, "round", 0)


def env_manager(ctx, instances: int):
    """The run's environment manager, shared by the stages (warm instances carry over), over
    the run's environment kinds (the pipeline's ``envs:``, resolved by the compile step) and
    a verifier that loads the run's declared check plugins; the stage running now sets how
    many instances per domain it may hold."""
    config = ctx.pipeline.config
    verifier = ctx.resource("verifier", lambda: VerifierPool(checks=tuple(config.checks)))
    manager = ctx.resource("env-manager", lambda: EnvManager(ctx.pipeline.kinds(), max_instances=instances,
                                                             verifier=verifier))
    manager.max_instances = instances
    return manager
