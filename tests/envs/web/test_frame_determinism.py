"""The same scripted episode, run in fresh browsers, gives the same frames byte for byte: idle,
and with every core oversubscribed by busy processes. Each frame is also checked to be the
one of its step (its number, and the page the step led to), so equal hashes cannot come from
equally stale frames."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from web_env_helpers import Driver, task

from guiforge.envs import Action, EnvManager, EnvSpec, Lease, default_factories
from guiforge.preparers.web_apps import web_setup
from guiforge.worlds.model import World

Episode = Callable[[Lease, World], list[str]]


def _recorder(lease: Lease, world: World, domain: str) -> tuple[Driver, list[str], Callable[[], None]]:
    obs = lease.reset(task(f"det-{domain}", domain, ["travel"], web_setup(world, ["travel"]), []))
    driver = Driver(lease, obs)
    hashes = [hashlib.sha256(obs.screenshot).hexdigest()]
    first = obs.seq

    def record() -> None:
        assert driver.obs.seq == first + len(hashes), "a frame carries another step's number"
        hashes.append(hashlib.sha256(driver.obs.screenshot).hexdigest())

    return driver, hashes, record


def web_episode(lease: Lease, world: World) -> list[str]:
    d, hashes, record = _recorder(lease, world, "web")
    d.click(id="search-to")
    record()
    d.type("Lis")
    record()
    d.click(id="to-option-LIS")
    record()
    d.click(id="search-date")
    record()
    d.type("2024-06-03")
    record()
    d.click(id="search-flights")
    record()
    assert d.path == "/travel/results"
    d.act(Action(type="scroll", x=500, y=600, direction="down", amount=2))
    record()
    return hashes


def mobile_episode(lease: Lease, world: World) -> list[str]:
    d, hashes, record = _recorder(lease, world, "mobile")
    d.act(Action(type="open_app", app="travel"))
    record()
    d.tap(id="search-to")
    record()
    d.type("Lis")
    record()
    d.tap(id="to-option-LIS")
    record()
    d.act(Action(type="swipe", x=500, y=750, x2=500, y2=350))
    record()
    d.act(Action(type="back"))
    record()
    return hashes


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
