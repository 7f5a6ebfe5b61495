"""The worked example (examples/guiforge-htmlbench), installed with pip the way a user would:
`guiforge validate` accepts its pipeline (a plugin stage, environment kind, checks and model
provider), `guiforge run` on the Prefect path writes its graded rewards to
trajectories.score, and bumping the package's version reruns exactly the shards that used it.
No guiforge file is edited. The Prefect run is a battery (a Prefect server's start-up is most
of its time); CI runs the same checks on the local executor with fewer tasks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from htmlbench_package import EXAMPLE, install, installed

from guiforge.lake import Lake

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
# The migrated empty Prefect database guiforge copies for a run's server (test_prefect_deploy.py).
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


@pytest.fixture
def htmlbench(tmp_path: Path) -> Iterator[Path]:
    """A copy of the example, pip-installed into this venv while the test runs."""
    copy = tmp_path / "guiforge-htmlbench"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
    with installed(copy):
        yield copy


def _guiforge(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PATH=f"{BIN}:{env['PATH']}", HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(CACHE),
               PREFECT_UI_ENABLED="false", PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    return subprocess.run([str(BIN / "guiforge"), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)


def _fingerprints(lake: Path, run_id: str, stage: str) -> set[str]:
    return {e["fingerprint"] for e in Lake(str(lake)).manifest_entries(run_id, stage)}


@pytest.mark.battery
def test_the_htmlbench_package_runs_end_to_end_on_prefect(htmlbench: Path, tmp_path: Path):
    _run_bump_and_rerun(htmlbench, tmp_path, executor="prefect", tasks=4)


def test_the_htmlbench_package_runs_end_to_end(htmlbench: Path, tmp_path: Path):
    """The CI variant: the local executor, two tasks."""
    _run_bump_and_rerun(htmlbench, tmp_path, executor="local", tasks=2)


def _run_bump_and_rerun(htmlbench: Path, tmp_path: Path, executor: str, tasks: int) -> None:
    pipeline = tmp_path / "htmlbench.yaml"
    # the example's pipeline plus a built-in stage that uses none of its plugins
    text = (htmlbench / "pipeline.yaml").read_text()
    assert "count: 4" in text
    pipeline.write_text(text.replace("count: 4", f"count: {tasks}") + "  personas: {count: 2, shard_size: 2}\n")
    checked = _guiforge(tmp_path, "validate", str(pipeline))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run_id = re.search(r"run (htmlbench-[0-9a-f]+)", checked.stdout).group(1)

    lake = tmp_path / "lake"
    done = _guiforge(tmp_path, "run", str(pipeline), "--lake", str(lake), "--executor", executor)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = duckdb.sql(f"SELECT task_id, sample_index, success, score, failure_kind, criteria_json "
                      f"FROM read_parquet('{lake}/trajectories/*/*.parquet') ORDER BY task_id, sample_index").fetchall()
    assert len(rows) == tasks * 3 and all(r[4] is None for r in rows), rows
    # sample k misreads by k x 8% with a 20% tolerance: graded rewards 1.0, 0.6, 0.2 per task
    assert sorted({round(r[3], 2) for r in rows}) == [0.2, 0.6, 1.0]
    assert all('"graded"' in r[5] for r in rows)
    made = duckdb.sql(f"SELECT count(*), count(world_id) FROM read_parquet('{lake}/tasks/*/*.parquet')").fetchall()[0]
    assert made == (tasks, 0)  # tasks without worlds
    pool = duckdb.sql(f"SELECT success_rate FROM read_parquet('{lake}/rl_tasks/*/*.parquet')").fetchall()
    assert [round(p[0], 2) for p in pool] == [0.6] * tasks  # every sample succeeded; the rewards still differ

    before = {s: _fingerprints(lake, run_id, s) for s in ("personas", "htmlbench_tasks", "rollouts")}
    text = (htmlbench / "pyproject.toml").read_text()
    (htmlbench / "pyproject.toml").write_text(text.replace('version = "0.1.0"', 'version = "0.1.1"'))
    install(htmlbench)
    again = _guiforge(tmp_path, "run", str(pipeline), "--lake", str(lake), "--executor", "local")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    after = {s: _fingerprints(lake, run_id, s) for s in before}
    assert after["personas"] == before["personas"]  # no plugin of the package: skipped
    for stage in ("htmlbench_tasks", "rollouts"):  # its stage kind, its kind, checks and provider: rerun
        assert after[stage] and not after[stage] & before[stage], stage
