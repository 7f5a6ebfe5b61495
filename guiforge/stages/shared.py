"""What several stages read and hold the same way: the run's worlds (by id, loaded once per
process), the run's environment manager (warm instances carry over between stages) and the
resynthesis round a stage runs in."""

from __future__ import annotations

from guiforge.envs import EnvManager, default_factories


def load_worlds(ctx, path: str) -> dict:
    """world_id -> World for one shard of the worlds table."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.model import World

    table = ctx.lake.read_shard(path, columns=["world_id", "world_json"])
    return {wid: World.model_validate_json(js) for wid, js in zip(table.column("world_id").to_pylist(),
                                                                  table.column("world_json").to_pylist(), strict=True)}


def world_index(ctx) -> dict:
    """world_id -> World for every world of this run (built once per process)."""

    def build():
        out = {}
        for shard in ctx.input_shards("worlds"):
            out.update(load_worlds(ctx, shard.path))
        return out

    return ctx.resource("worlds-index", build)


def round_of(ctx) -> int:
    """The resynthesis round a stage runs in (0 outside a loop; orchestration/rounds.py)."""
    return getattr(ctx, "round", 0)


def env_manager(ctx, instances: int):
    """The run's environment manager, shared by the stages (warm instances carry over);
    the stage running now sets how many instances per domain it may hold."""
    manager = ctx.resource("env-manager", lambda: EnvManager(default_factories(), max_instances=instances))
    manager.max_instances = instances
    return manager
