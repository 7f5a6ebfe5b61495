"""One writer per run: a lock file in the lake root for each run being written.

``<lake>/_locks/run=<run_id>.json`` holds the writer's pid, host and a heartbeat. A second
process on the same run is refused with one line; different runs write at once. A lock is
stale (and taken over) when its process is gone (same host) or its heartbeat stopped.
Local lakes create the file exclusively (O_EXCL); other filesystems write it and read it
back, which is as close to exclusive as plain object stores allow.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import socket
import threading
import time
import uuid
from typing import Any

from guiforge.errors import GuiforgeError
from guiforge.lake.store import Lake

LOCK_DIR = "_locks"
HEARTBEAT_S = 30.0
STALE_AFTER_S = 180.0


class RunLocked(GuiforgeError):
    pass


def lock_path(lake: Lake, run_id: str) -> str:
    return lake.path(LOCK_DIR, f"run={run_id}.json")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock(lake: Lake, run_id: str) -> dict[str, Any] | None:
    try:
        return lake.read_json(lock_path(lake, run_id))
    except FileNotFoundError:
        return None
    except (ValueError, OSError):
        return {}  # half-written: treat as stale unless its owner rewrites it


def is_live(holder: dict[str, Any] | None) -> bool:
    if not holder:
        return False
    if holder.get("host") == socket.gethostname():
        return _pid_alive(int(holder.get("pid", -1)))
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
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "pid": os.getpid(), "host": socket.gethostname(), "token": self.token,
                "started_at": getattr(self, "_started", time.time()), "heartbeat_at": time.time()}

    def _refuse(self, holder: dict[str, Any]) -> RunLocked:
        return RunLocked(
            f"run {self.run_id} is being written by another guiforge process (pid {holder.get('pid')} on "
            f"{holder.get('host')}) in lake {self.lake.uri}; wait for it to finish, or use another --run-id "
            f"(a stale lock is {self.path}: delete it only if that process is gone)")

    def _create_local(self) -> bool:
        os.makedirs(posixpath.dirname(self.path), exist_ok=True)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as fh:
            json.dump(self._body(), fh)
        return True

    def acquire(self) -> RunLock:
        self._started = time.time()
        for _ in range(3):
            if self.lake.is_local:
                if self._create_local():
                    break
            elif read_lock(self.lake, self.run_id) is None:
                self.lake.write_json(self._body(), self.path)
                if (read_lock(self.lake, self.run_id) or {}).get("token") == self.token:
                    break
            holder = read_lock(self.lake, self.run_id)
            if holder is None:
                continue  # released meanwhile: try again
            if is_live(holder):
                raise self._refuse(holder)
            self.lake.fs.rm(self.path)  # stale: its writer died
        else:
            raise self._refuse(read_lock(self.lake, self.run_id) or {})
        self._thread = threading.Thread(target=self._heartbeat, name="guiforge-lock", daemon=True)
        self._thread.start()
        return self

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(Exception):  # a missed heartbeat only ages the lock
                self.lake.write_json(self._body(), self.path)

    def release(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        holder = read_lock(self.lake, self.run_id)
        if holder and holder.get("token") == self.token:
            self.lake.fs.rm(self.path)

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
