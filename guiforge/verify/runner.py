"""Run a rubric against a final state in a separate process with a deadline.

reward = sum(w_j * b_j) / sum(w_j); success = product of the required b_j. An infeasible
task gets an extra required criterion: the agent must have reported ``infeasible``.

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
from guiforge.verify.registry import find_check
from guiforge.verify.wire import READY, read_message, write_message
from guiforge.worktime import WorkClock, wait_own

INFEASIBLE_CRITERION = Criterion(
    id="reported_infeasible",
    description="the agent reported that the task cannot be done",
    check={"fn": "status_is", "status": "infeasible"},
)


def score_rubric(rubric: list[Criterion], state: FinalState, feasible: bool = True) -> VerifierResult:
    """Evaluate every criterion in this process (the worker side)."""
    criteria = list(rubric) if feasible else [*rubric, INFEASIBLE_CRITERION]
    bits: dict[str, int] = {}
    errors: list[str] = []
    for c in criteria:
        args = dict(c.check)
        name = args.pop("fn", None)
        fn = find_check(name)
        if fn is None:
            bits[c.id] = 0
            errors.append(f"{c.id}: unknown check {name!r}")
            continue
        try:
            bits[c.id] = int(bool(fn(state, **args)))
        except Exception as exc:  # a broken check fails its criterion, not the run
            bits[c.id] = 0
            errors.append(f"{c.id}: {type(exc).__name__}: {exc}")
    total = sum(c.weight for c in criteria)
    score = sum(c.weight * bits[c.id] for c in criteria) / total if total else 0.0
    required = [bits[c.id] for c in criteria if c.required]
    success = bool(criteria) and all(required) and (bool(required) or score == 1.0)
    return VerifierResult(score=round(score, 6), success=success, criteria=bits, errors=errors)


class VerifierFailure(Fault):
    """The verifier timed out or crashed, in a fresh worker as well: no verdict."""

    kind = VERIFIER_FAILURE


class VerifierPool:
    """A warm worker process; a check that runs past its deadline (or a worker that dies)
    gets the worker killed and the rubric scored again in a fresh one, once."""

    def __init__(self, deadline_s: float = 10.0, startup_s: float = 120.0):
        self.deadline_s = deadline_s
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
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()

    def verify(self, rubric: list[Criterion], state: FinalState, feasible: bool = True,
               deadline_s: float | None = None) -> VerifierResult:
        """The verdict; :class:`VerifierFailure` when the worker crashed or timed out twice."""
        deadline = deadline_s or self.deadline_s
        injection = inject("verifier")  # the same on the retry: an injected fault must outlast it
        fault = injection.kind if injection else None
        errors = []
        with self._lock:
            for _ in range(2):
                result = self._score(rubric, state, feasible, deadline, fault)
                if isinstance(result, VerifierResult):
                    return result
                errors.append(result)
        note = f" [{injection.describe()}]" if injection else ""
        raise VerifierFailure(f"{errors[0]}; again in a fresh worker: {errors[1]}{note}")

    def _score(self, rubric: list[Criterion], state: FinalState, feasible: bool, deadline: float,
               fault: str | None) -> VerifierResult | str:
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
            write_message(proc.stdin, (rubric, state, feasible, fault))
            if not wait_own(lambda timeout: bool(select.select([proc.stdout], [], [], timeout)[0]), deadline, clock):
                self._discard()
                # no wall time in the message: it becomes a row, and rows must not depend on load
                return f"verifier timed out after {deadline:.1f}s"
            result = read_message(proc.stdout)
            if isinstance(result, VerifierResult):
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
