"""One writer per run: a lock file in the lake root for each run being written.

``<lake>/_locks/run=<run_id>.json`` holds the writer's pid, host, a token and a heartbeat. A
second process on the same run is refused with one line; different runs write at once.

The lock cannot race (exclusive.py says how, per filesystem): it appears with its whole
content or not at all (never an empty file another process could mistake for a stale
lock), and taking over a stale lock is one compare-and-swap against the version that was
judged stale, so of two processes that both saw it stale exactly one wins. A lock is stale
when its process is gone (same host: the pid, and its start time, so a reused pid is not
mistaken for the writer) or its heartbeat stopped (another host).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from guiforge.errors import GuiforgeError
from guiforge.lake.exclusive import ExclusiveFile
from guiforge.lake.store import Lake

LOCK_DIR = "_locks"
HEARTBEAT_S = 30.0
STALE_AFTER_S = 180.0
log = logging.getLogger(__name__)


class RunLocked(GuiforgeError):
    pass


def lock_path(lake: Lake, run_id: str) -> str:
    return lake.path(LOCK_DIR, f"run={run_id}.json")


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux), None where unknown."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _pid_alive(pid: int, started: str | None = None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    # A pid the kernel gave to another process since: not the writer.
    return started is None or _process_start(pid) in (None, started)


def _decode(data: bytes) -> dict[str, Any]:
    try:
        holder = json.loads(data)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def read_lock(lake: Lake, run_id: str) -> dict[str, Any] | None:
    current = ExclusiveFile(lake).read(lock_path(lake, run_id))
    return None if current is None else _decode(current[0])


def is_live(holder: dict[str, Any] | None) -> bool:
    """Whether the process that wrote ``holder`` still holds it (an unreadable lock: no)."""
    if not holder:
        return False
    if holder.get("host") == socket.gethostname():
        return _pid_alive(int(holder.get("pid", -1)), holder.get("pid_start"))
    return time.time() - float(holder.get("heartbeat_at", 0)) < STALE_AFTER_S


def live_runs(lake: Lake) -> set[str]:
    """Runs some live process is writing now (``lake gc`` leaves them alone)."""
    out = set()
    for p in lake._ls(lake.path(LOCK_DIR)):
        name = posixpath.basename(p)
        if name.startswith("run=") and name.endswith(".json"):
            run_id = name[4:-5]
            if is_live(read_lock(lake, run_id)):
                out.add(run_id)
    return out


class RunLock:
    def __init__(self, lake: Lake, run_id: str):
        self.lake, self.run_id = lake, run_id
        self.path = lock_path(lake, run_id)
        self.token = uuid.uuid4().hex
        self.lost = False  # another process took the lock over (our heartbeat had stopped)
        self._store = ExclusiveFile(lake)
        self._version: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.time()

    def _body(self) -> bytes:
        return json.dumps({"run_id": self.run_id, "pid": os.getpid(), "pid_start": _process_start(os.getpid()),
                           "host": socket.gethostname(), "token": self.token, "started_at": self._started,
                           "heartbeat_at": time.time()}, sort_keys=True).encode()

    def _refuse(self, holder: dict[str, Any]) -> RunLocked:
        return RunLocked(
            f"run {self.run_id} is being written by another guiforge process (pid {holder.get('pid')} on "
            f"{holder.get('host')}) in lake {self.lake.uri}; wait for it to finish, or use another --run-id "
            f"(a stale lock is {self.path}: delete it only if that process is gone)")

    def acquire(self) -> RunLock:
        self._started = time.time()
        for _ in range(20):  # each pass either wins, refuses, or saw the lock change under it
            self._version = self._store.create(self.path, self._body())
            if self._version:
                break
            current = self._store.read(self.path)
            if current is None:
                continue  # released meanwhile: try again
            holder = _decode(current[0])
            if is_live(holder):
                raise self._refuse(holder)
            # Stale: replace exactly the version judged stale; if it changed, look again.
            self._version = self._store.swap(self.path, self._body(), current[1])
            if self._version:
                break
        else:
            raise self._refuse(read_lock(self.lake, self.run_id) or {})
        self._stop.clear()
        self._thread = threading.Thread(target=self._heartbeat, name="guiforge-lock", daemon=True)
        self._thread.start()
        return self

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(Exception):  # a missed heartbeat only ages the lock
                version = self._store.swap(self.path, self._body(), self._version)
                if version is None:
                    self.lost = True
                    log.warning("guiforge: the lock of run %s was taken over by another process", self.run_id)
                    return
                self._version = version

    def release(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        if self._version and not self.lost:
            self._store.delete(self.path, self._version)
        self._version = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
