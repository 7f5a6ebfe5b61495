"""How many calls one endpoint gets at once, and how long to wait before a retry.

:class:`EndpointLimiter` caps calls in flight at the configured concurrency and adapts below
it (AIMD): a 429 means the server is full, so the limit drops to the number of our calls it
was still serving (what it can take from us right now); each success then raises the limit
again while all its slots are busy, by one per success up to half the limit before the
drop and by one per round trip beyond, so the client probes for capacity freed by other
clients without a 429 storm.
:func:`retry_after_s` reads the server's ``retry-after-ms`` / ``retry-after`` hint.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections import deque
from collections.abc import Mapping
from typing import Literal

Outcome = Literal["ok", "rate_limited", "error"]
MAX_HINT_S = 120.0  # a longer hint is treated as no hint (exponential backoff instead)
# 429: rate limited; 529: Anthropic's "overloaded". Both mean "send fewer at once".
CONGESTION_STATUSES = frozenset({429, 529})


class EndpointLimiter:
    """Calls in flight to one endpoint. Not thread-safe: every model call runs on the one
    event loop of :mod:`guiforge.models.loop` (futures are made on the caller's loop)."""

    def __init__(self, ceiling: int):
        if ceiling < 1:
            raise ValueError(f"concurrency must be at least 1, not {ceiling}")
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.threshold = float(ceiling)  # below it the limit grows fast (slow start)
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def slots(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self, retry: bool = False) -> None:
        """Wait for a slot. A retry queues ahead of first attempts: it was submitted earlier,
        and sent to the back it would run last and stretch the end of a batch."""
        if self.in_flight < self.slots and not self._waiters:
            self._take()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if retry:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release("error")  # the slot was handed over as we were cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def release(self, outcome: Outcome) -> None:
        # Only a full window says anything about room for more: while fewer calls than the
        # limit are queued, successes must not raise it (else it drifts past the server's).
        was_full = self.in_flight >= self.slots
        self.in_flight -= 1
        if outcome == "rate_limited":
            self.rate_limited += 1
            # The server turned this call away while serving our other calls: that is its
            # capacity for us now. Later rejections only lower it to what is still in flight.
            dropped = max(1.0, min(self.limit, float(self.in_flight)))
            if dropped < self.limit:
                self.threshold = max(dropped, self.limit / 2)
                self.limit = dropped
        elif outcome == "ok" and was_full and self.limit < self.ceiling:
            step = 1.0 if self.limit < self.threshold else 1.0 / self.limit
            self.limit = min(float(self.ceiling), self.limit + step)
        self._wake()

    def _take(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.slots:
            waiter = self._waiters.popleft()
            if waiter.done():  # cancelled while queued
                continue
            self._take()
            waiter.set_result(None)

    def snapshot(self) -> dict[str, float | int]:
        return {"ceiling": self.ceiling, "limit": round(self.limit, 2), "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight, "rate_limited": self.rate_limited}


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms`` (OpenAI-style), else
    ``retry-after`` as seconds or an HTTP date; None when absent, unreadable or too long."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            if name == "retry-after-ms":
                continue
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                return None
            seconds = email.utils.mktime_tz(parsed) - time.time()
        return max(0.0, seconds) if seconds <= MAX_HINT_S else None
    return None
