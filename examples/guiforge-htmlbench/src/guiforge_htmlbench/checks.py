"""The benchmark's checks, registered as one set (entry point ``guiforge.checks: htmlbench``).
A check reads the final state and returns a bool, a number in [0, 1] or (value, reason)."""

from __future__ import annotations

from guiforge.verify.contract import FinalState
from guiforge_htmlbench.kind import closeness


def answer_close(state: FinalState, target: float, tolerance: float = 0.2) -> tuple[float, str]:
    """Graded: how close the submitted answer is to ``target``."""
    submitted = ((state.apps.get("site") or {}).get("page") or {}).get("submitted")
    if submitted is None:
        return 0.0, "nothing was submitted"
    return closeness(submitted, target, tolerance)


def submitted(state: FinalState) -> bool:
    """Binary: the form was submitted at all."""
    return ((state.apps.get("site") or {}).get("page") or {}).get("submitted") is not None


CHECKS = {"htmlbench_close": answer_close, "htmlbench_submitted": submitted}
