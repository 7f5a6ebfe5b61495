"""Run a rubric against a final state in a separate process with a deadline.

reward = sum(w_j * b_j) / sum(w_j); success = product of the required b_j. An infeasible
task gets an extra required criterion: the agent must have reported ``infeasible``.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from guiforge.envs.base import Criterion, FinalState, VerifierResult

INFEASIBLE_CRITERION = Criterion(
    id="reported_infeasible",
    description="the agent reported that the task cannot be done",
    check={"fn": "status_is", "status": "infeasible"},
)


def score_rubric(rubric: list[Criterion], state: FinalState, feasible: bool = True) -> VerifierResult:
    """Evaluate every criterion in this process (the worker side)."""
    from guiforge.verify.checks import CHECKS

    criteria = list(rubric) if feasible else [*rubric, INFEASIBLE_CRITERION]
    bits: dict[str, int] = {}
    errors: list[str] = []
    for c in criteria:
        args = dict(c.check)
        name = args.pop("fn", None)
        fn = CHECKS.get(name)
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


class VerifierPool:
    """A warm worker process; a check that runs past its deadline gets the worker killed
    and replaced, and the verdict records the timeout."""

    def __init__(self, deadline_s: float = 10.0):
        self.deadline_s = deadline_s
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("spawn")  # never fork a process with browser threads
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
        return self._pool

    def _discard(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)

    def verify(self, rubric: list[Criterion], state: FinalState, feasible: bool = True,
               deadline_s: float | None = None) -> VerifierResult:
        deadline = deadline_s or self.deadline_s
        with self._lock:
            future = self._executor().submit(score_rubric, rubric, state, feasible)
            try:
                return future.result(timeout=deadline)
            except FutureTimeout:
                self._discard()
                error = f"verifier timed out after {deadline:.1f}s"
            except BrokenProcessPool:
                self._discard()
                error = "verifier process crashed"
        ids = [c.id for c in rubric] + ([] if feasible else [INFEASIBLE_CRITERION.id])
        return VerifierResult(score=0.0, success=False, criteria=dict.fromkeys(ids, 0), errors=[error])

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
