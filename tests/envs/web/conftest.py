"""Real Chromium for the web/mobile tests: one EnvManager per test session, with one warm
web and one warm mobile instance shared by the tests (start-up is the slow part). The
mobile tests run twice: on device-pixel frames (the code's default) and on CSS-pixel frames
(the default pipeline's ``phone_screenshots: css``)."""

from __future__ import annotations

import pytest

from guiforge.envs import EnvManager, EnvSpec, default_factories
from guiforge.envs.web.sample_world import sample_world
from guiforge.worlds.model import World

WEB = EnvSpec(domain="web")


@pytest.fixture(scope="session")
def world() -> World:
    return sample_world()


@pytest.fixture(scope="session")
def manager():
    with EnvManager(default_factories(), max_instances=2) as mgr:
        yield mgr


@pytest.fixture
def web(manager):
    lease = manager.acquire(WEB)
    yield lease
    lease.release()


@pytest.fixture(params=["device", "css"])
def mobile(manager, request):
    lease = manager.acquire(EnvSpec(domain="mobile", screenshot_scale=request.param))
    yield lease
    lease.release()


@pytest.fixture(scope="module")
def direct_web():
    """A WebEnv driven on the test thread (no manager), for checks that need the page."""
    from guiforge.envs.web import WebEnv

    env = WebEnv(WEB)
    env.start()
    yield env
    env.close()
