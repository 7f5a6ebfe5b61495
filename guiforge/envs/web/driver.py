"""Playwright's node driver in a session of its own.

A stop addressed to the whole process group (Prefect cancels a flow run with ``killpg``
SIGTERM; ^C in a terminal sends SIGINT to the foreground group) must reach guiforge alone:
guiforge sets its shutdown flag first and then closes the browsers itself, so nothing a
browser does while dying can become a row. Chromium already runs in a group of its own
(Playwright starts it detached); the driver, a plain child, does not, and a driver killed
by the group's signal takes every page with it while the shards are still running. So the
driver starts through ``setsid``. When guiforge dies without closing it (SIGKILL), the
driver sees its pipe close and closes its browsers, as it always does.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from playwright._impl._driver import compute_driver_executable

NODE_VARIABLE = "PLAYWRIGHT_NODEJS_PATH"  # the node executable Playwright's transport runs
_lock = threading.Lock()


def _wrapper_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"guiforge-{os.getuid()}"


def _write_wrapper(node: str, setsid: str) -> Path:
    """An executable that execs ``node`` as the leader of a new session; written atomically."""
    folder = _wrapper_dir()
    folder.mkdir(mode=0o700, exist_ok=True)
    script = f'#!/bin/sh\nexec {setsid} "{node}" "$@"\n'
    path = folder / f"playwright-node-{hashlib.sha256(script.encode()).hexdigest()[:12]}"
    if not path.exists() or path.read_text() != script:
        scratch = folder / f".{path.name}.{os.getpid()}.{threading.get_ident()}"
        scratch.write_text(script)
        scratch.chmod(0o700)
        os.replace(scratch, path)
    return path


def in_own_session() -> None:
    """Make every Playwright driver this process starts from now on lead its own session
    (idempotent; without ``setsid`` on PATH the driver stays in ours)."""
    with _lock:
        current = os.environ.get(NODE_VARIABLE)
        if current and Path(current).parent == _wrapper_dir():
            return
        setsid = shutil.which("setsid")
        if setsid is None:
            return
        node = current or compute_driver_executable()[0]
        os.environ[NODE_VARIABLE] = str(_write_wrapper(node, setsid))
