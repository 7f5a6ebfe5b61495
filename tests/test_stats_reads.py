"""`guiforge stats` on a run of many shards reads each manifest entry once and each file
once per projection, raw or compacted (a compacted shard read used to read its whole merged
file again, once per shard: minutes at a million steps)."""

from __future__ import annotations

from collections import Counter

import pytest
from fsspec.implementations.local import LocalFileSystem

from guiforge import cli
from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.lake.compact import compact_run

RUN = "many"
SHARDS = 12


def build(root) -> Lake:
    """A run as the pipeline commits it: one tasks shard, rollouts shards of a few
    trajectories each, a judge shard per four of them."""
    lake = Lake(root)
    tasks = [{"task_id": f"tsk_{i}", "domain": ("web", "desktop")[i % 2], "skill_id": f"skill.{i}",
              "instruction": f"do thing {i}", "apps": ["app"], "round": 0} for i in range(4)]
    commit_shard(lake, ShardCommit("task_gates", RUN, "gates-all", "gates[all]"), {"tasks": tasks})
    judged: list[dict] = []
    for s in range(SHARDS):
        trajectories, steps = [], []
        for k in range(3):
            tid, task = f"trj_{s}_{k}", tasks[(s + k) % 4]
            success = (s + k) % 3 == 0
            trajectories.append({"trajectory_id": tid, "task_id": task["task_id"], "sample_index": 0,
                                 "success": success, "score": float(success), "env_failure": k == 2,
                                 "n_steps": 2, "tier": "depth", "wall_s": 1.5})
            judged.append({"trajectory_id": tid, "task_id": task["task_id"], "domain": task["domain"],
                           "skill_id": task["skill_id"], "judge": "judge", "success": success,
                           "verifier_success": success, "agrees": True, "accepted": success})
            steps += [{"trajectory_id": tid, "step_index": i, "thought": "t", "action": {"type": "click"}}
                      for i in range(2)]
        commit_shard(lake, ShardCommit("rollouts", RUN, f"rollouts-{s}", f"rollouts[{s}]"),
                     {"trajectories": trajectories, "steps": steps})
        if s % 4 == 3:
            commit_shard(lake, ShardCommit("judge", RUN, f"judge-{s}", f"judge[{s}]"), {"judgments": judged})
            judged = []
    return lake


@pytest.fixture
def opened(monkeypatch) -> Counter:
    """Every file guiforge opens through the lake's filesystem, by path."""
    seen: Counter = Counter()
    real = LocalFileSystem._open

    def counting(self, path, *args, **kwargs):
        seen[str(path)] += 1
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(LocalFileSystem, "_open", counting)
    return seen


def stats_text(root) -> str:
    with cli.out.capture() as captured:
        cli._print_stats(str(root), None)
    return captured.get()


@pytest.mark.parametrize("compacted", [False, True], ids=["raw", "compacted"])
def test_stats_reads_each_entry_once_and_each_file_a_few_times(tmp_path, opened, compacted):
    lake = build(tmp_path / "lake")
    raw = stats_text(lake.root)
    if compacted:
        compact_run(lake, RUN)
    opened.clear()
    text = stats_text(lake.root)
    assert text.replace("\n", "") and "rollouts" in text
    manifests = {p: n for p, n in opened.items() if "/_manifest/" in p}
    assert len(manifests) >= SHARDS and max(manifests.values()) == 1, sorted(manifests.items())[:3]
    parquet = {p: n for p, n in opened.items() if p.endswith(".parquet")}
    assert parquet and max(parquet.values()) <= 3, sorted(parquet.items(), key=lambda kv: -kv[1])[:3]
    # the same figures below the row counts (whose shard column counts files), merged or not
    assert figures(text) == figures(raw) and "failures" in figures(raw)


def figures(text: str) -> str:
    body = text[text.index("rollouts by domain"):]
    return "\n".join(line for line in body.splitlines() if "catalog" not in line.lower())
