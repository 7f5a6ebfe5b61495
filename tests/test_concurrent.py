"""Two `guiforge run` processes on one lake at once: different run ids both finish with every
screenshot their steps refer to; a second process on the same run id is refused in one line;
`guiforge lake check` passes afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from guiforge.lake import Lake
from guiforge.lake.check import check_lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

CONFIG = {
    "name": "together", "seed": 9, "workers": 2,
    "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
    "stages": {
        "personas": {"count": 4, "shard_size": 4}, "worlds": {},
        "skills": {"include": ["mail.reply_invoice_total"]},
        "task_candidates": {"per_world": 2}, "task_gates": {"package_gate": False},
        "rollouts": {"samples": 2, "tasks": 2, "tasks_per_shard": 1, "phone_screenshots": "css"},
    },
}


def start(config, lake, run_id: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", str(lake),
                             "--run-id", run_id, "--executor", "local"], cwd=PROJECT_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.timeout(900)
def test_two_runs_at_once_keep_every_image(tmp_path):
    config = tmp_path / "p.yaml"
    config.write_text(json.dumps(CONFIG))
    lake_dir = tmp_path / "lake"
    first, second = start(config, lake_dir, "one"), start(config, lake_dir, "two")
    lock = lake_dir / "_locks" / "run=one.json"
    deadline = time.monotonic() + 120
    while not lock.exists():
        assert first.poll() is None and time.monotonic() < deadline, first.stdout.read()[-2000:]
        time.sleep(0.05)
    refused = start(config, lake_dir, "one")
    out = refused.communicate(timeout=300)[0]
    lines = [x for x in out.splitlines() if x.strip()]
    assert refused.returncode == 2 and "run one is being written by another guiforge process" in lines[-1], out
    assert "Traceback" not in out
    for proc in (first, second):
        out = proc.communicate(timeout=800)[0]
        assert proc.returncode == 0, out[-3000:]

    lake = Lake(lake_dir)
    report = check_lake(lake)
    assert report.ok, report.problems
    stored = set(lake.read_table("images").column("sha256").to_pylist())
    for run_id in ("one", "two"):
        steps = lake.read_table("steps", run_id).column("image_sha256").to_pylist()
        assert steps and set(steps) - {None} <= set(lake.read_table("images", run_id).column("sha256").to_pylist())
        assert set(steps) - {None} <= stored
    trajectories = [lake.read_table("trajectories", r).num_rows for r in ("one", "two")]
    assert trajectories == [4, 4]
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "lake", "check", "--lake", str(lake_dir)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("lake check ok"), done.stdout
    assert build_pipeline(CONFIG, "x").run_id not in lake.runs("steps")
