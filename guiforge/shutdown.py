"""The process-wide "shutting down" flag: SIGINT and SIGTERM stop a run, they do not fail it.

A signal sets the flag and, on a thread of its own, runs the registered callbacks (closing
environment pools, so shards in flight stop at once). From then on the engine commits no
shard: whatever a shard computed after the signal (an environment, verifier or OCR error
caused by the shutdown itself) is discarded, never recorded as an exclusion or a reward.
A second signal ends the process at once.

CPython runs a signal's handler on the main thread only, and only once that thread runs
again; the kernel may deliver the signal to any thread, leaving a main thread blocked in a
wait asleep. So the main thread never waits without a deadline: :func:`join` and
:func:`as_completed` wake every :data:`TICK_S` seconds, and a handler runs within that.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait

from guiforge.errors import GuiforgeError

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}

TICK_S = 0.2  # how long the main thread may sleep before a signal's handler runs
_event = threading.Event()
_signal: int | None = None
_stage: str | None = None
_callbacks: list[Callable[[], None]] = []
_lock = threading.Lock()


class Interrupted(GuiforgeError):
    """The run stopped on a signal; ``exit_code`` is 130 (SIGINT) or 143 (SIGTERM)."""

    def __init__(self, message: str, signum: int = signal.SIGINT):
        super().__init__(message)
        self.signum = signum
        self.exit_code = EXIT_CODES.get(signum, 130)


def note_stage(name: str) -> None:
    """The stage running now, for the line an interruption prints."""
    global _stage
    _stage = name


def current_stage() -> str | None:
    return _stage


def requested() -> bool:
    return _event.is_set()


def signal_number() -> int:
    return _signal or signal.SIGINT


def signal_name() -> str:
    return signal.Signals(signal_number()).name


def on_shutdown(callback: Callable[[], None]) -> Callable[[], None]:
    """Run ``callback`` (once, off the signal handler) when a shutdown is requested; returns
    a function that unregisters it."""
    with _lock:
        _callbacks.append(callback)

    def remove() -> None:
        with _lock:
            if callback in _callbacks:
                _callbacks.remove(callback)

    return remove


def _run_callbacks() -> None:
    with _lock:
        callbacks = list(_callbacks)
    for callback in callbacks:
        with contextlib.suppress(Exception):  # best effort: the run is stopping anyway
            callback()


def request(signum: int = signal.SIGINT) -> None:
    """Ask the run to stop (what the signal handler does; tests call it directly)."""
    global _signal
    if _event.is_set():
        return
    _signal = signum
    _event.set()
    threading.Thread(target=_run_callbacks, name="guiforge-shutdown", daemon=True).start()


def _handler(signum, frame) -> None:
    if _event.is_set():  # a second ^C: the user does not want to wait
        os._exit(EXIT_CODES.get(signum, 130))
    request(signum)


def reset() -> None:
    """Clear the flag (tests running several runs in one process)."""
    global _signal, _stage
    _event.clear()
    _signal, _stage = None, None


def check(what: str = "") -> None:
    """Raise :class:`Interrupted` if a shutdown was requested."""
    if _event.is_set():
        raise Interrupted(f"interrupted by {signal_name()}" + (f" {what}" if what else ""), signal_number())


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """Install the handlers for SIGINT and SIGTERM (main thread only), restore on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in EXIT_CODES}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def join(thread: threading.Thread) -> None:
    """Wait for ``thread`` while letting signal handlers run on this (the main) thread."""
    while thread.is_alive():
        thread.join(TICK_S)


def as_completed(futures: Iterable[Future]) -> Iterator[Future]:
    """``concurrent.futures.as_completed``, waking every TICK_S so a signal's handler runs."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=TICK_S, return_when=FIRST_COMPLETED)
        yield from done
