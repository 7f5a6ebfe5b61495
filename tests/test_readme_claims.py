"""README claims that had no test of their own: a second Ctrl-C ends the process at once,
and `lake gc` leaves the files of a run being written alone."""

from __future__ import annotations

import signal
import subprocess
import sys

from guiforge.lake import Lake
from guiforge.lake.gc import collect
from guiforge.lake.lock import RunLock
from guiforge.paths import PROJECT_ROOT

# work that never looks at the shutdown flag (a stage stuck in a call): only a second
# signal can end it
STUCK = """
import threading
from guiforge import shutdown
with shutdown.handling_signals():
    print("ready", flush=True)
    told = False
    while True:
        threading.Event().wait(0.02)
        if shutdown.requested() and not told:
            print("stopping", flush=True)
            told = True
"""


def test_a_second_ctrl_c_ends_the_process_at_once():
    proc = subprocess.Popen([sys.executable, "-c", STUCK], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline() == "stopping\n"  # the first one only asked the work to stop
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_lake_gc_leaves_a_run_being_written_alone(tmp_path):
    """A file no manifest claims yet is what a writer has in flight while the run's lock is
    held (gc must keep it), and what a killed writer left once it is not (gc deletes it)."""
    root = tmp_path / "lake"
    in_flight = root / "personas" / "run=r" / "part-in-flight.parquet"
    in_flight.parent.mkdir(parents=True)
    in_flight.write_bytes(b"a shard being written")
    lake = Lake(root)
    with RunLock(lake, "r"):
        assert str(in_flight) not in {str(p) for p in collect(lake).deleted}
        assert in_flight.exists()
    assert in_flight.name in {p.rsplit("/", 1)[-1] for p in collect(lake).deleted}
    assert not in_flight.exists()
