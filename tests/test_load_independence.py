"""Outcomes do not depend on load: the same config run on an idle machine and with every core
oversubscribed by busy processes (guiforge.testing.load) ends with identical tables, row for
row, image hashes included (guiforge.batteries.tables: wall-clock columns left out). Deadlines
count the awaited work's own time (guiforge.worktime), frames wait on observable conditions,
so a loaded machine only takes longer.

CI runs a tiny config (a tools task through the package gate, in the sandbox); --battery
adds a small one with a web task through the package gate and rollouts in Chromium, and the
smoke pipeline with offline models."""

from __future__ import annotations

import pytest

from guiforge.batteries.kills import battery_pipeline
from guiforge.batteries.tables import digests
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.load import oversubscribed

pytestmark = pytest.mark.slow

TINY = {
    "name": "load-tiny", "seed": 3, "workers": 2,
    "models": {role: {"provider": "offline"} for role in ("world_builder", "task_author")},
    "stages": {
        "personas": {"count": 1, "shard_size": 1}, "worlds": {},
        "skills": {"include": ["tools.weekday_of_event"]},
        "task_candidates": {"per_world": 1},
        "task_gates": {"shard_size": 1, "instances_per_domain": 1},
    },
}
SMALL = {
    "name": "load", "seed": 3, "workers": 2,
    "models": {role: {"provider": "offline"} for role in ("world_builder", "task_author", "teacher")},
    "stages": {
        "personas": {"count": 1, "shard_size": 1}, "worlds": {},
        "skills": {"include": ["tools.weekday_of_event", "mail.reply_invoice_total"]},
        "task_candidates": {"per_world": 2},
        "task_gates": {"shard_size": 1, "instances_per_domain": 1},
        "rollouts": {"samples": 1, "tasks": 2, "tasks_per_shard": 1},
    },
}


def run_twice(config: dict, tmp_path) -> tuple[dict[str, str], dict[str, str]]:
    """The config's tables idle, then on oversubscribed cores."""
    lakes = {}
    for name in ("idle", "loaded"):
        lake = tmp_path / name / "lake"
        pipeline = build_pipeline({**config, "lake": str(lake)}, f"{name}.yaml", lake=str(lake))
        if name == "idle":
            run_pipeline(pipeline, executor="local")
        else:
            with oversubscribed():
                run_pipeline(pipeline, executor="local")
        lakes[name] = digests(Lake(lake))
    return lakes["idle"], lakes["loaded"]


def test_a_tools_task_through_the_package_gate_is_the_same_idle_and_oversubscribed(tmp_path):
    idle, loaded = run_twice(TINY, tmp_path)
    assert not idle["tasks"].startswith("0 rows")  # the task passed its package gate
    assert loaded == idle


@pytest.mark.battery
@pytest.mark.timeout(1800)
def test_a_small_run_gives_the_same_tables_idle_and_oversubscribed(tmp_path):
    idle, loaded = run_twice(SMALL, tmp_path)
    assert {"tasks", "trajectories", "steps", "images"} <= set(idle)
    assert not idle["trajectories"].startswith("0 rows") and not idle["images"].startswith("0 rows")
    assert loaded == idle


@pytest.mark.battery
@pytest.mark.timeout(3 * 3600)
def test_the_smoke_pipeline_gives_the_same_tables_idle_and_oversubscribed(tmp_path):
    idle, loaded = run_twice(battery_pipeline("unused"), tmp_path)
    assert {"tasks", "trajectories", "steps", "images", "judgments", "rl_tasks"} <= set(idle)
    assert loaded == idle
