"""Run a rubric (and an environment kind's graded reward) against a final state in a
separate process with a deadline; scoring itself is guiforge.verify.scoring.

The worker imports the checks installed under ``guiforge.checks`` and the ones the run
declares (``checks:`` in the pipeline file, ``module:Name``), which it is told here.

A worker that crashes or runs past the deadline (counted in its own time, guiforge.worktime:
a loaded machine stretches it) is killed and the rubric is scored again in a fresh worker;
when that fails too, :class:`VerifierFailure` says so. A verifier that
failed gives no verdict: never success=false or score 0.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading

from guiforge.failures import VERIFIER_FAILURE, Fault
from guiforge.faults import inject
from guiforge.verify.contract import Criterion, FinalState, VerifierResult
from guiforge.verify.scoring import INFEASIBLE_CRITERION, score_rubric  # noqa: F401 - the runner's API
from guiforge.verify.wire import READY, read_message, write_message
from guiforge.worktime import WorkClock, wait_own


class VerifierFailure(Fault):
    """The verifier timed out or crashed, in a fresh worker as well: no verdict."""

    kind = VERIFIER_FAILURE


class VerifierPool:
    """A warm worker process; a check that runs past its deadline (or a worker that dies)
    gets the worker killed and the rubric scored again in a fresh one, once."""

    def __init__(self, deadline_s: float = 10.0, startup_s: float = 120.0, checks: tuple[str, ...] = ()):
        self.deadline_s = deadline_s
        self.checks = tuple(checks)  # the run's declared check plugins (module:Name), loaded by the worker
        self.startup_s = startup_s  # a fresh worker's imports: not part of any check's deadline
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._ready: int | None = None  # the pid of the worker that said it is ready

    def _worker(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            # isolated: -I keeps the caller's directory and PYTHON* variables off sys.path, cwd
            # "/" is fixed, and only guiforge's own settings reach it (no API keys)
            env = {k: v for k, v in os.environ.items() if k.startswith("GUIFORGE_") or k in ("PATH", "LANG", "TMPDIR")}
            self._proc = subprocess.Popen([sys.executable, "-I", "-m", "guiforge.verify.worker"], cwd="/", env=env,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          start_new_session=True)  # a group stop reaches guiforge first
        return self._proc

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()

    def verify(self, rubric: list[Criterion], state: FinalState, feasible: bool = True,
               deadline_s: float | None = None, evaluator: str | None = None, task: object = None) -> VerifierResult:
        """The verdict; :class:`VerifierFailure` when the worker crashed or timed out twice.
        ``evaluator`` (``module:Class`` of an environment kind) grades ``task`` too."""
        deadline = deadline_s or self.deadline_s
        injection = inject("verifier")  # the same on the retry: an injected fault must outlast it
        fault = injection.kind if injection else None
        errors = []
        with self._lock:
            for _ in range(2):
                result = self._score((rubric, state, feasible, fault, self._extra(evaluator, task)), deadline)
                if isinstance(result, VerifierResult):
                    return result
                errors.append(result)
        note = f" [{injection.describe()}]" if injection else ""
        raise VerifierFailure(f"{errors[0]}; again in a fresh worker: {errors[1]}{note}")

    def _extra(self, evaluator: str | None, task: object) -> dict:
        return {"checks": self.checks, **({"evaluator": evaluator, "task": task} if evaluator else {})}

    def _score(self, request: tuple, deadline: float) -> VerifierResult | str:
        """One attempt in the warm worker: the verdict, or what went wrong (the worker is
        discarded then)."""
        proc = self._worker()
        try:
            if proc.pid != self._ready:
                ready, _, _ = select.select([proc.stdout], [], [], self.startup_s)
                if not ready or read_message(proc.stdout) != READY:
                    self._discard()
                    return f"verifier worker did not start within {self.startup_s:.0f}s"
                self._ready = proc.pid
            clock = WorkClock(lambda: [proc.pid])  # the deadline counts the worker's own time
            write_message(proc.stdin, request)
            if not wait_own(lambda timeout: bool(select.select([proc.stdout], [], [], timeout)[0]), deadline, clock):
                self._discard()
                # no wall time in the message: it becomes a row, and rows must not depend on load
                return f"verifier timed out after {deadline:.1f}s"
            result = read_message(proc.stdout)
            if isinstance(result, VerifierResult):
                return result
            if isinstance(result, str):  # the worker says why it cannot verify (a plugin it cannot load)
                self._discard()
                return result
        except (BrokenPipeError, OSError, EOFError):
            pass
        self._discard()
        return "verifier process crashed"

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._proc.stdin.close()
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                self._proc = None
