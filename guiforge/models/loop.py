"""One background event loop for every model call in the process.

Stages run in worker threads; they hand coroutines to this loop, so a single per-endpoint
semaphore caps calls in flight across all shards at once. A coroutine handed over keeps the
caller's fault scope (:mod:`guiforge.faults`): its calls belong to the caller's unit of work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from guiforge.faults.plan import SCOPE, within

T = TypeVar("T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def event_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="guiforge-models", daemon=True).start()
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the shared loop, within the caller's fault scope."""
    return asyncio.run_coroutine_threadsafe(within(SCOPE.get(), coro), event_loop())


def run(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the shared loop and wait for it from this (non-loop) thread."""
    return submit(coro).result(timeout)
