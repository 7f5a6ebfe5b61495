"""The exported GRPO reward replays and scores a task as the run that made it did: with the
run's declared environment kinds (``envs:``) and check plugins (``checks:``), which the
export writes into every RL row (``envs_json``, ``checks_json``) from the run's provenance."""

from __future__ import annotations

import json

from guiforge.export.source import run_choices as declared_in_lake
from guiforge.lake import Lake
from guiforge.lake.runlog import write_provenance
from guiforge.rl import TaskReward
from guiforge.rl.tasks import run_choices, shared_manager

# A tools task whose rubric names a check only a declared plugin provides: `bool` from
# `builtins:bool` (any importable callable of the state is a check; bool(state) is True).
TASK = {"task_id": "t_bool", "domain": "tools", "instruction": "Say anything.", "apps": [], "variant": None,
        "setup_json": "{}", "rubric_json": json.dumps([{"id": "declared", "check": {"fn": "bool"}}]), "max_steps": 2}
DONE = [{"role": "assistant", "content": json.dumps({"thought": "done", "action": {"type": "terminate", "status": "success"}})}]


def test_the_reward_loads_the_checks_the_run_declared():
    columns = {"task_json": [json.dumps(TASK)] * 2, "world_json": [None] * 2,
               "envs_json": [json.dumps({"tools": "guiforge.envs.kinds_builtin:TOOLS"})] * 2,
               "checks_json": [json.dumps(["builtins:bool"]), "[]"]}
    # the first row's run declared the plugin: its check is found; the second's did not: unknown, 0
    assert TaskReward()(prompts=[None, None], completions=[DONE, DONE], **columns) == [1.0, 0.0]
    manager = shared_manager(envs={"tools": "guiforge.envs.kinds_builtin:TOOLS"}, checks=("builtins:bool",))
    assert manager.verifier.checks == ("builtins:bool",)
    assert manager.factories.ref("tools") == "guiforge.envs.kinds_builtin:TOOLS"
    # the constructor's choice overrides the rows'
    assert TaskReward(checks=[])(prompts=[None], completions=[DONE], **{k: v[:1] for k, v in columns.items()}) == [0.0]


def test_the_export_reads_the_runs_choices_from_its_latest_provenance(tmp_path):
    lake = Lake(tmp_path / "lake")
    assert declared_in_lake(lake, "r1") == ({}, [])  # no record: nothing declared
    write_provenance(lake, "r1", {"pipeline": {"config": {"envs": {"web": "remote:WEB"}, "checks": ["a:B"]}}})
    assert declared_in_lake(lake, "r1") == ({"web": "remote:WEB"}, ["a:B"])
    # env hosts say where instances ran, not which kinds: the export declares none
    for hosts in (["http://10.0.0.1:8700"], {"hosts": ["http://10.0.0.1:8700"], "acquire_s": 5}):
        write_provenance(lake, "r2", {"pipeline": {"config": {"envs": hosts}}})
        assert declared_in_lake(lake, "r2") == ({}, [])
    assert run_choices('{"web": "remote:WEB"}', '["a:B"]') == ({"web": "remote:WEB"}, ("a:B",))
    assert run_choices(None, None) == ({}, ())
