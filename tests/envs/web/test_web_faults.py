"""Environment faults injected into real Chromium (guiforge.faults): the browser process
killed, a step hung past its deadline, the page navigated away. Each must come back as an
EnvFailure that names the injection, and the instance is replaced; an instance whose
browser dies while it starts is replaced at once."""

from __future__ import annotations

import pytest
from web_env_helpers import task

from guiforge.envs import Action, Deadlines, EnvFailure, EnvManager, EnvSpec, default_factories
from guiforge.envs.web import WebEnv
from guiforge.faults import FaultsConfig, Injector, unit
from guiforge.faults import envs as env_faults
from guiforge.preparers.web_apps import web_setup


@pytest.mark.parametrize("kind,says", [("crash", "crashed"), ("hang", "deadline"), ("lose_page", "")])
def test_an_injected_fault_is_an_env_failure_and_the_instance_is_replaced(world, kind, says):
    t = task(f"fault-{kind}", "web", ["mail"], web_setup(world, ["mail"]), [])
    injector = Injector(FaultsConfig(env={kind: 1.0}))
    with EnvManager(default_factories(), deadlines=Deadlines(step_s=3.0), max_instances=1) as mgr:
        lease = mgr.acquire(EnvSpec(domain="web"))
        lease.reset(t)
        first = lease.env.session.pids[0]
        with injector.shard("test", "s0"), unit(t.task_id, 0), \
                pytest.raises(EnvFailure, match=f"{says}.*injected env fault: {kind}"):
            lease.step(Action(type="click", x=50, y=200))
        assert lease.broken
        lease.release()
        assert [(i.kind, i.op) for i in injector.injected] == [(kind, 0)]
        assert mgr.stats.replaced == 1
        with mgr.acquire(EnvSpec(domain="web"), timeout_s=60) as again:  # a new browser, sound
            assert again.env.session.pids[0] != first
            assert again.reset(t).debug["path"] == "/mail/inbox"
            assert again.step(Action(type="click", x=50, y=200)).observation.screenshot


def test_a_dead_instance_is_never_evaluated(world):
    """A browser that died after its last step leaves no verdict: evaluate is an EnvFailure."""
    t = task("dies-late", "web", ["mail"], web_setup(world, ["mail"]), [])
    with EnvManager(default_factories(), max_instances=1) as mgr, mgr.acquire(EnvSpec(domain="web")) as lease:
        lease.reset(t)
        lease.step(Action(type="click", x=50, y=200))
        env_faults.crash(lease.env)
        with pytest.raises(EnvFailure, match="before its final state"):
            lease.evaluate()


class DiesWhileStarting(WebEnv):
    """Real Chromium, killed by the first instance's start before it finished."""

    starts = 0

    def start(self) -> None:
        super().start()
        DiesWhileStarting.starts += 1
        if DiesWhileStarting.starts == 1:
            env_faults.crash(self)
            self.s.page.evaluate("() => 1")  # start's last look meets the dead browser


def test_an_instance_that_dies_at_start_is_replaced(world):
    t = task("dies-at-start", "web", ["mail"], web_setup(world, ["mail"]), [])
    with EnvManager({"web": DiesWhileStarting}, max_instances=1) as mgr:
        with mgr.acquire(EnvSpec(domain="web")) as lease:
            assert lease.reset(t).debug["path"] == "/mail/inbox"
        assert DiesWhileStarting.starts == 2 and mgr.stats.replaced == 1
        assert any("start web crashed" in f for f in mgr.stats.faults)
