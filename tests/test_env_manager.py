"""The environment manager's own logic: warm pool reuse, deadlines, lease expiry and
replacement of a broken instance. A minimal in-process adapter stands in for a browser so
each behaviour can be provoked on purpose (the real adapters have their own tests)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from guiforge.envs import Action, Deadlines, EnvFailure, EnvManager, EnvSpec, TaskSpec
from guiforge.envs.base import Environment, FinalState, Observation, StepResult


class Counter(Environment):
    """A counter app: 'click' increments; 'wait' sleeps (to hang past a deadline)."""

    domain = "web"
    started = 0

    def start(self) -> None:
        Counter.started += 1
        self.value = 0
        self.thread = threading.get_ident()

    def reset(self, task: TaskSpec) -> Observation:
        self._same_thread()
        self.value = int(task.setup.get("start", 0))
        return self.observe()

    def observe(self) -> Observation:
        return Observation(text=str(self.value))

    def step(self, action: Action) -> StepResult:
        self._same_thread()
        if action.type == "wait":
            time.sleep(float(action.amount or 0))
        elif action.type == "click":
            self.value += 1
        return StepResult(self.observe(), feedback="ok")

    def final_state(self) -> FinalState:
        return FinalState(apps={"counter": {"value": self.value}})

    def close(self) -> None:
        pass

    def _same_thread(self) -> None:
        assert threading.get_ident() == self.thread, "adapters are used from their own actor thread only"


TASK = TaskSpec(task_id="t", domain="web", instruction="click twice", setup={"start": 1},
                rubric=[{"id": "three", "check": {"fn": "state_equals", "path": "counter.value", "value": 3}}])
SPEC = EnvSpec(domain="web")


@pytest.fixture
def manager():
    Counter.started = 0
    m = EnvManager({"web": Counter}, Deadlines(step_s=0.5, lease_ttl_s=0.3), max_instances=2)
    yield m
    m.close()


def test_lease_reset_step_evaluate_and_warm_reuse(manager):
    with manager.acquire(SPEC) as lease:
        assert lease.reset(TASK).text == "1"
        assert not lease.evaluate().success
        lease.step(Action(type="click", x=1, y=1))
        lease.step(Action(type="click", x=1, y=1))
        assert lease.evaluate().success
    with manager.acquire(SPEC) as lease:  # the warm instance comes back
        assert lease.reset(TASK).text == "1"
    assert Counter.started == 1 and manager.stats.reused == 1


def test_a_step_past_its_deadline_is_an_env_failure_and_the_instance_is_replaced(manager):
    lease = manager.acquire(SPEC)
    lease.reset(TASK)
    with pytest.raises(EnvFailure, match="deadline"):
        lease.step(Action(type="wait", amount=2))
    lease.release()
    assert manager.stats.replaced == 1
    with manager.acquire(SPEC) as fresh:
        assert fresh.reset(TASK).text == "1"
    assert Counter.started == 2


def test_an_idle_lease_expires_and_its_instance_is_reclaimed(manager):
    first = manager.acquire(SPEC)
    second = manager.acquire(SPEC)
    time.sleep(0.4)
    third = manager.acquire(SPEC, timeout_s=5)  # the pool was full; the expired leases are reclaimed
    with pytest.raises(EnvFailure, match="expired"):
        first.reset(TASK)
    assert manager.stats.expired == 2
    third.release()
    second.release()


def test_pool_limit_blocks_until_a_lease_is_released(manager):
    a, b = manager.acquire(SPEC), manager.acquire(SPEC)
    with pytest.raises(EnvFailure, match="no web environment free"):
        manager.acquire(SPEC, timeout_s=0.2)
    threading.Timer(0.1, a.release).start()
    c = manager.acquire(SPEC, timeout_s=5)
    c.release()
    b.release()


def test_prewarm_starts_instances_up_front(manager):
    manager.prewarm(SPEC, 2)
    assert Counter.started == 2
    with manager.acquire(SPEC), manager.acquire(SPEC):
        pass
    assert Counter.started == 2


def test_instances_that_differ_only_in_look_share_the_family_cap():
    """A desktop's screen size and theme are fixed per instance: a new look takes the place
    of an idle instance of another look instead of adding one past the cap."""
    closed = []

    class Look(Counter):
        def close(self) -> None:
            closed.append(self.spec.viewport)

    Counter.started = 0
    looks = [EnvSpec(domain="web", viewport=(1280, 720)), EnvSpec(domain="web", viewport=(1920, 1080)),
             EnvSpec(domain="web", viewport=(1366, 768), theme="office-sepia")]
    with EnvManager({"web": Look}, max_instances=2) as mgr:
        first, second = mgr.acquire(looks[0]), mgr.acquire(looks[1])
        first.release()
        second.release()
        third = mgr.acquire(looks[2], timeout_s=5)  # both idle: one of them makes room
        assert Counter.started == 3 and len(closed) == 1
        held = mgr.acquire(looks[2], timeout_s=5)  # the other idle one makes room too
        assert Counter.started == 4 and len(closed) == 2
        with pytest.raises(EnvFailure):  # two leased, none idle: the family is full
            mgr.acquire(looks[0], timeout_s=0.5)
        third.release()
        again = mgr.acquire(looks[2], timeout_s=5)  # the same look comes back warm
        assert Counter.started == 4
        again.release()
        held.release()


SPIN = ("import sys, time\n"
        "need = float(sys.argv[1])\n"
        "while need < 0 or time.process_time() < need:\n"
        "    pass\n")


class Worker(Environment):
    """An adapter whose step waits on a child process that needs ``amount`` CPU seconds
    (for ever when negative, in the action's text): the work a browser or LibreOffice does for a step."""

    domain = "web"

    def start(self) -> None:
        self.child: subprocess.Popen | None = None
        self.walls: list[float] = []

    def processes(self) -> list[int]:
        child = self.child
        return [child.pid] if child is not None else []

    def reset(self, task: TaskSpec) -> Observation:
        return Observation(text="ready")

    def observe(self) -> Observation:
        return Observation(text="ready")

    def step(self, action: Action) -> StepResult:
        started = time.monotonic()
        self.child = subprocess.Popen([sys.executable, "-c", SPIN, action.text or "0"])
        try:
            self.child.wait()
        finally:
            self.walls.append(time.monotonic() - started)
        return StepResult(self.observe(), feedback="done")

    def final_state(self) -> FinalState:
        return FinalState(apps={})

    def close(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()

    kill = close  # the manager's hard stop, from another thread


def test_a_deadline_counts_the_works_own_time_so_load_only_stretches_it(oversubscribed_cores):
    """A step that needs 1 s of a CPU, on cores oversubscribed by busy processes, takes
    longer than its 2 s deadline in wall time; counted in its own time (wall time less its
    wait for a CPU) it is well within, so it is a step, not an env_failure. A step that spins
    for ever still ends at its deadline of own time (the spinning child is killed with the
    instance)."""
    with EnvManager({"web": Worker}, Deadlines(step_s=2.0)) as manager, manager.acquire(SPEC) as lease:
        lease.reset(TASK)
        assert lease.step(Action(type="wait", text="1.0")).feedback == "done"
        wall = lease.env.walls[-1]
        assert wall > 2.0, f"the load did not slow the step past its deadline ({wall:.1f}s): this proves nothing"
    with EnvManager({"web": Worker}, Deadlines(step_s=0.5)) as manager, manager.acquire(SPEC) as lease:
        lease.reset(TASK)
        with pytest.raises(EnvFailure, match=r"exceeded its 0\.5s deadline \(of its own time"):
            lease.step(Action(type="wait", text="-1"))
