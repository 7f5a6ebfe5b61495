"""A pipeline whose rollouts run on an env host that dies: its episodes are env_failure rows
that say the host was lost (never a reward), the shard is marked for redoing, and the rerun
with the host back completes them, leaving the tables of a run that never lost it. In CI the
host is down before the rollouts start (tools tasks, seconds); the battery kills a web host
in the middle of an episode."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from guiforge.failures import ENV_HOST_LOST
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import SKILLS_DIR
from guiforge.report.timing import stage_times
from guiforge.testing.env_service import TOKEN, EnvService


def _config(lake: str, url: str, domain: str, cards: list[str], folder: Path) -> dict:
    for card in cards:  # only these cards in the skills folder: loading every card takes seconds
        app, name = card.split(".", 1)
        (folder / app).mkdir(parents=True, exist_ok=True)
        shutil.copy(SKILLS_DIR / app / f"{name}.yaml", folder / app / f"{name}.yaml")
    return {
        "name": "envhosts", "lake": lake, "seed": 3, "workers": 1, "max_failure_share": None,
        "envs": [url],
        "stages": {
            "personas": {"count": 1, "shard_size": 1},
            "worlds": {},
            "skills": {"dir": str(folder)},
            "task_candidates": {"per_world": 2, "domains": [domain]},
            "task_gates": {"package_gate": False},
            "rollouts": {"samples": 2, "tasks": 2, "tasks_per_shard": 1, "concurrency": 1,
                         "instances_per_domain": 1},
        },
    }


def _trajectories(lake: str, run_id: str) -> list[dict]:
    rows = Lake(lake).read_table("trajectories", run_id=run_id).to_pylist()
    return sorted(rows, key=lambda r: (r["task_id"], r["sample_index"]))


def _outcomes(rows: list[dict]) -> list[tuple]:
    return [(r["trajectory_id"], r["success"], r["score"], r["n_steps"]) for r in rows]


def _lost_then_completed(tmp_path, monkeypatch, domain: str, cards: list[str], kill_during_run: bool,
                         compare_clean: bool) -> None:
    monkeypatch.setenv("GUIFORGE_ENVS_TOKEN", TOKEN)
    host = EnvService(kinds=domain, capacity=1).start()
    lake = str(tmp_path / "lake")
    try:
        config = _config(lake, host.url, domain, cards, tmp_path / "skills")
        pipeline = build_pipeline(config, "envhosts.yaml")
        if kill_during_run:  # the host dies once it has leased an instance to the run
            watcher = threading.Thread(target=lambda: (host.wait_for(lambda f: f["acquired"] >= 1, 600,
                                                                     "a lease"), host.kill()), daemon=True)
            watcher.start()
        else:
            host.kill()
        run_pipeline(pipeline, executor="local")
        first = _trajectories(lake, pipeline.run_id)
        lost = [r for r in first if r["failure_kind"] == "env_failure"]
        assert len(first) == 4 and lost, "the host's death left no env_failure row"
        assert all(ENV_HOST_LOST in r["error"] and r["success"] is None and r["score"] is None for r in lost)
        entries = list(Lake(lake).manifest_entries(pipeline.run_id, "rollouts"))
        assert sum(e.get("redo", 0) for e in entries) == len(lost)

        host = EnvService(kinds=domain, capacity=1, port=host.port).start()  # back, where the file says
        run_pipeline(build_pipeline(config, "envhosts.yaml"), executor="local")
        second = _trajectories(lake, pipeline.run_id)
        assert [r["failure_kind"] for r in second] == [None] * 4
        kept = [r for r in first if r["failure_kind"] is None]
        assert set(_outcomes(kept)) <= set(_outcomes(second))  # what was sound before is unchanged
        entries = list(Lake(lake).manifest_entries(pipeline.run_id, "rollouts"))
        assert not any(e.get("redo") for e in entries) and len(entries) == 2  # the lost shards pruned
        # each shard counted its leases: busy over leased seconds per stage (guiforge stats, the report)
        assert all(0 < e["env"]["busy_s"] <= e["env"]["leased_s"] for e in entries)
        row = next(r for r in stage_times(Lake(lake), pipeline.run_id) if r["stage"] == "rollouts")
        assert 0 < row["env_leased_busy"] <= 1

        if not compare_clean:
            return
        # the same tables as a run whose host never died (its own lake, the same run)
        clean = str(tmp_path / "clean")
        run_pipeline(build_pipeline({**config, "lake": clean}, "envhosts.yaml"), executor="local")
        assert _outcomes(_trajectories(clean, pipeline.run_id)) == _outcomes(second)
    finally:
        host.kill()


def test_rollouts_on_a_lost_host_are_env_failures_and_the_rerun_completes_them(tmp_path, monkeypatch):
    _lost_then_completed(tmp_path, monkeypatch, "tools", ["tools.days_until_event", "tools.attendee_phone"],
                         kill_during_run=False, compare_clean=False)


@pytest.mark.battery
def test_a_web_host_killed_mid_episode_and_the_rerun(tmp_path, monkeypatch):
    _lost_then_completed(tmp_path, monkeypatch, "web", ["mail.archive_sender", "calendar.add_attendee"],
                         kill_during_run=True, compare_clean=True)
