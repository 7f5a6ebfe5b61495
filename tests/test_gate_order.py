"""Gating in the order of use: with ``until``, the package gate judges candidates in the
rollouts' order, in waves, and stops once enough have passed (tools cards: a real gate
without a browser). ``until: all`` (the default) is covered by every other gate test."""

from __future__ import annotations

import pytest

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.context import RunContext
from guiforge.orchestration.runner import run_pipeline
from guiforge.stages.task_gates import next_wave

CARD = "tools.days_until_event"


def config(until, **stages) -> dict:
    # near_duplicate_threshold 0.01: nearly every instance of the card repeats another, so
    # few candidates pass and the gate has to look for one past its first wave
    return {"name": "gate-order", "seed": 9, "workers": 2, "models": {"world_builder": {"provider": "offline"}},
            "stages": {"personas": {"count": 4, "shard_size": 4}, "worlds": {}, "skills": {"include": [CARD]},
                       "task_candidates": {"per_world": 4},
                       "task_gates": {"until": until, "shard_size": 2, "near_duplicate_threshold": 0.01},
                       **stages}}


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    lake = str(tmp_path_factory.mktemp("gate-order") / "lake")
    pipeline = build_pipeline(config(1), "x.yaml", lake=lake)
    summaries = run_pipeline(pipeline, executor="local")
    return pipeline, Lake(lake), {s.stage: s for s in summaries}


def judged_ids(lake: Lake) -> set[str]:
    return {*lake.read_table("tasks", columns=["task_id"]).column("task_id").to_pylist(),
            *lake.read_table("exclusions", columns=["subject_id"]).column("subject_id").to_pylist()}


def test_the_gate_stops_at_the_first_pass_in_the_rollouts_order(gated):
    pipeline, lake, _ = gated
    ctx = RunContext(pipeline, lake)
    stage = pipeline.stage("task_gates")
    order = [r["task_id"] for r in stage.order(ctx)]
    dupes = stage.duplicates(ctx, [s.path for s in ctx.input_shards("task_candidates")])
    judged = judged_ids(lake)
    assert len(order) > len(judged)  # it stopped: some candidates were never judged
    assert judged == set(order[:len(judged)])  # a prefix of the rollouts' order
    passing = [t for t in order[:len(judged)] if t not in dupes]
    tasks = lake.read_table("tasks", columns=["task_id"]).column("task_id").to_pylist()
    assert passing and sorted(tasks) == sorted(passing)
    assert order.index(passing[0]) >= 2  # at seed 9 the first pass is past the first wave (1 wanted, 1 spare)
    keys = [e["key"] for e in lake.manifest_entries(pipeline.run_id, "task_gates")]
    assert len(keys) >= 2 and all(k.startswith("gates<used>") for k in keys)


def test_a_rerun_plans_the_same_waves_and_runs_none(gated):
    pipeline, lake, _ = gated
    before = judged_ids(lake)
    again = {s.stage: s for s in run_pipeline(build_pipeline(config(1), "x.yaml", lake=str(lake.root)),
                                              executor="local")}
    assert again["task_gates"].ran == 0 and again["task_gates"].pruned == 0
    assert judged_ids(lake) == before


def test_the_next_wave_follows_the_verdicts_so_far(gated):
    pipeline, lake, _ = gated
    ctx = RunContext(pipeline, lake)
    stage = pipeline.stage("task_gates")
    order = [r["task_id"] for r in stage.order(ctx)]
    first = stage.plan(ctx)
    assert [t[0] for p in first for t in p.params["tasks"]] == order[:2]  # 1 wanted, 1 spare

    def entry(passed: int, rejected: int) -> dict:
        return {"outputs": {"tasks": {"rows": passed}, "exclusions": {"rows": rejected}}}

    assert stage.plan_more(ctx, [(first[0], entry(1, 1))]) == []  # enough passed
    assert stage.plan_more(ctx, [(first[0], None)]) == []  # not committed: the rerun decides
    more = stage.plan_more(ctx, [(first[0], entry(0, 2))])
    assert [t[0] for p in more for t in p.params["tasks"]] == order[2:6]  # none passed: 4x what is missing
    assert next_wave(10, 5, 10) == 10 and next_wave(10, 10, 12) == 0 and next_wave(4, 0, 0) == 4


def test_used_gates_as_many_as_the_rollouts_take():
    def target(rollouts: dict | None) -> int | None:
        cfg = config("used", **({"rollouts": rollouts} if rollouts else {}))
        pipeline = build_pipeline(cfg, "x.yaml", lake="/nonexistent")
        return pipeline.stage("task_gates").target(RunContext(pipeline, None))

    assert target({"tasks": 3, "samples": 2}) == 3
    assert target({"tasks": "all"}) is None  # every gated task is rolled out
    assert target(None) is None  # nothing takes tasks as work: a task bank, gate every candidate
