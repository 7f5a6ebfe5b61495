"""The same scripted episode, run in fresh browsers, gives the same frames byte for byte: idle,
and with every core oversubscribed by busy processes. Each frame is also checked to be the
one of its step (its number, and the page the step led to), so equal hashes cannot come from
equally stale frames. The screens around the apps (a browser, a phone's bars) are drawn."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from web_env_helpers import Driver, task

from guiforge.envs import Action, EnvManager, EnvSpec, Lease, default_factories
from guiforge.preparers.web_apps import web_setup
from guiforge.worlds.model import World

Episode = Callable[[Lease, World], list[str]]


Step = Callable[[Driver], object]

WEB: list[Step] = [
    lambda d: d.click(id="search-to"),
    lambda d: d.type("Lis"),
    lambda d: d.click(id="to-option-LIS"),
    lambda d: d.click(id="search-date"),
    lambda d: d.type("2024-06-03"),
    lambda d: d.click(id="search-flights"),
    lambda d: d.act(Action(type="scroll", x=500, y=600, direction="down", amount=2)),
]
MOBILE: list[Step] = [
    lambda d: d.act(Action(type="open_app", app="travel")),
    lambda d: d.tap(id="search-to"),
    lambda d: d.type("Lis"),
    lambda d: d.tap(id="to-option-LIS"),
    lambda d: d.act(Action(type="swipe", x=500, y=750, x2=500, y2=350)),
    lambda d: d.act(Action(type="back")),
]


# the screens around the apps are drawn too: the browser's tabs and toolbar, the phone's bars
SCREENS = {"web": {"browser": {"tabs": 2, "offset": 3}}, "mobile": {"phone": {"nav": "buttons", "battery": 57}}}


def play(lease: Lease, world: World, domain: str, steps: list[Step]) -> list[str]:
    """The frames' sha256 of one scripted travel episode, each checked to carry its step's number."""
    spec = task(f"det-{domain}", domain, ["travel"], web_setup(world, ["travel"]), [])
    obs = lease.reset(spec.model_copy(update={"presentation": SCREENS[domain]}))
    driver = Driver(lease, obs)
    hashes = [hashlib.sha256(obs.screenshot).hexdigest()]
    for step in steps:
        step(driver)
        assert driver.obs.seq == obs.seq + len(hashes), "a frame carries another step's number"
        hashes.append(hashlib.sha256(driver.obs.screenshot).hexdigest())
    return hashes


def web_episode(lease: Lease, world: World) -> list[str]:
    hashes = play(lease, world, "web", WEB)
    assert lease.observe().debug["path"] == "/travel/results"
    return hashes


def mobile_episode(lease: Lease, world: World) -> list[str]:
    return play(lease, world, "mobile", MOBILE)


CASES = {
    "web": (EnvSpec(domain="web"), web_episode),
    "mobile-device": (EnvSpec(domain="mobile", screenshot_scale="device"), mobile_episode),
    "mobile-css": (EnvSpec(domain="mobile", screenshot_scale="css"), mobile_episode),
}


def fresh_run(spec: EnvSpec, episode: Episode, world: World, episodes: int = 2) -> list[list[str]]:
    """``episodes`` runs of the episode on one new browser (the second starts from the
    first's end state, as a pooled instance does)."""
    with EnvManager(default_factories(), max_instances=1) as manager:
        lease = manager.acquire(spec)
        try:
            return [episode(lease, world) for _ in range(episodes)]
        finally:
            lease.release()


@pytest.mark.parametrize("case", sorted(CASES))
def test_identical_runs_give_identical_frames(case, world):
    spec, episode = CASES[case]
    first, second = fresh_run(spec, episode, world), fresh_run(spec, episode, world)
    assert first[0] == first[1] == second[0] == second[1]
    assert len(set(first[0])) >= 5, "the episode should change the screen at most steps"


@pytest.mark.parametrize("case", sorted(CASES))
def test_frames_are_the_same_on_oversubscribed_cores(case, world, request):
    spec, episode = CASES[case]
    idle = fresh_run(spec, episode, world, episodes=1)[0]
    request.getfixturevalue("oversubscribed_cores")  # from here on every core has 3 busy loops
    loaded = fresh_run(spec, episode, world)
    assert loaded == [idle, idle]
