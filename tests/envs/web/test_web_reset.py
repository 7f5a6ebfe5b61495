"""Reset: the seed comes back exactly and nothing of the last episode leaks (storage,
cookies, focus, open dialogs and dropdowns, back history); action errors are feedback."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO

import pytest
from PIL import Image
from web_env_helpers import Driver, task

from guiforge.envs import Action, EnvSpec
from guiforge.envs.apps import APP_NAMES
from guiforge.envs.web import WebEnv
from guiforge.envs.web.sample_world import sample_world
from guiforge.preparers.web_apps import web_setup


@pytest.fixture(scope="module")
def seeded(direct_web):
    world = sample_world()
    return task("reset", "web", ["mail"], web_setup(world), [])


def test_reset_restores_seed_exactly(direct_web, seeded):
    env = direct_web
    d = Driver(_Local(env), env.reset(seeded))
    assert env.final_state().apps == seeded.setup["apps"]
    d.click(id="msg-e-invoice")  # marks it read
    d.act(Action(type="goto", text="/shop"))
    d.click(id="filter-cat-travel")
    first_add = next(i for i in d.ids() if i.startswith("add-SKU-"))
    d.click(id=first_add)
    state = env.final_state().apps
    assert state != seeded.setup["apps"] and state["shop"]["cart"]
    env.reset(seeded)
    assert env.final_state().apps == seeded.setup["apps"]
    # byte-identical, not just equal after parsing
    assert json.dumps(env.final_state().apps, sort_keys=True) == json.dumps(seeded.setup["apps"], sort_keys=True)


def test_unseeded_apps_start_empty(direct_web, seeded):
    only_mail = task("only-mail", "web", ["mail"], {"apps": {"mail": seeded.setup["apps"]["mail"]}}, [])
    direct_web.reset(only_mail)
    apps = direct_web.final_state().apps
    assert set(apps) == set(APP_NAMES)
    assert apps["mail"] == seeded.setup["apps"]["mail"] and apps["shop"]["catalog"] == [] and apps["chat"]["threads"] == []


def test_nothing_leaks_across_resets(direct_web, seeded):
    env = direct_web
    d = Driver(_Local(env), env.reset(seeded))
    d.click(id="compose")
    d.click(id="compose-to")
    d.type("someone@example.com")
    d.click(id="compose-attach")  # an open dialog
    page = env.s.page
    page.evaluate("() => { sessionStorage.setItem('x', '1'); localStorage.setItem('junk', '1'); document.cookie = 'c=1; path=/'; }")
    d.act(Action(type="goto", text="calendar"))
    d.act(Action(type="goto", text="bank"))
    obs = env.reset(seeded)
    assert page.evaluate("() => [sessionStorage.length, Object.keys(localStorage), document.cookie]") == [0, ["guiforge.state"], ""]
    assert obs.debug["focus"]["editable"] is False
    assert obs.debug["path"] == "/mail/inbox"
    assert "attach-done" not in {e["id"] for e in obs.debug["elements"]}
    d = Driver(_Local(env), obs)
    r = d.act(Action(type="back"), ok=False)
    assert r.error and "no previous page" in r.error  # the last episode's pages are gone
    r = d.act(Action(type="type", text="x"), ok=False)
    assert r.error and "nothing editable has focus" in r.error
    # a dropdown left open is closed by the next reset too
    d.act(Action(type="goto", text="/bank/transfer"))
    d.click(id="transfer-to")
    assert any((i or "").startswith("transfer-to-option-") for i in d.ids())
    obs = env.reset(seeded)
    assert not any((e["id"] or "").startswith("transfer-to-option-") for e in obs.debug["elements"])


def test_action_errors_do_not_end_the_episode(direct_web, seeded):
    env = direct_web
    d = Driver(_Local(env), env.reset(seeded))
    r = d.act(Action(type="tap", x=10, y=10), ok=False)
    assert r.error and "not in the web action set" in r.error and not r.done
    r = d.act(Action(type="click", x=600, y=990), ok=False)  # empty bottom of the inbox pane
    assert r.error and "hit nothing clickable" in r.error and not r.done
    r = d.act(Action(type="hotkey", keys=["ctrl", "nosuchkey"]), ok=False)
    assert r.error and "unknown key" in r.error
    r = d.act(Action(type="terminate", status="failure"), ok=False)
    assert r.done and r.status == "failure" and env.final_state().status == "failure"
    env.reset(seeded)
    assert env.final_state().status is None and env.final_state().answer is None


def test_observation_geometry_matches_the_grid(direct_web, seeded):
    obs = direct_web.reset(seeded)
    assert (obs.width, obs.height, obs.format) == (1280, 720, "png") and obs.screenshot[:4] == b"\x89PNG"
    assert Image.open(BytesIO(obs.screenshot)).size == (1280, 720)
    assert direct_web.screenshot() == direct_web.screenshot()  # no caret blink: same screen, same bytes
    compose = next(e for e in obs.debug["elements"] if e["id"] == "compose")
    x, y, w, h = compose["box"]
    gx, gy = compose["grid"]
    assert abs(gx * 1279 / 999 - (x + w / 2)) <= 1 and abs(gy * 719 / 999 - (y + h / 2)) <= 1
    assert compose["label"] == "Compose"


def test_reset_reuses_the_page_and_jpeg_works(seeded):
    """A reset loads the task's state into the page that is already there: no new context, no
    new page, no reload (what made resets several times slower); its speed is measured by
    bench/web_env.py, not asserted here."""
    def body() -> tuple[object, bool, object]:
        env = WebEnv(EnvSpec(domain="web"), image_format="jpeg")
        env.start()
        try:
            env.reset(seeded)
            page, context = env.s.page, env.s.page.context
            page.evaluate("window.__keptAcrossResets = 1")  # a reload or a new page would lose it
            for _ in range(3):
                obs = env.reset(seeded)
            same = env.s.page is page and env.s.page.context is context and len(context.pages) == 1
            return obs, same, page.evaluate("window.__keptAcrossResets")
        finally:
            env.close()

    # Playwright's sync API allows one instance per thread; direct_web holds this one.
    with ThreadPoolExecutor(1) as pool:
        obs, same, kept = pool.submit(body).result()
    assert obs.format == "jpeg" and obs.screenshot[:2] == b"\xff\xd8"
    assert same and kept == 1


class _Local:
    """The Lease interface over an env on this thread (step and evaluate only)."""

    def __init__(self, env):
        self.env = env

    def step(self, action):
        return self.env.step(action)


def test_calls_sent_together_answer_in_order(direct_web, seeded):
    """A reset and a step send the screenshot and the element scan together over the env's
    own CDP channel (guiforge.envs.web.cdp): the replies keep the calls' order, the frame is
    the one a lone capture gives, and a failed call raises once all have answered."""
    env = direct_web
    env.reset(seeded)
    params = env.capture_params()
    replies = env.s.cdp.send_together([
        ("Runtime.evaluate", {"expression": "1 + 1", "returnByValue": True}),
        env.frames.capture_call(params),  # a frame drawn now, or Chromium's capture
        ("Runtime.evaluate", {"expression": "location.pathname", "returnByValue": True}),
    ])
    assert replies[0]["result"]["value"] == 2 and replies[2]["result"]["value"] == "/mail/inbox"
    shot, info = env.look()
    assert shot == env.screenshot() == env.frames.image(replies[1], params)
    assert info["path"] == "/mail/inbox" and info["elements"]
    with pytest.raises(Exception, match="No.such"):
        env.s.cdp.send_together([("Runtime.evaluate", {"expression": "1"}), ("No.such", {})])
    assert env.observe().debug["path"] == "/mail/inbox"  # the session still works


def test_a_view_is_finished_when_render_returns(direct_web):
    """The chat log scrolls to its last message inside render() (GF.after), so a reset's
    screenshot, taken right after the load, never shows it half-way."""
    env = direct_web
    setup = web_setup(sample_world(), ["chat"])
    thread = setup["apps"]["chat"]["threads"][0]
    thread["messages"] = thread["messages"] * (40 // len(thread["messages"]) + 1)  # a log that overflows
    setup["start"] = f"/chat/{thread['id']}"
    env.reset(task("chat-scroll", "web", ["chat"], setup, []))
    overflow, top = env.js_sync("() => { GF.render(); const log = document.getElementById('chat-log');"
                                " return [log.scrollHeight - log.clientHeight, log.scrollTop]; }")
    assert overflow > 0, "the log must overflow for this check to mean anything"
    assert abs(top - overflow) <= 1, (overflow, top)
