"""Scoring a final state (the worker side): a rubric's criteria, each from a check that
returns a bool, a float in [0, 1] or ``(value, reason)``, then an environment kind's own
graded reward, which takes precedence over the rubric's score.

reward = sum(w_j * b_j) / sum(w_j); success = every required b_j met (a binary check's
True, a graded check's 1.0); an infeasible task gets an extra required criterion: the agent
must have reported ``infeasible``. Binary criteria keep their 0/1; a graded one records its
value. A broken check fails its criterion (0, with the error), never the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guiforge.plugins import load_value
from guiforge.verify.contract import Criterion, FinalState, VerifierResult
from guiforge.verify.registry import find_check

INFEASIBLE_CRITERION = Criterion(
    id="reported_infeasible",
    description="the agent reported that the task cannot be done",
    check={"fn": "status_is", "status": "infeasible"},
)
CheckLookup = Callable[[str | None], Callable[..., object] | None]


def check_value(result: object) -> tuple[int | float, str | None]:
    """A check's answer as (value, reason): a bool -> 0 or 1, a number in [0, 1] as it is,
    ``(value, reason)`` -> its value and reason. ValueError for anything else."""
    reason = None
    if isinstance(result, tuple):
        if len(result) != 2 or not isinstance(result[1], str | None):
            raise ValueError(f"returned {result!r}: a tuple must be (value, reason)")
        result, reason = result
    if isinstance(result, bool) or result is None:
        return int(bool(result)), reason
    if isinstance(result, int | float) and 0.0 <= float(result) <= 1.0:
        return (int(result) if isinstance(result, int) else float(result)), reason
    raise ValueError(f"returned {result!r}: a check returns a bool, a number in [0, 1] or (value, reason)")


def score_rubric(rubric: list[Criterion], state: FinalState, feasible: bool = True,
                 find: CheckLookup | None = None) -> VerifierResult:
    """Every criterion in this process, each check looked up by ``find`` (the installed and
    declared checks, guiforge.verify.registry)."""
    find = find or find_check
    criteria = list(rubric) if feasible else [*rubric, INFEASIBLE_CRITERION]
    values: dict[str, int | float] = {}
    reasons: dict[str, str] = {}
    errors: list[str] = []
    for c in criteria:
        args = dict(c.check)
        name = args.pop("fn", None)
        fn = find(name)
        if fn is None:
            values[c.id] = 0
            errors.append(f"{c.id}: unknown check {name!r}")
            continue
        try:
            values[c.id], reason = check_value(fn(state, **args))
        except Exception as exc:  # a broken check fails its criterion, not the run
            values[c.id] = 0
            errors.append(f"{c.id}: {type(exc).__name__}: {exc}")
            continue
        if reason:
            reasons[c.id] = reason
    total = sum(c.weight for c in criteria)
    score = sum(c.weight * values[c.id] for c in criteria) / total if total else 0.0
    required = [values[c.id] >= 1 for c in criteria if c.required]
    success = bool(criteria) and all(required) and (bool(required) or score == 1.0)
    return VerifierResult(score=round(score, 6), success=success, criteria=values, errors=errors, reasons=reasons)


def graded(result: VerifierResult, evaluator: str, task: Any, state: FinalState) -> VerifierResult:
    """``result`` with the kind's own reward in its place: ``evaluator`` (``module:Class``
    of an EnvKind, made here) returns a value in [0, 1], ``(value, reason)`` or None (the
    rubric stands). Success: the rubric's where the task has criteria, else the value
    reaching the kind's ``success_at``."""
    cls = load_value(evaluator, "the environment kind's evaluate")  # PluginError: no verdict at all
    try:
        kind = cls() if isinstance(cls, type) else cls
        answer = kind.evaluate(task, state)
        if answer is None:
            return result
        value, reason = check_value(answer)
    except Exception as exc:  # a reward that breaks on this state scores 0 with its error, as a broken check
        result.errors.append(f"evaluate: {type(exc).__name__}: {exc}")
        result.score, result.success = 0.0, False
        return result
    result.graded = {"value": float(value), **({"reason": reason} if reason else {})}
    result.score = round(float(value), 6)
    if not result.criteria:
        result.success = float(value) >= float(getattr(kind, "success_at", 1.0))
    return result
