"""`guiforge stats` and the report count each failure kind by stage and domain: faulted
trajectories under the stage whose shard wrote them (rounds apart), a gate's fault
exclusions, a judge's own model failures; and what a run's faults: injected beside them.
Rows of schema 2 (env_failure only) still count."""

from __future__ import annotations

import json
import subprocess
import sys

from guiforge.faults import Injection
from guiforge.faults.log import write_log
from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.report.build import build_sections
from guiforge.report.failures import failure_counts

RUN = "r1"


def trajectory(i: int, task: str, kind: str | None, env: bool = False) -> dict:
    return {"trajectory_id": f"trj_{i}", "task_id": task, "sample_index": i, "success": None if kind or env else True,
            "score": None if kind or env else 1.0, "env_failure": env or kind == "env_failure", "failure_kind": kind,
            "n_steps": 2, "criteria_json": "null"}


def make_lake(root) -> Lake:
    lake = Lake(root)
    tasks = [{"task_id": "t_web", "domain": "web", "instruction": "a"}, {"task_id": "t_tools", "domain": "tools",
                                                                         "instruction": "b"}]
    gate = {"stage": "task_gates", "gate": "verifier_failure", "reason": "verifier failure in 2 attempts",
            "subject_id": "t_x", "subject_table": "task_candidates", "details_json": json.dumps({"domain": "mobile"})}
    commit_shard(lake, ShardCommit("task_gates", RUN, "g1", "gates[0:2]"), {"tasks": tasks, "exclusions": [gate]})
    commit_shard(lake, ShardCommit("rollouts", RUN, "r0", "rollouts[0:2]"), {"trajectories": [
        trajectory(0, "t_web", "model_failure"), trajectory(1, "t_web", "env_failure"),
        trajectory(2, "t_web", None), trajectory(3, "t_tools", "parse_failure")]})
    commit_shard(lake, ShardCommit("rollouts_r1", RUN, "r1", "rollouts[0:1]"), {"trajectories": [
        trajectory(4, "t_tools", None, env=True)]})  # a row of schema 2: env_failure, no failure_kind
    commit_shard(lake, ShardCommit("judge", RUN, "j1", "judge[0]"), {"judgments": [
        {"trajectory_id": "trj_2", "judge": "judge", "domain": "web", "failure_kind": "model_failure"}]})
    write_log(lake, RUN, "rollouts", "rollouts[0:2]",
              [Injection("rollouts", "rollouts[0:2]", "t_web", 0, "model", 0, "server_error")])
    write_log(lake, RUN, "rollouts", "rollouts[9:10]",  # a shard that never committed: not counted
              [Injection("rollouts", "rollouts[9:10]", "t_web", 9, "env", 0, "crash")])
    return lake


def test_failures_by_stage_domain_and_kind(tmp_path):
    lake = make_lake(tmp_path / "lake")
    got = {(r["stage"], r["domain"]): {k: r[k] for k in ("env_failure", "model_failure", "verifier_failure",
                                                          "parse_failure")} for r in failure_counts(lake, RUN)}
    assert got == {
        ("judge", "web"): {"env_failure": 0, "model_failure": 1, "verifier_failure": 0, "parse_failure": 0},
        ("rollouts", "tools"): {"env_failure": 0, "model_failure": 0, "verifier_failure": 0, "parse_failure": 1},
        ("rollouts", "web"): {"env_failure": 1, "model_failure": 1, "verifier_failure": 0, "parse_failure": 0},
        ("rollouts_r1", "tools"): {"env_failure": 1, "model_failure": 0, "verifier_failure": 0, "parse_failure": 0},
        ("task_gates", "mobile"): {"env_failure": 0, "model_failure": 0, "verifier_failure": 1, "parse_failure": 0},
    }
    section = next(s for s in build_sections(lake, RUN) if s.anchor == "failures")
    titles = [title for title, _ in section.tables]
    assert titles == ["by stage, domain and kind", "injected (faults: in the pipeline file)"]
    assert section.tables[1][1] == [{"run_id": RUN, "stage": "rollouts", "site": "model", "kind": "server_error",
                                     "n": 1}]


def test_stats_prints_them(tmp_path):
    make_lake(tmp_path / "lake")
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "stats", "--lake", str(tmp_path / "lake")],
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = [" ".join(line.replace("│", " ").split()) for line in done.stdout.splitlines()]
    assert "rollouts web 1 1 0 0 2" in lines and "task_gates mobile 0 0 1 0 1" in lines, done.stdout
    assert f"injected faults (faults: in the pipeline file) of run {RUN}: rollouts model server_error 1" in lines
