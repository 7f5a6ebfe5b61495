"""Resynthesis rounds unroll into named round stages that read only their round's shards."""

from __future__ import annotations

import pytest

from guiforge.errors import ConfigError
from guiforge.orchestration.compile import build_pipeline


def loop(**resynthesize) -> dict:
    return {"name": "loop", "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
            "stages": {"personas": {"count": 2}, "worlds": {}, "skills": {}, "task_candidates": {}, "task_gates": {},
                       "rollouts": {}, "relabel": {"accepted_from": "verifier"}, "diagnose": {},
                       "resynthesize": {"rounds": 2, **resynthesize}}}


def test_rounds_unroll_in_dependency_order():
    p = build_pipeline(loop(), "loop.yaml")
    names = [s.name for s in p.stages]
    for r in (1, 2):
        head = "resynthesize" if r == 1 else "resynthesize_r2"
        before = "diagnose" if r == 1 else "diagnose_r1"
        assert names.index(before) < names.index(head) < names.index(f"task_gates_r{r}") \
            < names.index(f"rollouts_r{r}") < names.index(f"relabel_r{r}") < names.index(f"diagnose_r{r}")
    assert "resynthesize_r3" not in names
    by = {s.name: s for s in p.stages}
    producers = p.producers()
    assert by["task_gates"].sources("task_candidates", producers["task_candidates"]) == ["task_candidates"]
    assert by["task_gates_r1"].sources("task_candidates", producers["task_candidates"]) == ["resynthesize"]
    assert by["rollouts_r2"].sources("tasks", producers["tasks"]) == ["task_gates_r2"]
    assert by["rollouts_r2"].sources("worlds", producers["worlds"]) == ["worlds"]
    assert by["resynthesize_r2"].sources("diagnoses", producers["diagnoses"]) == ["diagnose_r1"]
    # a frame is stored once, in the round that saw it first: later rounds read earlier images too
    assert by["relabel_r1"].sources("images", producers["images"]) == ["rollouts", "rollouts_r1"]
    assert by["relabel"].sources("images", producers["images"]) == ["rollouts"]


def test_a_repeat_that_names_no_stage_is_a_config_error():
    with pytest.raises(ConfigError, match=r"stages\.resynthesize.*repeat names 'judge'"):
        build_pipeline(loop(repeat=["task_gates", "judge"]), "loop.yaml")
    with pytest.raises(ConfigError, match="rounds"):
        build_pipeline(loop(rounds=9), "loop.yaml")
