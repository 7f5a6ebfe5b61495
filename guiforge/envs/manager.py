"""The environment manager: leases, deadlines, a warm pool, crash replacement.

Each instance lives on its own actor thread (Playwright's sync API and X clients are bound
to the thread that made them), so every operation can be waited on with a deadline. A
deadline is counted in the awaited work's own time (guiforge.worktime: wall time less what
the actor thread and the instance's processes spent waiting for a CPU), so a loaded machine
stretches it instead of failing work it only slowed down. An
operation past its deadline or an adapter crash raises :class:`EnvFailure`; the instance is
killed and the pool replaces it on the next acquire (an instance that dies while starting is
replaced at once, once). Nothing is evaluated on an instance that is no longer healthy. A
fault is never a reward of 0.

Injected faults (``faults:`` in the pipeline file) are done to the real instance here, at a
step: its process killed, the step hung in the actor thread, its page navigated away.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from typing import Any, TypeVar

from guiforge import shutdown
from guiforge.envs import usage
from guiforge.envs.actions import Action
from guiforge.envs.base import (
    EnvFailure,
    Environment,
    EnvSpec,
    FinalState,
    Observation,
    StepResult,
    TaskSpec,
    VerifierResult,
)
from guiforge.envs.kinds import kind_for
from guiforge.faults import Injection, inject
from guiforge.faults import envs as env_faults
from guiforge.verify.runner import VerifierPool
from guiforge.worktime import WorkClock, wait_own

T = TypeVar("T")
Factory = Callable[[EnvSpec], Environment]


def _finished(future: Future, timeout: float) -> bool:
    return bool(wait_futures([future], timeout=timeout).done)


def _family(pool_key: tuple) -> tuple:
    """A pool key without its viewport and theme: instances that differ only in look."""
    return pool_key[:1] + pool_key[2:-1]


@dataclass
class Deadlines:
    """Each operation's deadline in seconds of the awaited work's own time (see the module);
    the lease's time to live is wall time."""

    start_s: float = 60.0
    reset_s: float = 30.0
    observe_s: float = 10.0
    step_s: float = 30.0
    evaluate_s: float = 20.0
    lease_ttl_s: float = 600.0  # a lease unused this long is reclaimed


@dataclass
class _Instance:
    env: Environment
    actor: ThreadPoolExecutor
    broken: bool = False
    uses: int = 0
    released: threading.Event = field(default_factory=threading.Event)  # set once destroyed
    thread: int = 0  # the actor thread's native id: its wait for a CPU counts in deadlines
    check: Callable[[Environment], bool] | None = None  # the kind's health check (None: the adapter's)

    def __post_init__(self) -> None:
        self.thread = self.actor.submit(threading.get_native_id).result()

    def processes(self) -> list[int]:
        """The instance's processes (what its operations wait on besides the actor thread)."""
        try:
            return list(self.env.processes())
        except Exception:  # a half-started or dying adapter: only the actor thread counts
            return []

    def call(self, fn: Callable[[], T], deadline_s: float, what: str, injection: Injection | None = None,
             check_health: bool = False) -> T:
        if self.broken:
            raise EnvFailure(f"{what}: instance is broken")
        note = f" [{injection.describe()}]" if injection else ""
        clock = WorkClock(self.processes, [self.thread])
        future = self.actor.submit(self._faulty(fn, injection) if injection else fn)
        if not wait_own(lambda timeout: _finished(future, timeout), deadline_s, clock):
            self.broken = True
            # no wall time in the message: it becomes a row, and rows must not depend on load
            raise EnvFailure(f"{what} exceeded its {deadline_s:.1f}s deadline (of its own time){note}")
        try:
            result = future.result()
        except EnvFailure as exc:
            self.broken = True
            raise EnvFailure(f"{exc}{note}") from exc
        except Exception as exc:
            self.broken = True
            raise EnvFailure(f"{what} crashed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}{note}") from exc
        if check_health and not self.healthy():
            # the operation came back, but from a dead process or a page that left the apps
            self.broken = True
            raise EnvFailure(f"{what}: the instance is no longer healthy (its process died or its page is gone){note}")
        return result

    def _faulty(self, fn: Callable[[], T], injection: Injection) -> Callable[[], T]:
        """``fn`` meeting an injected fault, done to the real instance."""
        if injection.kind == "crash":
            env_faults.crash(self.env)  # from this thread: a kill needs no Playwright object
            return fn
        if injection.kind == "hang":
            def hung() -> T:
                env_faults.hang(self.released)
                raise EnvFailure("the instance was destroyed while hung")
            return hung
        if injection.kind == "lose_page":
            def lost() -> T:
                env_faults.lose_page(self.env)
                return fn()
            return lost
        raise ValueError(f"unknown environment fault {injection.kind!r}")

    def park(self) -> bool:
        """Tell the adapter it is idle in the pool (:meth:`Environment.idle`); False when
        that failed (the instance is then not reused)."""
        try:
            self.actor.submit(self.env.idle).result(timeout=15.0)
            return True
        except Exception:
            self.broken = True
            return False

    def healthy(self) -> bool:
        """The adapter's own health check, with a short deadline; never raises."""
        if self.broken:
            return False
        try:
            check = self.check or (lambda env: env.healthy())
            return bool(self.actor.submit(check, self.env).result(timeout=5.0))
        except Exception:
            return False

    def destroy(self) -> None:
        self.released.set()  # an operation hung on purpose returns now
        env = self.env
        kill = getattr(env, "kill", None)
        try:
            if self.broken and kill is not None:
                kill()  # hard stop: the actor thread may be stuck inside the adapter
            else:
                self.actor.submit(env.close).result(timeout=15)
        except Exception:
            if kill is not None:
                kill()
        self.actor.shutdown(wait=False, cancel_futures=True)


