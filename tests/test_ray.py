"""`executor: ray`: shards on a real two-node Ray cluster on loopback (`ray start --head` plus
a second node that offers desktop slots), through prefect-ray's RayTaskRunner: `guiforge run
--ray-address` gives the tables of a local run, its shards run in several Ray worker
processes, and a stage's resource hint is honoured."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from guiforge.errors import ConfigError
from guiforge.lake import Lake
from guiforge.lake.manifests import all_entries
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")
pytest.importorskip("prefect_ray")

CONFIG = {"name": "onray", "seed": 7, "workers": 2,
          "models": {"world_builder": {"provider": "offline"}},
          "stages": {"personas": {"count": 12, "shard_size": 3}, "worlds": {"per_persona": 1}}}
KEYS = {"personas": "persona_id", "worlds": "world_id", "exclusions": "subject_id"}


def tables(lake: Lake) -> dict[str, list]:
    return {t: sorted(lake.read_table(t).to_pylist(), key=lambda r: r[k]) for t, k in KEYS.items()}


@pytest.fixture(scope="module")
def cluster():
    from guiforge.testing.ray_loopback import LoopbackCluster

    with LoopbackCluster(head_cpus=1, nodes=[{"num_cpus": 2, "resources": {"desktop": 2}}]) as running:
        yield running


def desktop_node(address: str) -> str:
    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        return next(n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("desktop"))
    finally:
        ray.shutdown()


def test_guiforge_run_on_a_two_node_ray_cluster_gives_the_local_tables(cluster, tmp_path):
    local = build_pipeline(CONFIG, "onray.yaml", lake=str(tmp_path / "local"))
    run_pipeline(local, executor="local")

    # the file as a user writes it; the lake relative to where they run it (Ray's workers
    # start elsewhere: the run hands them its absolute path)
    (tmp_path / "onray.yaml").write_text(yaml.safe_dump({**CONFIG, "ray": {"resources": {"worlds": {"desktop": 1}}}}))
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", "onray.yaml", "--lake", "ray-lake",
                           "--executor", "ray", "--ray-address", cluster.address],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    ray_lake = Lake(tmp_path / "ray-lake")
    assert tables(ray_lake) == tables(Lake(tmp_path / "local"))
    entries = all_entries(ray_lake, local.run_id)  # the executor does not change the run id
    assert len([e for e in entries if e.stage == "worlds"]) == 4
    workers = {(e.body["worker"]["ray_node"], e.body["worker"]["pid"]) for e in entries if e.stage != "_kept"}
    assert len(workers) >= 2, workers  # shards ran in several Ray worker processes
    desktop = desktop_node(cluster.address)
    assert {e.body["worker"]["ray_node"] for e in entries if e.stage == "worlds"} == {desktop}  # asked a desktop slot


def test_the_executor_and_ray_settings_are_checked_before_a_run():
    with pytest.raises(ConfigError, match=r"ray.resources.rollouts: no stage or stage kind 'rollouts'"):
        build_pipeline({**CONFIG, "ray": {"resources": {"rollouts": {"desktop": 1}}}}, "onray.yaml")
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray, not local"):
        build_pipeline(CONFIG, "onray.yaml", executor="local", ray_address="127.0.0.1:6379")
    with pytest.raises(ConfigError, match="executor"):
        build_pipeline({**CONFIG, "executor": "dask"}, "onray.yaml")
    assert build_pipeline(CONFIG, "onray.yaml", ray_address="auto").config.executor == "ray"


def test_credentials_in_prefect_settings_are_not_sent_to_the_cluster(monkeypatch):
    """Ray shows a job's runtime_env to whoever reads the cluster's job list: settings the
    shards need go there, credentials (an auth string, a database DSN) stay on each node."""
    from guiforge.orchestration.ray_cluster import forwarded_env

    monkeypatch.setenv("PREFECT_API_URL", "http://10.0.0.5:4200/api")
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "admin:hunter2")
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "postgresql+asyncpg://u:pw@db/prefect")
    monkeypatch.setenv("GUIFORGE_SHARD_RETRIES", "2")
    env = forwarded_env()
    assert env["PREFECT_API_URL"] == "http://10.0.0.5:4200/api" and env["GUIFORGE_SHARD_RETRIES"] == "2"
    assert "PREFECT_API_AUTH_STRING" not in env and "PREFECT_API_DATABASE_CONNECTION_URL" not in env


def test_an_address_nothing_listens_on_is_one_line_at_once(tmp_path):
    """ray.init retries a dead address for minutes, deaf to SIGTERM: the run refuses it first,
    before it takes the run's lock."""
    import socket

    with socket.socket() as s:  # a port that was free a moment ago and has no listener now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lake, config = tmp_path / "lake", tmp_path / "p.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(config), "--ray-address",
                           f"127.0.0.1:{port}", "--lake", str(lake)], capture_output=True, text=True, timeout=120)
    lines = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert done.returncode == 2 and lines[-1].startswith(f"error: executor ray: nothing answers at 127.0.0.1:{port}"), lines
    assert "Traceback" not in done.stdout + done.stderr
    assert not list(lake.glob("_locks/*")), "a refused address took the run's lock"


def _outside_address() -> str | None:
    """An address of this host that is not loopback (None when it has none)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only the route's source address is chosen
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_a_cluster_on_other_hosts_needs_a_prefect_server_its_nodes_reach(monkeypatch):
    import socket

    from guiforge.errors import GuiforgeError
    from guiforge.orchestration.ray_cluster import probe

    address = _outside_address()
    if address is None:
        pytest.skip("this host has no address besides loopback")
    with socket.socket() as listener:  # stands for a head node on another host: a listening port
        listener.bind((address, 0))
        listener.listen()
        head = f"{address}:{listener.getsockname()[1]}"
        monkeypatch.delenv("PREFECT_API_URL", raising=False)
        with pytest.raises(GuiforgeError, match="cannot reach the run's temporary Prefect server"):
            probe(head)
        monkeypatch.setenv("PREFECT_API_URL", "http://prefect.example:4200/api")
        probe(head)  # a server the nodes reach: fine
