"""Which injected fault strikes where: scopes that name the unit of work, seeded decisions,
and the record of what was injected.

A stage opens a shard scope (:func:`shard_faults`) and a unit scope per unit of work
(:func:`unit`: a task's sample, a judged trajectory). An injection point asks :func:`inject`
at each of its operations; per unit and site one uniform draw, a hash of (seed, stage,
task, sample, site), says which fault (if any) the unit meets, and a second one at which of
its first ``span`` operations it strikes. Never ``random``: the same config injects the
same faults whatever the load or the thread that runs the unit. Never the shard key either
where a unit is named: it holds upstream file names, which differ from run to run.

The scope lives in a context variable, so it follows the unit into the model calls made on
its behalf (:mod:`guiforge.models.loop` carries it) and is absent everywhere else.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from guiforge.faults.config import FaultsConfig

T = TypeVar("T")
# per site, the kinds in the order their intervals of the draw are laid out
KINDS = {"env": ("crash", "hang", "lose_page"),
         "model": ("rate_limit", "server_error", "timeout", "truncated", "malformed"),
         "verifier": ("crash", "hang")}
FAILURE_OF = {"env": "env_failure", "model": "model_failure", "verifier": "verifier_failure"}


@dataclass(frozen=True)
class Injection:
    stage: str
    shard: str
    task: str | None
    sample: int | str | None
    site: str  # env | model | verifier
    op: int  # the unit's n-th operation at this site
    kind: str

    @property
    def failure_kind(self) -> str:
        return FAILURE_OF[self.site]

    def describe(self) -> str:
        return f"injected {self.site} fault: {self.kind}"


class Injector:
    """A run's fault plan: decides, and keeps what it injected (thread-safe)."""

    def __init__(self, config: FaultsConfig):
        self.config = config
        self._lock = threading.Lock()
        self.injected: list[Injection] = []

    def _draw(self, *parts: Any) -> float:
        digest = hashlib.sha256(json.dumps([self.config.seed, *parts], default=str).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def planned(self, site: str, key: tuple) -> tuple[str, int] | None:
        """(kind, strike) the unit ``key`` meets at ``site``, with strike a draw in [0, 1)
        scaled by the caller's span; None if it meets none."""
        rates = self.config.rates(site)
        if not rates:
            return None
        u, edge = self._draw(site, "kind", *key), 0.0
        for kind in KINDS[site]:
            edge += rates.get(kind, 0.0)
            if u < edge:
                return kind, self._draw(site, "at", *key)
        return None

    def record(self, injection: Injection) -> None:
        with self._lock:
            self.injected.append(injection)

    @contextlib.contextmanager
    def shard(self, stage: str, shard_key: str) -> Iterator[list[Injection]]:
        """The scope of one shard's work; yields the list its injections go to."""
        scope = _Scope(self, {"stage": stage, "shard": shard_key})
        token = SCOPE.set(scope)
        try:
            yield scope.log
        finally:
            SCOPE.reset(token)


@dataclass
class _Scope:
    injector: Injector
    key: dict[str, Any]
    spans: dict[str, int] = field(default_factory=dict)
    ops: Counter = field(default_factory=Counter)
    log: list[Injection] = field(default_factory=list)  # the shard's, shared by its units
    lock: threading.Lock = field(default_factory=threading.Lock)


SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("guiforge_faults", default=None)


def inject(site: str, applicable: Iterable[str] | None = None) -> Injection | None:
    """The fault this operation of the current unit meets, or None (always None outside a
    fault scope). ``applicable``: the kinds this operation can meet (an environment with no
    page cannot lose it); a planned fault that strikes where it cannot happen is dropped."""
    scope = SCOPE.get()
    if scope is None:
        return None
    with scope.lock:
        op = scope.ops[site]
        scope.ops[site] += 1
    key = (scope.key.get("stage"), scope.key.get("shard"), scope.key.get("task"), scope.key.get("sample"))
    # a unit is its stage, task and sample; an operation outside any unit belongs to its shard
    drawn = (key[0], *key[2:]) if "task" in scope.key else key[:2]
    planned = scope.injector.planned(site, drawn)
    if planned is None:
        return None
    kind, at = planned
    if int(at * scope.spans.get(site, 1)) != op or (applicable is not None and kind not in set(applicable)):
        return None
    injection = Injection(*key, site=site, op=op, kind=kind)
    scope.injector.record(injection)
    with scope.lock:
        scope.log.append(injection)
    return injection


@contextlib.contextmanager
def unit(task: str | None, sample: int | str | None = None, **spans: int) -> Iterator[None]:
    """The unit of work the operations inside belong to (a task's sample, a judged
    trajectory); ``spans``: per site, how many of its first operations a fault may strike
    (default 1: the first). Does nothing outside a shard scope."""
    parent = SCOPE.get()
    if parent is None:
        yield
        return
    token = SCOPE.set(_Scope(parent.injector, {**parent.key, "task": task, "sample": sample}, spans,
                             log=parent.log, lock=parent.lock))
    try:
        yield
    finally:
        SCOPE.reset(token)


@contextlib.contextmanager
def shard_faults(ctx, stage: str, shard_key: str) -> Iterator[None]:
    """The fault scope of one shard of ``stage``, where the run's pipeline declares faults.
    What the shard injected is written to ``<lake>/_faults/run=<run_id>/<stage>/`` when it
    finishes (the same each time it runs: the plan is seeded)."""
    config: FaultsConfig | None = getattr(ctx.pipeline.config, "faults", None)
    if config is None or not config.enabled:
        yield
        return
    injector = ctx.resource("fault-injector", lambda: Injector(config))
    with injector.shard(stage, shard_key) as log:
        yield
    from guiforge.faults.log import (
        write_log,  # the lake's modules (pyarrow): not in the verifier worker
    )

    write_log(ctx.lake, ctx.run_id, stage, shard_key, log)  # not reached when the shard fails


def carried(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` bound to the current fault scope, for a pool thread to run (threads start
    with an empty context)."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.copy().run(fn, *args, **kwargs)


async def within(scope: _Scope | None, awaitable):
    """Await ``awaitable`` inside ``scope`` (a task on the model loop starts with none)."""
    if scope is not None:
        SCOPE.set(scope)  # this task's own context: nothing outside it changes
    return await awaitable
