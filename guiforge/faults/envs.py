"""Environment faults done to the real adapters: the real browser or LibreOffice process is
killed, an operation hangs in the instance's actor thread past its deadline, the page
navigates away from the apps. The environment manager (``envs/manager.py``) calls these
where :func:`guiforge.faults.inject` says a step meets a fault; nothing else changes, so
the adapter and the manager have to notice the fault themselves.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any


def _browser_pids(env: Any) -> list[int]:
    session = getattr(env, "session", None)
    return list(getattr(session, "pids", None) or [])


def _office_box(env: Any) -> Any:
    office = getattr(env, "office", None)
    return getattr(office, "_box", None) if office is not None else None


def applicable(env: Any) -> tuple[str, ...]:
    """The faults this instance can meet: ``crash`` needs a process of its own to kill (a
    browser, LibreOffice; the sandbox shell restarts by design), ``lose_page`` a page."""
    kinds = ["hang"]
    if _browser_pids(env) or _office_box(env) is not None:
        kinds.append("crash")
    if getattr(getattr(env, "session", None), "page", None) is not None:
        kinds.append("lose_page")
    return tuple(kinds)


def crash(env: Any) -> None:
    """SIGKILL the instance's browser (its process group) or LibreOffice (its sandbox);
    safe from any thread. Playwright's driver is left alone: it reports the dead browser."""
    for pid in _browser_pids(env):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    box = _office_box(env)
    if box is not None:
        for pid in [*box.tree_pids(), box.proc.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            box.proc.wait(timeout=10)  # reaped: the adapter sees its exit code, not a zombie


def lose_page(env: Any) -> None:
    """Navigate the page away from the apps (run in the instance's actor thread)."""
    env.session.page.goto("about:blank")


def hang(released: threading.Event) -> None:
    """Block (in the actor thread) until the instance is destroyed: the operation never
    returns, so the manager's deadline decides."""
    released.wait()
