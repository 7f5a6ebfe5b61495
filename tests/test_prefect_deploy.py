"""Prefect as its users expect, on real servers on loopback: `prefect deploy` from
prefect.yaml against `prefect server start` and a `process` work pool; a triggered
deployment run does what `guiforge run` does (lock, catalog, resume, the stage summaries in
the flow run's log, the report's key tables as a markdown artifact); two triggers of one run
wait for each other instead of redoing the same shards; a cancel from Prefect during
rollouts commits nothing it interrupted, leaves no task run "Running", and the resumed run
ends with the uninterrupted tables. And the temporary server guiforge starts keeps its
database with the run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.orchestration.server import migrated_template
from guiforge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
# The migrated empty database guiforge copies for a new run's server (a HOME of the test's own
# would migrate a fresh one, a minute or more here).
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "CRASHED"}


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
    assert artifacts["guiforge-report"]["type"] == "markdown"  # the key tables, shown by the UI
    assert "| personas | 6 | 2 |" in artifacts["guiforge-report"]["data"], artifacts["guiforge-report"]["data"]
    assert str(report) in artifacts["guiforge-report"]["data"]
    # Prefect stores a link artifact as the markdown of its link.
    assert f"(file://{report})" in artifacts["guiforge-report-html"]["data"]
    assert "<h2>Time and cost</h2>" in report.read_text() and list(report.parent.glob("plotly-*.min.js"))


class Server:
    """`prefect server start`, the guiforge work pool, every deployment of prefect.yaml, and
    one `prefect worker start` that runs what is triggered."""

    def __init__(self, tmp: Path):
        self.port, self.tmp = _free_port(), tmp
        self.api = f"http://127.0.0.1:{self.port}/api"
        self.env = _clean_env(PREFECT_HOME=str(tmp / "prefect"), PREFECT_API_URL=self.api, HOME=str(tmp),
                              XDG_CACHE_HOME=str(CACHE), GUIFORGE_SHARD_RETRY_DELAYS="1,2")
        if migrated_template().exists():  # spare the fresh database its minute of migrations
            (tmp / "prefect").mkdir()
            shutil.copyfile(migrated_template(), tmp / "prefect" / "prefect.db")
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        server = self.spawn("server", "start", "--host", "127.0.0.1", "--port", str(self.port))
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, "prefect server start exited"
            try:
                if httpx.get(f"{self.api}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "prefect server start did not answer in 240 s"
            time.sleep(0.5)
        self.prefect("work-pool", "create", "guiforge", "--type", "process")
        self.prefect("deploy", "--all")  # both deployments of prefect.yaml, the default with its schedule
        self.spawn("worker", "start", "--pool", "guiforge", cwd=self.tmp)  # the runs find the checkout themselves

    def spawn(self, *args: str, cwd: Path = PROJECT_ROOT) -> subprocess.Popen:
        proc = subprocess.Popen([str(BIN / "prefect"), *args], cwd=cwd, env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the worker first, then the server
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()

    def prefect(self, *args: str, timeout: float = 240) -> str:
        done = subprocess.run([str(BIN / "prefect"), "--no-prompt", *args], cwd=PROJECT_ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
        return done.stdout

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.api, timeout=30)

    def trigger(self, **params: str) -> str:
        """Run the `tiny` deployment with ``params``; returns the flow run's id."""
        with self.client() as c:
            (dep,) = [d for d in c.post("/deployments/filter", json={}).json() if d["name"] == "tiny"]
            run = c.post(f"/deployments/{dep['id']}/create_flow_run", json={"parameters": params})
            assert run.status_code < 300, run.text
            return run.json()["id"]

    def flow_run(self, run_id: str) -> dict:
        with self.client() as c:
            return c.get(f"/flow_runs/{run_id}").json()

    def wait_final(self, run_id: str, timeout: float = 900) -> dict:
        deadline = time.monotonic() + timeout
        while (run := self.flow_run(run_id))["state"]["type"] not in FINAL:
            assert time.monotonic() < deadline, f"flow run still {run['state']['type']} after {timeout:.0f}s"
            time.sleep(1)
        return run

    def logs(self, run_id: str) -> list[str]:
        """The log lines of a flow run and of its subflows (the stages)."""
        with self.client() as c:
            runs = c.post("/flow_runs/filter", json={}).json()
            parent_of = {}
            for r in runs:
                if r.get("parent_task_run_id"):
                    parent_of[r["id"]] = c.get(f"/task_runs/{r['parent_task_run_id']}").json()["flow_run_id"]

            def root(rid: str) -> str:
                while rid in parent_of:
                    rid = parent_of[rid]
                return rid

            mine = [r["id"] for r in runs if root(r["id"]) == run_id]
            body = {"logs": {"flow_run_id": {"any_": mine}}, "limit": 200}
            return [x["message"] for x in c.post("/logs/filter", json=body).json()]

    def logs_once(self, run_id: str, *wanted: str, timeout: float = 60) -> list[str]:
        """The run's log lines once each of ``wanted`` is in them (logs ship in batches after
        the run ends), or as they are at ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.logs(run_id)
            if all(any(w in line for line in lines) for w in wanted) or time.monotonic() > deadline:
                return lines
            time.sleep(1)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("prefect-server"))
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()


def test_deploy_from_prefect_yaml_and_run_on_a_process_worker(server, tmp_path):
    lake = tmp_path / "lake"
    run = server.wait_final(server.trigger(lake=str(lake)))
    assert run["state"]["type"] == "COMPLETED", run["state"]
    with server.client() as client:
        deployments = {d["name"]: d for d in client.post("/deployments/filter", json={}).json()}
        assert set(deployments) >= {"default", "tiny"}
        schedules = deployments["default"]["schedules"]
        assert schedules and schedules[0]["schedule"]["cron"] == "0 2 * * *"
        # no path of the deployer's checkout travels: any worker host with a clone runs it
        assert str(PROJECT_ROOT) not in json.dumps(deployments["tiny"]["pull_steps"]), deployments["tiny"]["pull_steps"]
        artifacts = client.post("/artifacts/filter", json={}).json()
    keys = {a["key"] for a in artifacts}
    assert {"guiforge-personas", "guiforge-rollouts", "guiforge-report", "guiforge-report-html"} <= keys, keys
    (report,) = [a for a in artifacts if a["key"] == "guiforge-report"]
    assert report["type"] == "markdown" and "## rows per table" in report["data"]
    assert "| trajectories |" in report["data"] and "## rollouts by domain" in report["data"], report["data"]
    (link,) = [a for a in artifacts if a["key"] == "guiforge-report-html"]
    assert f"(file://{lake}/_reports/tiny-" in link["data"]
    assert list((lake / "trajectories").glob("run=tiny-*/*.parquet"))
    assert list((lake / "_reports").glob("tiny-*.html"))
    # what `guiforge run` does besides running the stages
    assert (lake / "catalog.duckdb").exists(), "no DuckDB catalog"
    assert not list((lake / "_locks").glob("run=*.json")), "the run lock outlived the run"
    logs = "\n".join(server.logs_once(run["id"], "personas: 1 shard(s) run, 0 already committed", "rollouts: "))
    assert "personas: 1 shard(s) run, 0 already committed" in logs, logs[-3000:]
    assert "rollouts: " in logs and "trajectories" in logs


def test_a_problem_the_user_can_fix_fails_the_run_with_its_one_line(server, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a lake")
    run = server.wait_final(server.trigger(lake=str(blocker)), timeout=300)
    assert run["state"]["type"] == "FAILED", run["state"]
    assert run["state"]["message"].startswith(f"lake {blocker}: is a file"), run["state"]
    line = f"error: lake {blocker}: is a file, not a folder; pass another --lake"
    logs = server.logs_once(run["id"], line)
    assert line in logs, logs  # guiforge's own line (Prefect's engine still logs its exit on its own)


@pytest.mark.battery  # ~90 s; CI holds the run lock through tests/test_lock_race.py and tests/test_concurrent.py
def test_two_triggers_of_one_run_wait_for_each_other(server, tmp_path):
    """Two runs of one config at once: one holds the run's concurrency slot and computes the
    shards, the other waits and then finds every shard committed."""
    lake = tmp_path / "lake"
    first, second = server.trigger(lake=str(lake)), server.trigger(lake=str(lake))
    runs = [server.wait_final(first), server.wait_final(second)]
    assert [r["state"]["type"] for r in runs] == ["COMPLETED", "COMPLETED"], [r["state"] for r in runs]
    logs = {r["id"]: "\n".join(server.logs_once(r["id"], "personas: ")) for r in runs}
    computed = [rid for rid, text in logs.items() if "personas: 1 shard(s) run" in text]
    resumed = [rid for rid, text in logs.items() if "personas: 0 shard(s) run, 1 already committed" in text]
    assert len(computed) == 1 and len(resumed) == 1, logs


INTERRUPTED = {
    "name": "cancelme", "seed": 5, "workers": 2,
    "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
    "stages": {
        "personas": {"count": 4, "shard_size": 4}, "worlds": {},
        "skills": {"include": ["mail.reply_invoice_total", "contacts.phone_info", "calendar.event_time_info"]},
        "task_candidates": {"per_world": 3}, "task_gates": {"package_gate": False},
        "rollouts": {"samples": 2, "tasks": 6, "tasks_per_shard": 1, "phone_screenshots": "css"},
    },
}


def test_a_cancel_during_rollouts_commits_nothing_it_interrupted_and_the_resume_matches(server, tmp_path):
    from test_interrupt import digests, tables

    reference = tmp_path / "reference"
    run_pipeline(build_pipeline(INTERRUPTED, "ref.yaml", lake=str(reference)), executor="local")
    config = tmp_path / "cancelme.yaml"
    config.write_text(yaml.safe_dump(INTERRUPTED))
    lake = tmp_path / "lake"
    manifests = lake / "_manifest" / f"run={build_pipeline(INTERRUPTED, 'x').run_id}" / "rollouts"
    run_id = server.trigger(config=str(config), lake=str(lake))
    deadline = time.monotonic() + 600
    while not (manifests.exists() and list(manifests.glob("*.json"))):
        assert server.flow_run(run_id)["state"]["type"] not in FINAL, server.flow_run(run_id)["state"]
        assert time.monotonic() < deadline, "rollouts never committed a shard"
        time.sleep(0.2)
    server.prefect("flow-run", "cancel", run_id)
    run = server.wait_final(run_id, timeout=300)
    assert run["state"]["type"] == "CANCELLED", run["state"]
    # every task run ends in a final state: none is left "Running" by the cancel
    with server.client() as client:
        deadline = time.monotonic() + 120
        while True:
            open_runs = [t for t in client.post("/task_runs/filter", json={}).json()
                         if t["state"] and t["state"]["type"] not in FINAL]
            if not open_runs or time.monotonic() > deadline:
                break
            time.sleep(1)
    assert not open_runs, [(t["name"], t["state"]["type"]) for t in open_runs]
    got, want = tables(Lake(lake)), tables(Lake(reference))
    assert set(got["trajectories"]) <= set(want["trajectories"]), "the cancel turned into env_failure rows"
    assert set(got["exclusions"]) <= set(want["exclusions"])
    assert len(got["trajectories"]) < len(want["trajectories"]), "the cancel came too late to test anything"
    assert not list((lake / "_locks").glob("run=*.json")), "the run lock outlived the cancelled run"

    resumed = server.wait_final(server.trigger(config=str(config), lake=str(lake)))
    assert resumed["state"]["type"] == "COMPLETED", resumed["state"]
    assert digests(Lake(lake)) == digests(Lake(reference))
