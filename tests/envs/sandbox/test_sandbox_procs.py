"""Finding a sandbox's processes from the host: the cheap tree walk used to poll
LibreOffice's CPU agrees with the /proc scan used to kill, and a kill that keeps one
sandbox's processes (the next episode's LibreOffice) kills everything else of the user."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from guiforge.envs.sandbox.procs import pids_of_user

# a parent, a child and a double-forked orphan (re-parented to the sandbox's init)
FAMILY = "sleep 30 & (sleep 31 &) ; sleep 32"


def _wait_for(fn, timeout_s: float = 5.0):
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if value := fn():
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _settled(box) -> bool:
    """All three sleeps run and nothing else but the sandbox's init (bash execs the last one)."""
    names = sorted(_comm(p) for p in box.pids() if p != box.init_pid)
    return names == ["sleep", "sleep", "sleep"]


def test_tree_walk_finds_what_the_namespace_scan_finds(sandbox):
    box = sandbox.spawn(["/bin/bash", "-c", FAMILY], stdout=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _settled(box))  # the subshell that forked the orphan has exited
        assert sorted(box.tree_pids()) == sorted(box.pids())
    finally:
        box.kill()
    assert box.pids() == [] and box.tree_pids() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="kill_all needs a dedicated sandbox uid")
def test_kill_all_spares_what_keep_names(sandbox):
    kept = sandbox.spawn(["/bin/sleep", "30"], stdout=subprocess.DEVNULL)
    doomed = sandbox.spawn(["/bin/bash", "-c", FAMILY], stdout=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _settled(doomed))
        sandbox.kill_all(keep=lambda: [kept.proc.pid, *kept.pids()])
        assert doomed.pids() == []
        assert kept.alive() and kept.pids()
        assert set(pids_of_user(sandbox.user.uid)) <= {kept.proc.pid, *kept.pids()}
    finally:
        kept.kill()
        doomed.kill()
