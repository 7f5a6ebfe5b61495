"""Frames drawn on demand (guiforge.envs.web.frames): on the headless shell a web page has no
clock of its own; an action gets one while it runs; a frame drawn on demand is the same
image Chromium's own clock draws for the same state."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from web_env_helpers import task

from guiforge.envs import Action, EnvSpec
from guiforge.envs.web import WebEnv
from guiforge.envs.web.browser import CHROMIUM, begin_frames_supported
from guiforge.envs.web.grounding import pointer
from guiforge.envs.web.sample_world import sample_world
from guiforge.preparers.web_apps import web_setup

# resolves 'frame' when a frame is drawn within 300 ms, else 'timer'
RACE = "() => new Promise(r => { requestAnimationFrame(() => r('frame')); setTimeout(() => r('timer'), 300); })"


@pytest.fixture(scope="module")
def mail():
    return task("frames", "web", ["mail"], web_setup(sample_world(), start="mail"), [])


def test_the_headless_shell_draws_on_demand(direct_web):
    assert begin_frames_supported(), f"{CHROMIUM} is not the headless shell; apt-get install chromium-headless-shell"
    assert direct_web.frames.name == "begin_frame"


def test_a_page_has_a_clock_only_while_an_action_runs(direct_web, mail):
    env = direct_web
    env.reset(mail)
    assert env.js(RACE) == "timer"  # nothing draws between actions
    with env.frames.pumping():
        assert env.js(RACE) == "frame"
    assert env.js(RACE) == "timer"  # and the clock stopped with the action


def test_a_failed_action_stops_the_clock(direct_web, mail):
    env = direct_web
    env.reset(mail)
    with pytest.raises(ZeroDivisionError), env.frames.pumping():
        env.js(RACE)
        1 / 0  # noqa: B018
    assert env.js(RACE) == "timer"
    assert env.observe().screenshot  # and the next frame is drawn as usual


def test_frames_on_demand_match_chromiums_own_clock(direct_web, mail, monkeypatch):
    """Reset, click a star, open the shop, scroll: each frame drawn on demand is byte for byte
    the frame of a browser left on its own clock (GUIFORGE_BEGIN_FRAMES=0) in the same state."""
    monkeypatch.setenv("GUIFORGE_BEGIN_FRAMES", "0")
    clocked = WebEnv(EnvSpec(domain="web"))
    with ThreadPoolExecutor(1) as thread:  # one sync Playwright per thread
        on_thread = thread.submit
        on_thread(clocked.start).result()
        try:
            assert clocked.frames.name == "vsync"
            ours, theirs = direct_web.reset(mail), on_thread(clocked.reset, mail).result()
            assert ours.screenshot == theirs.screenshot
            star = pointer(ours, "click", id="star-e-dan")
            scroll = Action(type="scroll", x=600, y=600, direction="down", amount=3)
            last = ours.screenshot
            for action in (star, Action(type="goto", text="shop"), scroll):
                a, b = direct_web.step(action), on_thread(clocked.step, action).result()
                assert a.error is None and b.error is None, (a.error, b.error)
                assert a.observation.screenshot == b.observation.screenshot, action.type
                assert a.observation.screenshot != last, f"{action.type} changed nothing on screen"
                last = a.observation.screenshot
            assert direct_web.final_state().apps == on_thread(clocked.final_state).result().apps
        finally:
            on_thread(clocked.close).result()
