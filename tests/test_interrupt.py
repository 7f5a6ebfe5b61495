"""A real SIGINT to a real `guiforge run` (on Prefect) during the package gates, then during
rollouts: each exits 130 within seconds with one line saying what was committed, no
Prefect crash report and no exclusion caused by the interruption; the final rerun ends with
exactly the tables of an uninterrupted run, and `guiforge lake check` passes. SIGTERM (what
a scheduler or `timeout` sends) does the same with exit 143, on Prefect and locally."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from guiforge.batteries.tables import digests
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

CONFIG = {
    "name": "interrupt", "seed": 5, "workers": 2,
    "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
    "stages": {
        "personas": {"count": 4, "shard_size": 4}, "worlds": {},
        "skills": {"include": ["mail.reply_invoice_total", "contacts.phone_info", "calendar.event_time_info"]},
        "task_candidates": {"per_world": 3},
        "task_gates": {"package_gate": True, "shard_size": 1, "instances_per_domain": 1},
        "rollouts": {"samples": 2, "tasks": 4, "tasks_per_shard": 1, "phone_screenshots": "css"},
    },
}
STABLE = {
    "tasks": ("task_id", "skill_id", "instruction", "reference_json"),
    "exclusions": ("stage", "gate", "subject_id", "reason"),
    "trajectories": ("trajectory_id", "task_id", "sample_index", "success", "score", "n_steps", "env_failure"),
    "steps": ("trajectory_id", "step_index", "image_sha256", "action"),
}


def tables(lake: Lake) -> dict[str, list]:
    return {t: sorted(tuple(str(r[c]) for c in cols) for r in lake.read_table(t).to_pylist())
            for t, cols in STABLE.items()}


@pytest.fixture(scope="module")
def reference_lake(tmp_path_factory) -> Lake:
    lake = tmp_path_factory.mktemp("reference") / "lake"
    run_pipeline(build_pipeline(CONFIG, "ref.yaml", lake=str(lake)), executor="local")
    return Lake(lake)


@pytest.fixture(scope="module")
def reference(reference_lake) -> dict[str, list]:
    return tables(reference_lake)


def differences(got: dict[str, list], want: dict[str, list]) -> str:
    """The rows only one side has, table by table (the whole tables are too long to read)."""
    lines = []
    for table in want:
        extra, missing = set(got[table]) - set(want[table]), set(want[table]) - set(got[table])
        lines += [f"{table}: {len(got[table])} rows against {len(want[table])}, {len(extra)} extra, {len(missing)} missing"]
        lines += [f"  + {row}" for row in sorted(extra)[:8]] + [f"  - {row}" for row in sorted(missing)[:8]]
    return "\n".join(lines)


def guiforge(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def interrupt_during(config: Path, lake: Path, manifests: Path, env: dict, signum: int = signal.SIGINT,
                     *extra: str) -> tuple[str, float]:
    """Start a run, signal it once ``manifests`` holds a committed shard; (output, seconds to exit)."""
    proc = guiforge("run", str(config), "--lake", str(lake), *extra, env=env)
    deadline = time.monotonic() + 400
    while not (manifests.exists() and list(manifests.glob("*.json"))):
        assert proc.poll() is None, proc.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "the stage never committed a shard"
        time.sleep(0.05)
    sent = time.monotonic()
    proc.send_signal(signum)
    output = proc.communicate(timeout=120)[0]
    took = time.monotonic() - sent
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum], output[-3000:]
    return output, took


@pytest.mark.timeout(1500)  # four Prefect runs with real environments on a 2-core machine
def test_sigint_during_gates_and_rollouts_then_rerun(tmp_path, reference, reference_lake):
    config = tmp_path / "interrupt.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    lake_dir = tmp_path / "lake"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    run_dir = lake_dir / "_manifest" / f"run={build_pipeline(CONFIG, 'x').run_id}"
    planned_gates = len(reference["tasks"]) + len([e for e in reference["exclusions"] if e[0] == "task_gates"])

    for stage in ("task_gates", "rollouts"):
        output, took = interrupt_during(config, lake_dir, run_dir / stage, env)
        lines = [line for line in output.splitlines() if line.strip()]
        assert lines[-1].startswith(f"interrupted by SIGINT during {stage}; committed shards of run"), output[-2000:]
        assert "resume with `guiforge run" in lines[-1]
        assert "Traceback" not in output and "Crash detected" not in output, output[-3000:]
        assert took < 60, f"exit took {took:.0f}s after SIGINT"
        partial = Lake(lake_dir)
        if stage == "task_gates":
            committed = len(list((run_dir / stage).glob("*.json")))
            assert 1 <= committed < planned_gates, "the interrupt came too late to test anything"
        # Nothing committed after the signal was caused by it: every exclusion is one the
        # uninterrupted run has too, and no trajectory failed its environment.
        got = tables(partial)
        assert set(got["exclusions"]) <= set(reference["exclusions"]), set(got["exclusions"]) - set(reference["exclusions"])
        assert set(got["tasks"]) <= set(reference["tasks"])
        assert set(got["trajectories"]) <= set(reference["trajectories"])
        assert set(got["steps"]) <= set(reference["steps"]), differences(got, reference)
        assert not (lake_dir / "_locks" / f"{run_dir.name}.json").exists(), "the run's lock outlived it"

    rerun = guiforge("run", str(config), "--lake", str(lake_dir), env=env)
    output = rerun.communicate(timeout=600)[0]
    assert rerun.returncode == 0, output[-3000:]
    got = tables(Lake(lake_dir))
    assert got == reference, differences(got, reference)
    assert digests(Lake(lake_dir)) == digests(reference_lake)  # every table, not only the stable columns
    check = subprocess.run([sys.executable, "-m", "guiforge.cli", "lake", "check", "--lake", str(lake_dir)],
                           cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.startswith("lake check ok"), check.stdout


def test_sigterm_exits_143_and_commits_nothing_in_flight(tmp_path):
    """SIGTERM (what a scheduler sends) on the local executor: exit 143, one line, no
    half-written file, and the lake checks clean."""
    config = tmp_path / "term.yaml"
    config.write_text(yaml.safe_dump({"name": "term", "seed": 2, "workers": 2,
                                      "models": {"world_builder": {"provider": "offline"}},
                                      "stages": {"personas": {"count": 400, "shard_size": 10}, "worlds": {}}}))
    lake_dir = tmp_path / "lake"
    proc = guiforge("run", str(config), "--lake", str(lake_dir), "--executor", "local", env=dict(os.environ))
    deadline = time.monotonic() + 300
    while not list(lake_dir.glob("_manifest/*/personas/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()[-2000:]
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    lines = [line for line in output.splitlines() if line.strip()]
    assert proc.returncode == 143, output[-2000:]
    assert lines[-1].startswith("interrupted by SIGTERM during "), output[-2000:]
    assert "Traceback" not in output
    assert [p for p in lake_dir.rglob("*") if ".tmp-" in p.name] == []
    check = subprocess.run([sys.executable, "-m", "guiforge.cli", "lake", "check", "--lake", str(lake_dir)],
                           cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


# Ten rollout shards: however late the signal lands after the first commit, work is left.
LONG_ROLLOUTS = {**CONFIG, "name": "interrupt-long",
                 "stages": {**CONFIG["stages"], "rollouts": {**CONFIG["stages"]["rollouts"], "tasks": 10}}}


@pytest.fixture(scope="module")
def long_reference(tmp_path_factory) -> Lake:
    lake = tmp_path_factory.mktemp("long-reference") / "lake"
    run_pipeline(build_pipeline(LONG_ROLLOUTS, "ref.yaml", lake=str(lake)), executor="local")
    return Lake(lake)


@pytest.mark.timeout(1200)
# CI stops runs by SIGTERM through tests/test_kill_battery.py (local) and the Prefect cancel in
# tests/test_prefect_deploy.py (the runner's killpg SIGTERM to a deployment's flow run)
@pytest.mark.battery
@pytest.mark.parametrize("executor", ["prefect", "local"])
def test_sigterm_during_rollouts_then_resume_gives_the_uninterrupted_tables(tmp_path, long_reference, executor):
    """SIGTERM while rollouts run (Prefect's own SIGTERM handler must not win): exit 143 with
    one line, nothing the signal interrupted committed, and the resumed run's tables (every
    table, content hashes over sorted rows) are the uninterrupted run's."""
    config = tmp_path / "interrupt.yaml"
    config.write_text(yaml.safe_dump(LONG_ROLLOUTS))
    lake_dir = tmp_path / "lake"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    run_dir = lake_dir / "_manifest" / f"run={build_pipeline(LONG_ROLLOUTS, 'x').run_id}"
    output, took = interrupt_during(config, lake_dir, run_dir / "rollouts", env, signal.SIGTERM,
                                    "--executor", executor)
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines[-1].startswith("interrupted by SIGTERM during rollouts; committed shards of run"), output[-2000:]
    assert "Traceback" not in output and "TerminationSignal" not in output, output[-3000:]
    assert took < 60, f"exit took {took:.0f}s after SIGTERM"
    got, want = tables(Lake(lake_dir)), tables(long_reference)
    assert set(got["trajectories"]) <= set(want["trajectories"])  # no env_failure the stop caused
    assert set(got["exclusions"]) <= set(want["exclusions"])
    assert len(got["trajectories"]) < len(want["trajectories"]), "the signal came too late to test anything"

    rerun = guiforge("run", str(config), "--lake", str(lake_dir), "--executor", executor, env=env)
    output = rerun.communicate(timeout=600)[0]
    assert rerun.returncode == 0, output[-3000:]
    assert digests(Lake(lake_dir)) == digests(long_reference)
