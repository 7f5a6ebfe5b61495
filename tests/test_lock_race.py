"""The run lock cannot race: two processes released at the same instant, 200 rounds, on a
free run and on a run whose lock a dead process left behind, never hold it together; and
on S3 (moto) the lock is a conditional write."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from guiforge.errors import GuiforgeError
from guiforge.lake import Lake
from guiforge.lake.lock import RunLock, lock_path, read_lock

ROUNDS = 200


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _contender(root: str, start, attempted, finished, holds, overlaps) -> None:
    """One process: each round, wait for the start, try the lock, and while holding it wait
    until the other process has tried too; a marker created exclusively proves one holder."""
    lake = Lake(root)
    marker = os.path.join(root, "holder")
    for _ in range(ROUNDS):
        start.wait()
        lock = RunLock(lake, "r")
        try:
            lock.acquire()
        except GuiforgeError:
            lock = None
        if lock is not None:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                with overlaps.get_lock():
                    overlaps.value += 1
            with holds.get_lock():
                holds.value += 1
        attempted.wait()  # the holder keeps the lock until the other process has tried
        if lock is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(marker)
            lock.release()
        finished.wait()


@pytest.mark.parametrize("stale", [False, True], ids=["free", "stale-lock"])
def test_two_processes_never_hold_the_lock_together(tmp_path, stale):
    ctx = multiprocessing.get_context("fork")
    start, attempted, finished = (ctx.Barrier(3), ctx.Barrier(2), ctx.Barrier(3))
    holds, overlaps = ctx.Value("i", 0), ctx.Value("i", 0)
    root = tmp_path / "lake"
    path = Path(lock_path(Lake(root), "r"))
    path.parent.mkdir(parents=True)
    dead = {"run_id": "r", "pid": _dead_pid(), "host": os.uname().nodename, "token": "gone", "heartbeat_at": 0}
    procs = [ctx.Process(target=_contender, args=(str(root), start, attempted, finished, holds, overlaps))
             for _ in range(2)]
    for p in procs:
        p.start()
    try:
        for _ in range(ROUNDS):
            if stale:  # a writer died holding it: both contenders see it stale at once
                path.write_text(json.dumps(dead))
            start.wait(timeout=60)
            finished.wait(timeout=60)
            assert not path.exists() or stale and json.loads(path.read_text())["token"] == "gone"
    finally:
        for p in procs:
            p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert overlaps.value == 0, f"two holders at once in {overlaps.value} of {ROUNDS} rounds"
    assert holds.value >= ROUNDS  # every round somebody got it (both, one after the other, may)
    assert not [p for p in path.parent.iterdir() if ".tmp-" in p.name]


def test_a_lock_is_never_visible_half_written(tmp_path):
    """A reader polling the lock file while writers come and go only ever sees whole JSON."""
    lake = Lake(tmp_path / "lake")
    path = Path(lock_path(lake, "r"))
    seen, stop = [], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                seen.append(path.read_bytes())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(300):
            with RunLock(lake, "r"):
                pass
    finally:
        stop.set()
        watcher.join()
    assert seen, "the watcher never saw a lock"
    assert all(json.loads(b)["run_id"] == "r" for b in seen)


def test_the_lock_on_s3_is_a_conditional_write(s3_uri):
    uri, options = s3_uri
    lake = Lake(f"{uri}-lock", storage_options=options)
    with RunLock(lake, "r") as first:
        with pytest.raises(GuiforgeError, match="is being written by another guiforge process"):
            RunLock(lake, "r").acquire()
        assert read_lock(lake, "r")["token"] == first.token
    assert read_lock(lake, "r") is None
    # A stale lock is taken over by exactly one of two contenders: the swap names the ETag
    # judged stale, so the second one's swap fails and it sees the first one's live lock.
    dead = {"run_id": "r", "pid": _dead_pid(), "host": os.uname().nodename, "token": "gone", "heartbeat_at": 0}
    lake.fs.pipe_file(lock_path(lake, "r"), json.dumps(dead).encode())
    winner = RunLock(lake, "r").acquire()
    try:
        with pytest.raises(GuiforgeError, match="is being written"):
            RunLock(lake, "r").acquire()
        from guiforge.lake.exclusive import ExclusiveFile

        store = ExclusiveFile(lake)
        data, etag = store.read(lock_path(lake, "r"))
        assert store.swap(lock_path(lake, "r"), b"{}", '"not-the-etag"') is None  # If-Match refused
        assert store.create(lock_path(lake, "r"), b"{}") is None  # If-None-Match refused
        assert store.read(lock_path(lake, "r"))[0] == data
    finally:
        winner.release()
    assert read_lock(lake, "r") is None
