"""Prefect as its users expect, on real servers on loopback: `prefect deploy` from
prefect.yaml against `prefect server start` and a `process` work pool, a triggered
deployment run of data/pipelines/tiny.yaml completing on a worker with its artifacts; and
the temporary server guiforge starts keeping its database with the run."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from guiforge.orchestration.server import migrated_template
from guiforge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
# The migrated empty database guiforge copies for a new run's server (a HOME of the test's own
# would migrate a fresh one, a minute or more here).
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _artifacts(db: Path) -> dict[str, dict]:
    """The latest artifact per key, read straight from the server's SQLite database."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT key, type, data, created FROM artifact WHERE key IS NOT NULL ORDER BY created")
        return {key: {"type": typ, "data": json.loads(data) if data else None} for key, typ, data, _ in rows}


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return {**env, "PATH": f"{BIN}:{env['PATH']}", "PREFECT_UI_ENABLED": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", **extra}


def test_temporary_server_keeps_its_database_with_the_run(tmp_path):
    config = tmp_path / "two.yaml"
    config.write_text("name: two\nseed: 3\nworkers: 2\nmodels: {world_builder: {provider: offline}}\n"
                      "stages: {personas: {count: 6, shard_size: 3}, worlds: {}}\n")
    lake, home = tmp_path / "lake", tmp_path / "home"
    home.mkdir()
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", str(lake)],
                          cwd=PROJECT_ROOT, env=_clean_env(HOME=str(home), XDG_CACHE_HOME=str(CACHE)), capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = (lake / "_prefect").iterdir()
    run_id = run_dir.name.removeprefix("run=")
    assert (run_dir / "prefect.db").stat().st_size > 0
    assert not (home / ".prefect" / "prefect.db").exists()  # the user's shared Prefect home is left alone
    artifacts = _artifacts(run_dir / "prefect.db")
    assert artifacts["guiforge-personas"]["type"] == "markdown"
    assert "| personas | 6 | 6 |" in artifacts["guiforge-personas"]["data"]
    assert "| worlds | 6 | 6 |" in artifacts["guiforge-worlds"]["data"]
    report = lake / "_reports" / f"{run_id}.html"
    # Prefect stores a link artifact as the markdown of its link.
    assert f"(file://{report})" in artifacts["guiforge-report"]["data"]
    assert "<h2>Time and cost</h2>" in report.read_text() and list(report.parent.glob("plotly-*.min.js"))


def test_deploy_from_prefect_yaml_and_run_on_a_process_worker(tmp_path):
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = _clean_env(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_API_URL=api, HOME=str(tmp_path))
    if migrated_template().exists():  # spare the fresh database its minute of migrations
        (tmp_path / "prefect").mkdir()
        shutil.copyfile(migrated_template(), tmp_path / "prefect" / "prefect.db")
    server = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, server.stderr.read().decode()[-2000:]
            try:
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "prefect server start did not answer in 240 s"
            time.sleep(0.5)

        def prefect(*args: str, timeout: float = 240) -> str:
            done = subprocess.run([str(BIN / "prefect"), "--no-prompt", *args], cwd=PROJECT_ROOT, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
            return done.stdout

        prefect("work-pool", "create", "guiforge", "--type", "process")
        prefect("deploy", "--all")  # both deployments of prefect.yaml, the default with its schedule
        lake = tmp_path / "lake"
        prefect("deployment", "run", "guiforge-deployment/tiny", "--param", f"lake={lake}")
        prefect("worker", "start", "--pool", "guiforge", "--run-once", timeout=400)

        with httpx.Client(base_url=api, timeout=30) as client:
            deployments = {d["name"]: d for d in client.post("/deployments/filter", json={}).json()}
            assert set(deployments) >= {"default", "tiny"}
            schedules = deployments["default"]["schedules"]
            assert schedules and schedules[0]["schedule"]["cron"] == "0 2 * * *"
            runs = client.post("/flow_runs/filter", json={"deployments": {"id": {"any_": [deployments["tiny"]["id"]]}}})
            (run,) = runs.json()
            assert run["state"]["type"] == "COMPLETED", run["state"]
            artifacts = client.post("/artifacts/filter", json={}).json()
        keys = {a["key"] for a in artifacts}
        assert {"guiforge-personas", "guiforge-rollouts", "guiforge-report"} <= keys, keys
        assert any(a["type"] == "markdown" and "| trajectories |" in (a["data"] or "") for a in artifacts)
        (link,) = [a for a in artifacts if a["key"] == "guiforge-report"]
        assert f"(file://{lake}/_reports/tiny-" in link["data"]
        assert list((lake / "trajectories").glob("run=tiny-*/*.parquet"))
        assert list((lake / "_reports").glob("tiny-*.html"))
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
