"""The environment service's leases: who holds which of the host's slots, until when.

A client acquires a slot with a deadline (how long it will wait for one) and a time to live;
every operation renews the lease. A lease unused past its time to live belongs to a client
that vanished: the reaper takes it back, discards its instance (its state is unknown) and
counts it, so the slot comes back. A lease with an operation in flight is never reaped (the
environment manager's deadlines bound the operation). The table also keeps the time each
lease was held and the time its instance was busy, for utilisation (busy over leased).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from guiforge.envs.base import EnvSpec
from guiforge.envs.manager import EnvManager, Lease


class LeaseGone(LookupError):
    """The lease is not (or no longer) held: released, reaped, or never issued."""


class NoSlot(RuntimeError):
    """Every slot stayed taken until the acquire's deadline."""


@dataclass
class HostLease:
    lease_id: str
    lease: Lease
    ttl_s: float
    acquired: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    busy_s: float = 0.0
    in_flight: int = 0


@dataclass
class Totals:
    acquired: int = 0
    released: int = 0
    reaped: int = 0
    busy_s: float = 0.0
    leased_s: float = 0.0


class LeaseTable:
    """The host's slots (``capacity``) over one environment manager."""

    def __init__(self, manager: EnvManager, capacity: int, reap_every_s: float = 0.5,
                 clock: Callable[[], float] = time.monotonic):
        self.manager, self.capacity, self.clock = manager, capacity, clock
        self.totals = Totals()
        self._leases: dict[str, HostLease] = {}
        self._pending = 0  # slots promised to acquires still starting an instance
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap_loop, args=(reap_every_s,), name="lease-reaper",
                                        daemon=True)
        self._reaper.start()

    # -- slots --------------------------------------------------------------------------
    def acquire(self, spec: EnvSpec, deadline_s: float, ttl_s: float) -> HostLease:
        until = self.clock() + deadline_s
        with self._cond:
            while len(self._leases) + self._pending >= self.capacity:
                left = until - self.clock()
                if left <= 0:
                    raise NoSlot(f"all {self.capacity} slots stayed leased for {deadline_s:.0f}s")
                self._cond.wait(timeout=min(left, 0.5))
            self._pending += 1
        try:
            lease = self.manager.acquire(spec, timeout_s=max(until - self.clock(), 1.0))
        finally:
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()
        held = HostLease(secrets.token_hex(12), lease, ttl_s, acquired=self.clock(), last_used=self.clock())
        with self._cond:
            self._leases[held.lease_id] = held
            self.totals.acquired += 1
        return held

    @contextmanager
    def use(self, lease_id: str) -> Iterator[HostLease]:
        """The lease, renewed and marked busy while the block runs."""
        with self._cond:
            held = self._leases.get(lease_id)
            if held is None:
                raise LeaseGone(f"lease {lease_id} is not held (released, or reaped after its time to live)")
            held.in_flight += 1
            started = self.clock()
        try:
            yield held
        finally:
            with self._cond:
                now = self.clock()
                held.in_flight -= 1
                held.busy_s += now - started
                held.last_used = now

    def renew(self, lease_id: str) -> HostLease:
        with self.use(lease_id) as held:
            return held

    def release(self, lease_id: str) -> None:
        held = self._take(lease_id)
        if held is None:
            raise LeaseGone(f"lease {lease_id} is not held (released, or reaped after its time to live)")
        self.totals.released += 1
        held.lease.release()

    def _take(self, lease_id: str) -> HostLease | None:
        with self._cond:
            held = self._leases.pop(lease_id, None)
            if held is not None:
                self.totals.busy_s += held.busy_s
                self.totals.leased_s += self.clock() - held.acquired
                self._cond.notify_all()
            return held

    # -- the reaper ---------------------------------------------------------------------
    def reap(self) -> int:
        """Take back every lease unused past its time to live; returns how many."""
        now = self.clock()
        with self._cond:
            orphans = [h.lease_id for h in self._leases.values()
                       if h.in_flight == 0 and now - h.last_used > h.ttl_s]
        reaped = 0
        for lease_id in orphans:
            held = self._take(lease_id)
            if held is None:
                continue
            reaped += 1
            self.totals.reaped += 1
            self.manager.record_fault(f"lease {lease_id} unused for {held.ttl_s:.0f}s: its client is gone, "
                                      "session reaped")
            held.lease.discard()
        return reaped

    def _reap_loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.reap()

    # -- figures ------------------------------------------------------------------------
    def figures(self) -> dict:
        """Slots, lease counts and busy/leased time (open leases counted up to now)."""
        now = self.clock()
        with self._cond:
            held = list(self._leases.values())
            busy = self.totals.busy_s + sum(h.busy_s for h in held)
            leased = self.totals.leased_s + sum(now - h.acquired for h in held)
            return {"capacity": self.capacity, "leased": len(held), "starting": self._pending,
                    "free": max(self.capacity - len(held) - self._pending, 0),
                    "acquired": self.totals.acquired, "released": self.totals.released,
                    "reaped": self.totals.reaped, "busy_s": round(busy, 4), "leased_s": round(leased, 4),
                    "utilisation": round(busy / leased, 4) if leased > 0 else None}

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            held = list(self._leases)
        for lease_id in held:
            h = self._take(lease_id)
            if h is not None:
                h.lease.discard()
