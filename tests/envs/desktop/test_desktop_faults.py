"""Injected faults on a real desktop (guiforge.faults): LibreOffice killed under a step, a
step hung past its deadline; each an EnvFailure naming the injection, the instance replaced.
A terminal desktop has no process of its own to crash (its shell restarts by design)."""

from __future__ import annotations

import pytest

from guiforge.envs import Action, Deadlines, EnvFailure, EnvManager, EnvSpec
from guiforge.envs.desktop import DesktopEnv
from guiforge.faults import FaultsConfig, Injector, unit
from guiforge.faults import envs as env_faults


@pytest.mark.parametrize("kind,says", [("crash", "LibreOffice died"), ("hang", "deadline")])
def test_an_injected_fault_on_a_desktop_is_an_env_failure(task, xlsx_bytes, kind, says):
    t = task(f"fault-{kind}", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"})
    injector = Injector(FaultsConfig(env={kind: 1.0}))
    spec = EnvSpec(domain="desktop", variant="gui")
    with EnvManager({"desktop": DesktopEnv}, deadlines=Deadlines(step_s=5.0), max_instances=1) as manager:
        lease = manager.acquire(spec)
        lease.reset(t)
        first = lease.env
        assert kind in env_faults.applicable(first)
        with injector.shard("test", "s0"), unit(t.task_id, 0), \
                pytest.raises(EnvFailure, match=f"{says}.*injected env fault: {kind}"):
            lease.step(Action(type="click", x=300, y=300))
        lease.release()
        assert manager.stats.replaced == 1 and [i.kind for i in injector.injected] == [kind]
        with manager.acquire(spec) as lease:
            assert lease.env is not first and lease.reset(t).screenshot is not None


def test_a_terminal_desktop_cannot_crash_but_can_hang():
    env = DesktopEnv(EnvSpec(domain="desktop", variant="terminal"))
    assert env_faults.applicable(env) == ("hang",)
