"""Record a real (local) site once, stop it, replay it: the recording holds none of the live
tokens, two replays are byte-identical, nothing reaches the network, and the manager runs
replay tasks and app tasks on one web instance."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from guiforge.envs import Action, Criterion, EnvManager, EnvSpec, TaskSpec, default_factories
from guiforge.envs.replay import Recording, ReplayEnv
from guiforge.envs.web.grounding import pointer
from guiforge.envs.web.sample_world import sample_world
from guiforge.lake import ContentStore, Lake, ShardContent
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.preparers.web_apps import web_setup

CLOCK_ISO = "2024-01-01T00:00:00"


def replay_task(ref, task_id: str = "replay-order") -> TaskSpec:
    rubric = [Criterion(id="thanks", check={"fn": "state_contains", "path": "replay.url", "text": "/thanks?order="}),
              Criterion(id="item", check={"fn": "state_equals", "path": "replay.submitted[0].form.item", "value": "Teapot"}),
              Criterion(id="offline", required=False, check={"fn": "state_count", "path": "replay.misses[*]", "min": 0, "max": 0})]
    return TaskSpec(task_id=task_id, domain="web", instruction="Order a teapot", setup={"replay": ref}, rubric=rubric)


def order_teapot(act, obs):
    """The episode both replays run: click the field, type, submit (POST, 303, GET)."""
    obs = act(pointer(obs, "click", id="item")).observation
    obs = act(Action(type="type", text="Teapot")).observation
    return act(pointer(obs, "click", id="order"))


@pytest.fixture(scope="module")
def replays(recorded):
    """Two episodes on one ReplayEnv (reset between them), with the page DOM after each."""
    path, _, _ = recorded

    def run() -> list[dict]:
        env = ReplayEnv(EnvSpec(domain="web"))
        env.start()
        try:
            out = []
            for _ in range(2):
                first = env.reset(replay_task(str(path)))
                dom_first = env.s.page.content()
                last = order_teapot(env.step, first)
                assert last.error is None, last.error
                out.append({"shots": [first.screenshot, last.observation.screenshot],
                            "elements": [first.debug["elements"], last.observation.debug["elements"]],
                            "dom": [dom_first, env.s.page.content()], "final": env.final_state().apps["replay"]})
            return out
        finally:
            env.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result(timeout=180)


def test_recording_holds_no_live_token(recorded):
    path, site, _ = recorded
    text = path.read_text()
    issued = {kind: values for kind, values in site.issued.items() if kind != "order"}
    assert all(issued.values()), issued  # the site did hand out every kind of token
    for kind, values in issued.items():
        for value in values:
            assert value not in text, f"live {kind} {value!r} is in the recording"
    rec = Recording.load(path)
    assert {"cookie", "nonce", "token", "time"} <= set(rec.replaced)
    headers = {name for ex in rec.exchanges for name, _ in ex.headers}
    assert "date" not in headers and "content-length" not in headers
    home = next(ex for ex in rec.exchanges if ex.url == site.url)
    body = home.body.decode()
    assert f"Page generated at {CLOCK_ISO}Z" in body and 'nonce="gf-nonce-1"' in body
    assert home.header("content-security-policy") == "script-src 'nonce-gf-nonce-1'"
    assert home.header("set-cookie").startswith("session=gf-cookie-")
    api = next(ex for ex in rec.exchanges if "/api/items" in ex.url)
    assert api.url.endswith("?_=1704067200000") and api.key == f"GET {site.url}api/items"
    data = json.loads(api.body)
    assert data["server_time"] == 1704067200000 and data["request_id"].startswith("gf-token-")
    post = next(ex for ex in rec.exchanges if ex.method == "POST")
    assert post.status == 303 and "csrf_token=gf-token-" in post.request["text"]


def test_two_replays_are_identical(replays):
    one, two = replays
    assert one["shots"] == two["shots"]  # byte-identical PNGs, before and after the order
    assert one["dom"] == two["dom"] and one["elements"] == two["elements"] and one["final"] == two["final"]
    home, thanks = one["dom"]
    assert f"Page generated at {CLOCK_ISO}Z" in home and "<li>Kettle</li>" in home
    assert f"Browser time {CLOCK_ISO}.000Z" in home and f"Stock as of {CLOCK_ISO}.000Z" in home
    assert "First visit" in home  # no cookie, storage or window.name of the first episode reached the second
    assert "Build 7f3a9c loaded" in home  # a redirected subresource is served its target
    assert "for Teapot placed at" in thanks
    final = one["final"]
    assert "/thanks?order=" in final["url"] and final["misses"] == []
    assert final["submitted"][0]["form"]["item"] == "Teapot"
    assert final["submitted"][0]["form"]["csrf_token"].startswith("gf-token-")


def test_replay_never_touches_the_network(recorded, replays):
    _, site, listener = recorded
    hits = site.hits
    assert replays and listener.connections == 0 and site.hits == hits


def test_manager_runs_replays_and_app_tasks(recorded, replays, tmp_path, caplog):
    path, site, listener = recorded
    lake = Lake(tmp_path / "lake")  # the same recording as a lake blob
    content = ShardContent(ContentStore(lake, "blobs"))
    sha = content.add_blob(Recording.load(path).to_bytes(compress=True), name="volatile-shop.json.gz")
    commit_shard(lake, ShardCommit("recordings", "r1", "f1", "k1"), {"blobs": content.rows})
    app_task = TaskSpec(task_id="mail", domain="web", apps=["mail"], instruction="look", setup=web_setup(sample_world()))

    with EnvManager({**default_factories(), "web": ReplayEnv}, max_instances=1) as mgr, \
            caplog.at_level(logging.WARNING, logger="guiforge.envs.replay"):
        lease = mgr.acquire(EnvSpec(domain="web"))
        try:
            obs = lease.reset(replay_task({"sha256": sha, "lake": str(tmp_path / "lake")}))
            assert obs.screenshot == replays[0]["shots"][0]  # another browser, the same pixels
            assert order_teapot(lease.step, obs).error is None
            verdict = lease.evaluate()
            assert verdict.success and verdict.criteria == {"thanks": 1, "item": 1, "offline": 1}, verdict
            result = lease.step(Action(type="goto", text="/not-recorded"))  # answered 404, logged
            assert result.error is None and result.observation.debug["path"] == f"{site.url}not-recorded"
            assert lease.evaluate().criteria["offline"] == 0
            assert [r.getMessage() for r in caplog.records if "not-recorded" in r.getMessage()] == [
                f"replay {lease.env.router.name}: no recorded response for GET {site.url}not-recorded; answered 404"]

            obs = lease.reset(app_task)  # the same instance serves the local apps
            assert obs.debug["path"] == "/mail/inbox" and obs.debug["elements"]
            obs = lease.reset(replay_task(str(path)))  # and goes back to a replay
            assert obs.screenshot == replays[0]["shots"][0]
        finally:
            lease.release()
        assert mgr.stats.started == 1 and mgr.stats.failures == 0
    assert listener.connections == 0
