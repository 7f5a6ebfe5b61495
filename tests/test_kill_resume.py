"""`guiforge run` on Prefect is SIGKILLed mid-stage; the rerun ends with exactly the rows
of an uninterrupted run, and the temporary Prefect server died with its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

CONFIG = {
    "name": "killme", "seed": 5, "workers": 2,
    "models": {"world_builder": {"provider": "offline"}},
    "stages": {"personas": {"count": 160, "shard_size": 8}, "worlds": {"per_persona": 1}},
}
SHARDS = 20  # per stage


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory) -> str:
    """One Prefect database for the module: only the first server start migrates it."""
    return str(tmp_path_factory.mktemp("prefect-home"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, list]:
    """An uninterrupted run of the same config (engine without Prefect: same shards)."""
    lake = tmp_path_factory.mktemp("reference") / "lake"
    run_pipeline(build_pipeline(CONFIG, "ref.yaml", lake=str(lake)), executor="local")
    return table_rows(Lake(lake))


def table_rows(lake: Lake) -> dict[str, list]:
    out = {}
    for table, key in (("personas", "persona_id"), ("worlds", "world_id"), ("exclusions", "subject_id")):
        out[table] = sorted(lake.read_table(table).to_pylist(), key=lambda r: r[key])
    return out


def children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # a child that ended since it was listed
        return b""


def guiforge(config: Path, lake: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", str(lake)],
                            cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def start_and_kill_mid_stage(config: Path, lake_dir: Path, env: dict, manifests: Path) -> None:
    proc = guiforge(config, lake_dir, env)
    server_pids: list[int] = []
    deadline = time.monotonic() + 300
    while True:
        done = len(list(manifests.glob("*.json"))) if manifests.exists() else 0
        server_pids = server_pids or [c for c in children(proc.pid)
                                      if b"uvicorn" in cmdline(c)]
        if 2 <= done < SHARDS:
            break
        assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the stage never started"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert server_pids, "guiforge did not start its own Prefect server"
    gone_by = time.monotonic() + 60  # the kernel stops the server when its parent dies (PDEATHSIG)
    while any(alive(p) for p in server_pids) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not any(alive(p) for p in server_pids), "orphaned Prefect server"


@pytest.mark.battery  # CI kills mid-stage and resumes through tests/test_kill_battery.py's short variant
def test_sigkill_mid_stage_then_rerun(tmp_path, reference, prefect_home):
    """Killed in the middle of personas, rerun and killed in the middle of worlds, rerun."""
    config = tmp_path / "killme.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    lake_dir = tmp_path / "lake"
    env = {**os.environ, "PREFECT_HOME": prefect_home}
    run_dir = lake_dir / "_manifest" / f"run={build_pipeline(CONFIG, 'x').run_id}"

    start_and_kill_mid_stage(config, lake_dir, env, run_dir / "personas")
    assert len(Lake(lake_dir).read_table("personas")) < len(reference["personas"])
    start_and_kill_mid_stage(config, lake_dir, env, run_dir / "worlds")
    partial = table_rows(Lake(lake_dir))
    assert partial["personas"] == reference["personas"]
    assert len(partial["worlds"]) < len(reference["worlds"])

    rerun = guiforge(config, lake_dir, env)
    output = rerun.communicate(timeout=600)[0].decode()
    assert rerun.returncode == 0, output[-3000:]
    assert "already committed" in output
    resumed = table_rows(Lake(lake_dir))
    for table, expected in reference.items():
        got = resumed[table]
        assert len(got) == len(expected), table
        differing = [a for a, b in zip(got, expected, strict=True) if a != b]
        assert not differing, f"{table}: {len(differing)} rows differ, e.g. {str(differing[0])[:300]}"
    leftovers = [p for p in lake_dir.rglob("*") if ".tmp-" in p.name]
    assert leftovers == []


ROLLOUTS = {
    "name": "killrollouts", "seed": 6, "workers": 2,
    "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
    "stages": {
        "personas": {"count": 4, "shard_size": 4}, "worlds": {},
        "skills": {"include": ["mail.reply_invoice_total"]},
        "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
        "rollouts": {"samples": 3, "tasks": 4, "tasks_per_shard": 1},
    },
}


@pytest.mark.battery  # CI SIGKILLs the group during rollouts through tests/test_kill_battery.py's short variant
def test_sigkill_during_rollouts_keeps_finished_trajectories(tmp_path, prefect_home):
    config = tmp_path / "rollouts.yaml"
    config.write_text(yaml.safe_dump(ROLLOUTS))
    lake_dir = tmp_path / "lake"
    env = {**os.environ, "PREFECT_HOME": prefect_home}
    manifests = lake_dir / "_manifest" / f"run={build_pipeline(ROLLOUTS, 'x').run_id}" / "rollouts"

    proc = guiforge(config, lake_dir, env)
    deadline = time.monotonic() + 300
    while not (manifests.exists() and list(manifests.glob("*.json"))):
        assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
        assert time.monotonic() < deadline, "rollouts never committed a shard"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.read_text() for p in manifests.glob("*.json")}
    planned = Lake(lake_dir).read_table("tasks").num_rows
    assert 1 <= len(finished) < min(planned, 4)

    rerun = guiforge(config, lake_dir, env)
    output = rerun.communicate(timeout=600)[0].decode()
    assert rerun.returncode == 0, output[-3000:]
    # Shards committed before the kill were not collected again: their entries are untouched.
    assert {p.name: p.read_text() for p in manifests.glob("*.json") if p.name in finished} == finished
    trajectories = Lake(lake_dir).read_table("trajectories").to_pylist()
    ids = [t["trajectory_id"] for t in trajectories]
    assert len(ids) == len(set(ids)) == 3 * min(planned, 4)
