"""A pipeline whose rollouts run on an env host that dies: its episodes are env_failure rows
that say the host was lost (never a reward), the shard is marked for redoing, and the rerun
with the host back completes them, leaving the tables of a run that never lost it. In CI one
host is down before the rollouts start (tools tasks); the battery runs package gates and
rollouts on two web hosts and kills one in the middle of a rollout."""

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


def _config(lake: str, urls: list[str], domain: str, cards: list[str], folder: Path, gate: bool) -> dict:
    for card in cards:  # only these cards in the skills folder: loading every card takes seconds
        app, name = card.split(".", 1)
        (folder / app).mkdir(parents=True, exist_ok=True)
        shutil.copy(SKILLS_DIR / app / f"{name}.yaml", folder / app / f"{name}.yaml")
    return {
        "name": "envhosts", "lake": lake, "seed": 3, "workers": 1, "max_failure_share": None,
        "envs": urls,
        "stages": {
            "personas": {"count": 1, "shard_size": 1},
            "worlds": {},
            "skills": {"dir": str(folder)},
            "task_candidates": {"per_world": 3, "domains": [domain]},
            "task_gates": {"package_gate": gate, "instances_per_domain": 1, "concurrency": 1},
            "rollouts": {"samples": 2, "tasks": 2, "tasks_per_shard": 1, "concurrency": 1,
                         "instances_per_domain": 1},
        },
    }


def _kill_mid_rollout(host: EnvService, lake: str, run_id: str) -> None:
    """SIGKILL ``host`` once the gates are committed and it has worked on a rollout lease."""
    def gates_done(_figures) -> bool:
        return next(Lake(lake).manifest_entries(run_id, "task_gates"), None) is not None

    busy = host.wait_for(gates_done, 900, "the gates committed")["busy_s"]
    host.wait_for(lambda f: f["busy_s"] > busy and f["leased"] >= 1, 900, "a rollout on the host")
    host.kill()


def _trajectories(lake: str, run_id: str) -> list[dict]:
    rows = Lake(lake).read_table("trajectories", run_id=run_id).to_pylist()
    return sorted(rows, key=lambda r: (r["task_id"], r["sample_index"]))


def _outcomes(rows: list[dict]) -> list[tuple]:
    return [(r["trajectory_id"], r["success"], r["score"], r["n_steps"]) for r in rows]


def _lost_then_completed(tmp_path, monkeypatch, domain: str, cards: list[str], hosts: int, gate: bool,
                         kill_during_run: bool, compare_clean: bool) -> None:
    monkeypatch.setenv("GUIFORGE_ENVS_TOKEN", TOKEN)
    live = [EnvService(kinds=domain, capacity=1).start() for _ in range(hosts)]
    lake = str(tmp_path / "lake")
    try:
        config = _config(lake, [h.url for h in live], domain, cards, tmp_path / "skills", gate)
        pipeline = build_pipeline(config, "envhosts.yaml")
        doomed = live[0]  # the first host: a rollout goes there first (the hosts tie on free slots)
        if kill_during_run:
            threading.Thread(target=_kill_mid_rollout, args=(doomed, lake, pipeline.run_id), daemon=True).start()
        else:
            doomed.kill()
        run_pipeline(pipeline, executor="local")
        first = _trajectories(lake, pipeline.run_id)
        lost = [r for r in first if r["failure_kind"] == "env_failure"]
        assert len(first) >= 2 and lost, "the host's death left no env_failure row"
        assert all(ENV_HOST_LOST in r["error"] and r["success"] is None and r["score"] is None for r in lost)
        entries = list(Lake(lake).manifest_entries(pipeline.run_id, "rollouts"))
        assert sum(e.get("redo", 0) for e in entries) == len(lost)

        live[0] = EnvService(kinds=domain, capacity=1, port=doomed.port).start()  # back, where the file says
        run_pipeline(build_pipeline(config, "envhosts.yaml"), executor="local")
        second = _trajectories(lake, pipeline.run_id)
        assert [r["failure_kind"] for r in second] == [None] * len(first)
        kept = [r for r in first if r["failure_kind"] is None]
        assert set(_outcomes(kept)) <= set(_outcomes(second))  # what was sound before is unchanged
        entries = list(Lake(lake).manifest_entries(pipeline.run_id, "rollouts"))
        shards = len({r["task_id"] for r in second})  # one task a shard
        assert not any(e.get("redo") for e in entries) and len(entries) == shards  # the lost shards pruned
        # each shard counted its leases: busy over leased seconds per stage (guiforge stats, the report)
        assert all(0 < e["env"]["busy_s"] <= e["env"]["leased_s"] for e in entries)
        row = next(r for r in stage_times(Lake(lake), pipeline.run_id) if r["stage"] == "rollouts")
        assert 0 < row["env_leased_busy"] <= 1
        if not compare_clean:
            return
        # the same tables as a run whose hosts never died (its own lake, the same run)
        clean = str(tmp_path / "clean")
        run_pipeline(build_pipeline({**config, "lake": clean}, "envhosts.yaml"), executor="local")
        assert _outcomes(_trajectories(clean, pipeline.run_id)) == _outcomes(second)
        # the gates passed and refused the same candidates (gate_json also holds the gate's seconds)
        for table, columns in (("tasks", ["task_id", "instruction"]), ("exclusions", ["gate", "subject_id"])):
            assert _rows(clean, table, pipeline.run_id, columns) == _rows(lake, table, pipeline.run_id, columns)
    finally:
        for host in live:
            host.kill()


def _rows(lake: str, table: str, run_id: str, columns: list[str]) -> list[tuple]:
    rows = Lake(lake).read_table(table, run_id=run_id, columns=columns).to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in rows)


def test_rollouts_on_a_lost_host_are_env_failures_and_the_rerun_completes_them(tmp_path, monkeypatch):
    _lost_then_completed(tmp_path, monkeypatch, "tools", ["tools.days_until_event", "tools.attendee_phone"],
                         hosts=1, gate=False, kill_during_run=False, compare_clean=False)


@pytest.mark.battery
def test_one_of_two_web_hosts_killed_mid_rollout_and_the_rerun(tmp_path, monkeypatch):
    """Package gates and rollouts on two hosts; the first dies under a rollout: the rest goes
    to the other, the rerun completes the lost episodes, and every table is a clean run's."""
    _lost_then_completed(tmp_path, monkeypatch, "web", ["mail.archive_sender", "calendar.add_attendee"],
                         hosts=2, gate=True, kill_during_run=True, compare_clean=True)
