"""Faults: a killed browser becomes EnvFailure and the manager replaces the instance; a hung
operation past its deadline gets the browser hard-killed."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from web_env_helpers import task

from guiforge.envs import Action, Deadlines, EnvFailure, EnvManager, EnvSpec, default_factories
from guiforge.preparers.web_apps import web_setup


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _wait_dead(pid: int, timeout: float = 10) -> bool:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if _dead(pid):
            return True
        time.sleep(0.1)
    return False


def test_killed_chromium_is_replaced(world):
    t = task("crash", "web", ["mail"], web_setup(world, ["mail"]), [])
    with EnvManager(default_factories(), max_instances=1) as mgr:
        lease = mgr.acquire(EnvSpec(domain="web"))
        lease.reset(t)
        session = lease.env.session
        pid, driver = session.pids[0], session.driver_pid
        os.kill(pid, signal.SIGKILL)  # mid-episode
        with pytest.raises(EnvFailure):
            lease.step(Action(type="click", x=50, y=50))
        lease.release()
        assert mgr.stats.replaced == 1 and mgr.stats.faults
        assert driver is None or _wait_dead(driver)  # kill() took the Playwright driver with it
        again = mgr.acquire(EnvSpec(domain="web"), timeout_s=60)
        try:
            assert again.env.session.pids[0] != pid
            obs = again.reset(t)
            assert obs.debug["path"] == "/mail/inbox"
            assert again.step(Action(type="click", x=50, y=200)).observation.screenshot
        finally:
            again.release()


def test_hung_step_gets_the_browser_killed(world):
    t = task("hang", "web", ["mail"], web_setup(world, ["mail"]), [])
    with EnvManager(default_factories(), deadlines=Deadlines(step_s=1.0), max_instances=1) as mgr:
        lease = mgr.acquire(EnvSpec(domain="web"))
        lease.reset(t)
        pid = lease.env.session.pids[0]
        with pytest.raises(EnvFailure, match="deadline"):
            lease.step(Action(type="wait", amount=4))  # longer than the 1 s step deadline
        lease.release()
        assert _wait_dead(pid)
