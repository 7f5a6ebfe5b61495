"""Environments as a service: ``guiforge envs serve`` as a real subprocess on loopback, its
token, real instances (Chromium for web, the bwrap sandbox for tools) driven through the
client, lease expiry, a host killed under an episode, and a pipeline whose rollouts lost
their env host completed by the rerun."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from guiforge.envs import Action, EnvManager, EnvSpec, TaskSpec, kind_of
from guiforge.envs.service import wire
from guiforge.envs.service.client import EnvHostLost, HostPool
from guiforge.envs.service.kind import RemoteKinds
from guiforge.envs.tools import ToolsEnv
from guiforge.envs.usage import counting
from guiforge.envs.web.sample_world import sample_world
from guiforge.errors import ConfigError
from guiforge.failures import ENV_HOST_LOST
from guiforge.orchestration.compile import build_pipeline
from guiforge.preparers.web_apps import web_setup
from guiforge.stages.rollouts import acquire
from guiforge.testing.env_service import TOKEN, EnvService

TOOLS_TASK = TaskSpec(task_id="tools-note", domain="tools", instruction="answer 42", setup={"files": {"a.txt": "x\n"}},
                      rubric=[{"id": "a", "check": {"fn": "answer_matches", "value": "42"}}])


@pytest.fixture(scope="module")
def service(monkeypatch_module):
    monkeypatch_module.setenv("GUIFORGE_ENVS_TOKEN", TOKEN)
    with EnvService(kinds="web,tools", capacity=2) as svc:
        yield svc


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_requests_without_the_token_are_refused(service):
    assert service.get("/health", token="").status_code == 401
    assert service.get("/capacity", token="not-the-token").status_code == 401
    assert httpx.post(service.url + "/leases", json={"spec": {"domain": "web"}}).status_code == 401
    health = service.get("/health").json()
    assert health["ok"] and health["kinds"] == ["tools", "web"] and health["free"] == 2


def test_serve_without_a_token_says_so_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "guiforge.cli", "envs", "serve", "--port", "0"],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("guiforge envs serve: set GUIFORGE_ENVS_TOKEN to a shared secret "
                                   "(clients send the same)")


def test_a_web_episode_through_the_service(service):
    world = sample_world()
    task = TaskSpec(task_id="remote-mail", domain="web", apps=["mail"], instruction="open the first message",
                    setup=web_setup(world, ["mail"]),
                    rubric=[{"id": "me", "check": {"fn": "state_equals", "path": "mail.me.name", "value": "Maya Patel"}}])
    with EnvManager(RemoteKinds([service.url]), max_instances=1) as manager:
        lease = manager.acquire(EnvSpec(domain="web"))
        assert service.capacity_figures()["leased"] == 1
        obs = lease.reset(task)
        assert obs.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and (obs.width, obs.height) == (1280, 720)
        row = next(e for e in obs.debug["elements"] if (e["id"] or "").startswith("msg-"))
        step = lease.step(Action(type="click", x=row["grid"][0], y=row["grid"][1]))
        assert step.error is None and step.observation.seq == obs.seq + 1
        assert step.observation.debug["path"] == "/mail/inbox/" + row["id"].removeprefix("msg-")
        assert lease.observe().seq == step.observation.seq  # nothing happened since the step
        verdict = lease.evaluate()  # the final state comes over; the verifier runs here
        assert verdict.success and verdict.criteria == {"me": 1}
        state = lease.final_state()  # the click opened (and so read) the message, on the host's page
        opened = row["id"].removeprefix("msg-")
        assert [m["read"] for m in state.apps["mail"]["inbox"] if m["id"] == opened] == [True]
        assert [m["read"] for m in state.initial_apps["mail"]["inbox"] if m["id"] == opened] == [False]
        lease.release()
        # back in this client's pool, the instance holds no slot; the host keeps its browser warm
        figures = service.capacity_figures()
        assert figures["leased"] == 0 and figures["released"] >= 1 and figures["busy_s"] > 0
        started = figures["manager"]["started"]
        with manager.acquire(EnvSpec(domain="web")) as again:
            again.reset(task)
            assert service.capacity_figures()["leased"] == 1
        assert service.capacity_figures()["manager"]["started"] == started


def test_screenshots_travel_as_raw_bytes(service):
    pool = HostPool([service.url], token=TOKEN)
    url, lease_id = pool.acquire(EnvSpec(domain="web"), 60, 60)
    try:
        body = wire.pack({"task": TaskSpec(task_id="raw", domain="web", apps=["mail"], instruction="look").model_dump()})
        response = pool.request(url, "POST", f"/leases/{lease_id}/reset", content=body,
                                headers={"content-type": wire.MEDIA_TYPE})
        assert response.headers["content-type"] == wire.MEDIA_TYPE
        assert b"\x89PNG\r\n\x1a\n" in response.content  # the PNG itself, not base64 text
        head = response.content[4:4 + int.from_bytes(response.content[:4], "big")]
        assert b"iVBOR" not in head and b'"screenshot":{"$bytes":0}' in head
    finally:
        pool.release(url, lease_id)
        pool.close()


def test_a_tools_workspace_comes_back_with_the_final_state(service):
    with EnvManager(RemoteKinds([service.url]), max_instances=1) as manager, \
            manager.acquire(EnvSpec(domain="tools")) as lease:
        lease.reset(TOOLS_TASK)
        lease.step(Action(type="answer", answer="42"))
        state = lease.final_state()
        assert (state.workspace / "a.txt").read_text() == "x\n" and state.answer == "42"
        assert lease.verify(state).success


def test_a_lease_its_client_abandoned_is_reaped_and_its_slot_comes_back(service):
    pool = HostPool([service.url], token=TOKEN)
    before = service.capacity_figures()["reaped"]
    url, lease_id = pool.acquire(EnvSpec(domain="tools"), deadline_s=60, ttl_s=0.5)
    # the client vanishes: nothing renews the lease
    figures = service.wait_for(lambda f: f["reaped"] > before and f["leased"] == 0, what="the orphan reaped")
    assert figures["free"] == 2 and "session reaped" in " ".join(figures["manager"]["faults"])
    with pytest.raises(EnvHostLost, match=f"{ENV_HOST_LOST}: .*lease {lease_id} is not held"):
        pool.request(url, "GET", f"/leases/{lease_id}/observe")
    pool.close()


def test_a_host_that_dies_mid_episode_is_an_env_failure_that_says_so(monkeypatch):
    monkeypatch.setenv("GUIFORGE_ENVS_TOKEN", TOKEN)
    svc = EnvService(kinds="tools", capacity=1).start()
    try:
        with EnvManager(RemoteKinds([svc.url]), max_instances=1) as manager:
            lease = manager.acquire(EnvSpec(domain="tools"))
            lease.reset(TOOLS_TASK)
            svc.kill()
            with pytest.raises(Exception, match=ENV_HOST_LOST) as caught:
                lease.step(Action(type="answer", answer="42"))
            assert type(caught.value).__name__ == "EnvFailure" and lease.broken
            lease.release()
            # the next sample finds no host: an env_failure episode at once, never a reward
            none, episode = acquire(manager, EnvSpec(domain="tools"), "tools-note")
            assert none is None and episode.failure_kind == "env_failure" and episode.verdict is None
            assert ENV_HOST_LOST in episode.error
    finally:
        svc.kill()


def test_a_unit_of_work_counts_its_leases_busy_and_leased_seconds():
    with EnvManager({"tools": ToolsEnv}, max_instances=1) as manager:
        with counting() as usage, manager.acquire(EnvSpec(domain="tools")) as lease:
            lease.reset(TOOLS_TASK)
            lease.step(Action(type="answer", answer="42"))
            busy = usage.busy_s
            assert busy > 0 and usage.leased_s == 0  # leased time is counted at release
        assert usage.busy_s == busy and usage.leased_s >= busy
        with manager.acquire(EnvSpec(domain="tools")) as lease:  # outside any count: nothing added
            lease.reset(TOOLS_TASK)
        assert usage.busy_s == busy


def test_env_hosts_in_the_pipeline_file_are_checked_and_leave_the_run_id_alone():
    base = {"name": "hosts", "stages": {"personas": {"count": 1}}}
    with pytest.raises(ConfigError, match=r"p\.yaml: envs\.1: 'ftp://h:1' is not an env host address"):
        build_pipeline({**base, "envs": ["http://127.0.0.1:8700", "ftp://h:1"]}, "p.yaml")
    hosts = build_pipeline({**base, "envs": ["http://10.0.0.1:8700"]}, "p.yaml")
    assert isinstance(hosts.kinds(), RemoteKinds) and hosts.kinds().kind("web").actions() == kind_of("web").actions()
    assert hosts.run_id == build_pipeline(base, "p.yaml").run_id  # where instances run is not what a run computes


def test_lease_settings_in_the_pipeline_file_reach_every_instance(monkeypatch):
    # envs: {hosts, lease_ttl_s, acquire_s}: a full host is waited on acquire_s, then the
    # episode is an env failure; the host frees an idle lease after lease_ttl_s
    monkeypatch.setenv("GUIFORGE_ENVS_TOKEN", TOKEN)
    base = {"name": "hosts", "stages": {"personas": {"count": 1}}}
    with pytest.raises(ConfigError, match=r"p\.yaml: envs\.hosts\.0: 'ftp://h:1' is not an env host address"):
        build_pipeline({**base, "envs": {"hosts": ["ftp://h:1"]}}, "p.yaml")
    with EnvService(kinds="tools", capacity=1) as svc:
        pipeline = build_pipeline({**base, "envs": {"hosts": [svc.url], "lease_ttl_s": 120, "acquire_s": 1.5}},
                                  "p.yaml")
        assert pipeline.run_id == build_pipeline(base, "p.yaml").run_id
        kind = pipeline.kinds().kind("tools")
        holder, waiter = kind.make(EnvSpec(domain="tools")), kind.make(EnvSpec(domain="tools"))
        holder.start()
        try:
            assert svc.capacity_figures()["leased"] == 1 and holder.ttl_s == 120
            with pytest.raises(EnvHostLost, match=r"no tools slot within 2s"):  # 1.5 s, not the 45 s default
                waiter.start()
        finally:
            holder.close()
