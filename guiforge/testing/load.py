"""Busy processes that oversubscribe the machine's cores, for tests whose results must not
depend on the load (frames, deadlines, the pipeline's tables): the same run idle and on
oversubscribed cores must give the same output.

    with oversubscribed():            # 3 busy loops per core, at least 6
        run_the_same_thing_again()

The pytest fixture ``oversubscribed_cores`` (tests/conftest.py) wraps it for a test's duration.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator

_BUSY = "while True:\n    pass\n"


def busy_processes(cores: int | None = None) -> int:
    """How many busy loops oversubscribe ``cores`` (default: this machine's): three per core."""
    return max(6, 3 * (cores or os.cpu_count() or 2))


@contextlib.contextmanager
def oversubscribed(processes: int | None = None) -> Iterator[list[int]]:
    """Run ``processes`` busy loops (each wants a core of its own) while the block runs; yields
    their pids. They are killed by pid when the block ends, and die with this process if it is
    killed first (``setpriv --pdeathsig``, where installed)."""
    count = busy_processes() if processes is None else processes
    guard = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([*guard, sys.executable, "-c", _BUSY], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()