@dataclass
class Stats:
    started: int = 0
    reused: int = 0
    failures: int = 0
    replaced: int = 0
    expired: int = 0
    faults: list[str] = field(default_factory=list)


class EnvManager:
    def __init__(
        self,
        factories: dict[str, Factory],
        deadlines: Deadlines | None = None,
        max_instances: int = 3,
        verifier: VerifierPool | None = None,
    ):
        self.factories = factories
        self.deadlines = deadlines or Deadlines()
        self.max_instances = max_instances
        self.verifier = verifier or VerifierPool()
        self._owns_verifier = verifier is None
        self._idle: dict[tuple, list[_Instance]] = defaultdict(list)
        self._leases: dict[int, Lease] = {}
        self._live: dict[tuple, int] = defaultdict(int)
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self.stats = Stats()

    # -- pool --------------------------------------------------------------------------
    def _start(self, spec: EnvSpec, attempts: int = 2) -> _Instance:
        """A started instance; one that dies while starting is destroyed and replaced
        (``attempts`` in all), then the last failure is raised."""
        try:
            factory = self.factories[spec.domain]
        except KeyError:
            raise EnvFailure(f"no adapter registered for domain {spec.domain!r}") from None
        for attempt in range(attempts):
            actor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"env-{spec.domain}")
            inst = _Instance(env=actor.submit(factory, spec).result(), actor=actor,
                             check=kind_for(self.factories, spec.domain).healthy)
            try:
                inst.call(inst.env.start, self.deadlines.start_s, f"start {spec.domain}")
            except EnvFailure as exc:
                self.record_fault(str(exc))
                self.stats.failures += 1
                inst.broken = True
                inst.destroy()
                if attempt + 1 == attempts:
                    raise
                self.stats.replaced += 1
                continue
            self.stats.started += 1
            return inst
        raise AssertionError("unreachable")

    def _limit(self, spec: EnvSpec) -> int:
        """Instances of a domain at once: the stage's setting, capped by the kind's capacity."""
        capacity = kind_for(self.factories, spec.domain).capacity
        return min(self.max_instances, capacity) if capacity else self.max_instances

    def prewarm(self, spec: EnvSpec, n: int) -> None:
        """Start ``n`` instances now so the first tasks do not pay for start-up."""
        for _ in range(n):
            with self._cond:
                if self._live[spec.pool_key] >= self._limit(spec):
                    return
                self._live[spec.pool_key] += 1
            try:
                inst = self._start(spec)
            except BaseException:
                with self._cond:
                    self._live[spec.pool_key] -= 1
                raise
            with self._cond:
                self._idle[spec.pool_key].append(inst)
                self._cond.notify_all()

    def acquire(self, spec: EnvSpec, timeout_s: float = 120.0) -> Lease:
        shutdown.check("before starting an environment")  # a run that is stopping starts none
        key = spec.pool_key
        until = time.monotonic() + timeout_s
        evicted: _Instance | None = None
        with self._cond:
            while True:
                self._reclaim_expired()
                if self._idle[key]:
                    inst = self._idle[key].pop()
                    self.stats.reused += 1
                    break
                family = [k for k in self._live if _family(k) == _family(key)]
                limit = self._limit(spec)
                if self._live[key] < limit and sum(self._live[k] for k in family) < limit:
                    self._live[key] += 1
                    inst = None
                    break
                # Looks share their family's instances: an idle one of another size or theme
                # makes room (a desktop's are fixed when its X server and profile start).
                other = next((k for k in family if k != key and self._idle[k]), None)
                if other is not None and self._live[key] < limit:
                    evicted = self._idle[other].pop()
                    self._live[other] -= 1
                    self._live[key] += 1
                    inst = None
                    break
                left = until - time.monotonic()
                if left <= 0:
                    raise EnvFailure(f"no {spec.domain} environment free within {timeout_s:.0f}s")
                self._cond.wait(timeout=min(left, 1.0))
        if evicted is not None:
            evicted.destroy()
        if inst is None:
            try:
                inst = self._start(spec)
            except BaseException:
                with self._cond:
                    self._live[key] -= 1
                    self._cond.notify_all()
                raise
        lease = Lease(self, next(self._ids), spec, inst)
        with self._cond:
            self._leases[lease.lease_id] = lease
        return lease

    def _give_back(self, lease: Lease) -> None:
        inst = lease._inst
        with self._cond:
            self._leases.pop(lease.lease_id, None)
        if inst.broken or not self._healthy(inst) or not inst.park():
            self.stats.failures += 1
            self.stats.replaced += 1
            inst.destroy()
            with self._cond:
                self._live[lease.spec.pool_key] -= 1
                self._cond.notify_all()
            return
        with self._cond:
            self._idle[lease.spec.pool_key].append(inst)
            self._cond.notify_all()

    def _healthy(self, inst: _Instance) -> bool:
        return inst.healthy()

    def _reclaim_expired(self) -> None:
        now = time.monotonic()
        for lease in list(self._leases.values()):
            if now - lease.last_used > self.deadlines.lease_ttl_s:
                self.stats.expired += 1
                lease._expired = True
                lease._inst.broken = True  # its state is unknown: do not hand it out again
                self._leases.pop(lease.lease_id, None)
                threading.Thread(target=self._drop, args=(lease,), daemon=True).start()

    def _drop(self, lease: Lease) -> None:
        lease._inst.destroy()
        with self._cond:
            self._live[lease.spec.pool_key] -= 1
            self._cond.notify_all()

    def record_fault(self, message: str) -> None:
        self.stats.faults.append(message)

    def close(self) -> None:
        with self._cond:
            idle = [i for insts in self._idle.values() for i in insts]
            leased = [lease._inst for lease in self._leases.values()]
            self._idle.clear()
            self._leases.clear()
            self._live.clear()
        for inst in idle + leased:
            inst.destroy()
        if self._owns_verifier:
            self.verifier.close()

    def __enter__(self) -> EnvManager:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Lease:
    """Exclusive use of one instance until :meth:`release`. Every call has a deadline."""

    def __init__(self, manager: EnvManager, lease_id: int, spec: EnvSpec, inst: _Instance):
        self.manager, self.lease_id, self.spec, self._inst = manager, lease_id, spec, inst
        self.task: TaskSpec | None = None
        self.last_used = self.acquired_at = time.monotonic()
        self.usage = usage.current()  # the unit of work that counts this lease's busy and leased time
        self._expired = False
        self._released = False

    def _call(self, fn: Callable[[], T], deadline_s: float, what: str, injection: Injection | None = None,
              check_health: bool = False) -> T:
        if self._released:
            raise EnvFailure(f"{what}: lease {self.lease_id} was released")
        if self._expired:
            raise EnvFailure(f"{what}: lease {self.lease_id} expired")
        self.last_used = time.monotonic()
        try:
            return self._inst.call(fn, deadline_s, what, injection, check_health)
        except EnvFailure as exc:
            self.manager.record_fault(str(exc))
            raise
        finally:
            if self.usage is not None:
                self.usage.add(busy_s=time.monotonic() - self.last_used)

    @property
    def broken(self) -> bool:
        """The instance failed: the rest of an episode on it cannot be trusted."""
        return self._inst.broken

    @property
    def env(self) -> Environment:
        return self._inst.env

    def capture(self, enabled: bool) -> None:
        """Screenshots on (the default) or off for this lease's episodes."""
        self.env.capture_screenshots = enabled

    def reset(self, task: TaskSpec) -> Observation:
        self.task = task
        self._inst.uses += 1
        return self._call(lambda: self.env.reset(task), self.manager.deadlines.reset_s, f"reset {task.task_id}")

    def observe(self) -> Observation:
        return self._call(self.env.observe, self.manager.deadlines.observe_s, "observe")

    def step(self, action: Action) -> StepResult:
        """One action; a step that leaves the instance unhealthy (a dead browser or
        LibreOffice, a page that left the apps) is an EnvFailure, so no frame of a broken
        screen becomes a step."""
        injection = inject("env", env_faults.applicable(self.env))
        return self._call(lambda: self.env.step(action), self.manager.deadlines.step_s, f"step {action.type}",
                          injection, check_health=True)

    def evaluate(self) -> VerifierResult:
        """The verifier's verdict on the final state (:class:`~guiforge.verify.runner.VerifierFailure`
        when the verifier fails twice); an instance that died on the way is an EnvFailure,
        never a verdict on what it left behind."""
        return self.verify(self.final_state())

    def state_stamp(self) -> str | None:
        """The environment's cheap token of its state (None: it has none)."""
        return self._call(self.env.state_stamp, self.manager.deadlines.observe_s, "state stamp")

    def final_state(self) -> FinalState:
        """The final state as the verifier reads it (reading changes nothing)."""
        if self.task is None:
            raise EnvFailure("evaluate before reset")
        if not self._inst.healthy():
            self._inst.broken = True
            self.manager.record_fault("the instance died before its final state was read")
            raise EnvFailure("the instance died before its final state was read (health check failed)")
        return self._call(self.env.final_state, self.manager.deadlines.evaluate_s, "final state")

    def verify(self, state: FinalState) -> VerifierResult:
        """The verifier's verdict on ``state`` under this lease's task (the package gate also
        scores a final state with a planted side error)."""
        if self.task is None:
            raise EnvFailure("evaluate before reset")
        evaluator = kind_for(self.manager.factories, self.task.domain).evaluator()  # a kind's own reward
        return self.manager.verifier.verify(
            self.task.rubric, state, feasible=self.task.feasible, deadline_s=self.manager.deadlines.evaluate_s,
            **({"evaluator": evaluator, "task": self.task} if evaluator else {}))

    def release(self) -> None:
        if self._released or self._expired:
            return
        self._released = True
        if self.usage is not None:
            self.usage.add(leased_s=time.monotonic() - self.acquired_at)
        self.env.capture_screenshots = True  # the next lease starts with the default
        self.manager._give_back(self)

    def discard(self) -> None:
        """Give the instance back as broken: its state is unknown (a client that vanished
        mid-episode), so it is destroyed and its slot freed, never handed out again."""
        self._inst.broken = True
        self.release()

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
