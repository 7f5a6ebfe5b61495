"""Frames that belong to their step (guiforge.envs.web.settle): every frame is numbered with the
reset or step it follows, the first frame of an episode shows that episode's state or the
reset fails, and a frame waits for what the step started (a late click, a navigation).

Chromium delivers a tap's click on its own schedule; here the page delivers it late on
purpose (a few animation frames after the touch), which is the case a loaded machine makes."""

from __future__ import annotations

import pytest
from web_env_helpers import crit, task

from guiforge.envs import Action, EnvFailure, EnvSpec, Observation, StepResult
from guiforge.envs.web.settle import TAP_FRAMES
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import run_episode
from guiforge.harness.parser import format_reply
from guiforge.harness.policies import Reply, TurnInput
from guiforge.preparers.web_apps import web_setup

# A touch on the home screen's Mail icon, then (optionally) its click ``late`` frames later.
TOUCH = """(late) => {
  const icon = document.getElementById("open-mail");
  const touch = new Touch({identifier: 1, target: icon, clientX: 40, clientY: 40});
  icon.dispatchEvent(new TouchEvent("touchstart", {touches: [touch], bubbles: true}));
  icon.dispatchEvent(new TouchEvent("touchend", {changedTouches: [touch], bubbles: true, cancelable: true}));
  if (late === null) return;
  let n = 0;
  const tick = () => (++n < late ? requestAnimationFrame(tick) : icon.click());
  requestAnimationFrame(tick);
}"""


@pytest.fixture
def phone(manager):
    lease = manager.acquire(EnvSpec(domain="mobile", screenshot_scale="css"))
    yield lease
    lease.release()


@pytest.fixture
def home(world):
    return task("seq-home", "mobile", ["mail"], web_setup(world, ["mail"]), [])


def test_frames_carry_the_number_of_the_operation_they_follow(direct_web, world):
    env = direct_web
    t = task("seq", "web", ["mail"], web_setup(world, start="mail"), [])
    first = env.reset(t).seq
    assert env.step(Action(type="click", x=500, y=500)).observation.seq == first + 1
    assert env.step(Action(type="click", x=999, y=999)).observation.seq == first + 2  # hit nothing: still a step
    assert env.observe().seq == first + 2  # a look is not an operation
    assert env.step(Action(type="answer", text="done")).observation.seq == first + 3
    assert env.reset(t).seq == first + 4


def test_the_first_frame_shows_the_new_episode_or_the_reset_fails(web, world):
    mail = task("seq-mail", "web", ["mail"], web_setup(world, start="mail"), [])
    travel = task("seq-travel", "web", ["travel"], web_setup(world, ["travel"]), [])
    assert web.reset(travel).debug["path"].startswith("/travel")
    # the state no longer loads (a page that lost its script, a load that went wrong): the
    # screen still shows the last episode, which must never pass for the new one's first frame
    web.env.js_sync("() => { guiforge.loadState = () => null; return true; }")
    with pytest.raises(EnvFailure, match="shows the state of episode"):
        web.reset(mail)


def test_a_click_that_arrives_frames_after_the_touch_is_in_the_frame(phone, home):
    assert phone.reset(home).debug["path"] == "/"
    phone.env.js(TOUCH, 6)  # the touch ends now; its click comes six frames later
    assert phone.observe().debug["path"] == "/mail"


def test_a_touch_whose_click_never_comes_is_an_environment_fault(phone, home):
    phone.reset(home)
    phone.env.js(TOUCH, None)
    with pytest.raises(EnvFailure, match=f"did not arrive within {TAP_FRAMES} frames"):
        phone.observe()


def test_a_navigation_in_flight_is_waited_for(direct_web, world):
    """A key that makes the page load another document: the frame is the new document's,
    loaded (its requests are served by the router while the env waits)."""
    env = direct_web
    env.reset(task("seq-nav", "web", ["mail"], web_setup(world, start="mail"), []))
    env.js_sync("() => { addEventListener('keydown', (e) => { if (e.key === 'F9') location.assign('/calendar/week'); });"
                " return true; }")
    obs = env.step(Action(type="key", keys=["f9"])).observation
    assert obs.debug["path"] == "/calendar/week"
    assert "view-month" in {e["id"] for e in obs.debug["elements"]}  # the calendar app has drawn
    assert env.s.page.evaluate("() => document.readyState") == "complete"


class ScriptPolicy:
    """Answers with the given actions in order (the guiforge JSON format)."""

    name = "script"

    def __init__(self, actions: list[Action]):
        self.actions = list(actions)

    def act(self, turn: TurnInput) -> Reply:
        return Reply(format_reply("next", self.actions[turn.step_index]))


class StaleLease:
    """A lease whose ``stale_at``-th step returns the frame from before the action (what a
    screenshot taken too early looks like)."""

    def __init__(self, lease, stale_at: int):
        self.lease, self.stale_at, self.steps = lease, stale_at, 0
        self.last: Observation | None = None

    def reset(self, task):
        self.last = self.lease.reset(task)
        return self.last

    def step(self, action: Action) -> StepResult:
        result = self.lease.step(action)
        self.steps += 1
        if self.steps == self.stale_at:
            result = StepResult(self.last, feedback=result.feedback)
        self.last = result.observation
        return result

    def evaluate(self):
        return self.lease.evaluate()


def test_a_stale_frame_ends_the_episode_as_an_environment_failure(web, world):
    t = task("seq-harness", "web", ["mail"], web_setup(world, start="mail"), [crit("any", "state_count", path="mail.sent", min=0)])
    t.max_steps = 4
    actions = [Action(type="click", x=500, y=500)] * 3 + [Action(type="terminate", status="success")]
    clean = run_episode(web, t, ScriptPolicy(actions), ContextPolicy())
    assert not clean.env_failure and len(clean.steps) == 4
    stale = run_episode(StaleLease(web, stale_at=2), t, ScriptPolicy(actions), ContextPolicy())
    assert stale.env_failure and "stale frame" in stale.error
    assert len(stale.steps) == 1  # the step whose frame was stale is not recorded
