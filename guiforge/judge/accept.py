"""SFT acceptance: which judged trajectories training may use, as filters of one shape.

A row here is a judgments row (``success`` is the judge's verdict, ``verifier_success`` the
code verifier's, ``trajectory_failure`` the fault the trajectory met, if any: an
environment, model or verifier failure, which no policy accepts). The policy names the filters:

- ``verifier``: the code verifier passed;
- ``judge``: the judge said success (tasks without a verifier, e.g. replayed real sites);
- ``both``: both did (the default where a verifier exists; ``auto`` picks per row).
Every row a filter drops becomes an exclusions row with the filter's reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from guiforge.filters import Drop, Filter

AcceptPolicy = Literal["auto", "verifier", "judge", "both"]


class TrajectoryFault(Filter):
    """A trajectory that met a fault has no outcome: never training data."""

    gate = "accept_fault"

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        kind = row.get("trajectory_failure")
        if not kind:
            return None
        return Drop(f"{kind.replace('_', ' ')}: the trajectory has no outcome", {"error": row.get("trajectory_error")})


class NoVerifierOutcome(Filter):
    gate = "accept_verifier"

    def check(self, row: Mapping[str, Any]) -> str | None:
        return "no verifier outcome (the task has no verifier; use accept: judge)" \
            if row.get("verifier_success") is None else None


class JudgeNoVerdict(Filter):
    gate = "accept_judge"

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        if row.get("success") is None:
            why = (row.get("failure_kind") or "parse_failure").replace("_", " ")
            return Drop(f"judge gave no verdict ({why})", {"rationale": row.get("rationale")})
        return None


class Disagreement(Filter):
    gate = "accept_agreement"

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        judge, verifier = row.get("success"), row.get("verifier_success")
        if judge is None or verifier is None or judge == verifier:
            return None
        side = "verifier passed, judge rejected" if verifier else "judge passed, verifier failed"
        return Drop(f"judge and verifier disagree ({side})", {"judge": row.get("judge"),
                                                              "rationale": row.get("rationale")})


class VerifierFailed(Filter):
    gate = "accept_verifier"

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        if row.get("verifier_success") is False:
            return Drop("verifier failed", {"score": row.get("verifier_score")})
        return None


class JudgeRejected(Filter):
    gate = "accept_judge"

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        if row.get("success") is False:
            return Drop("judge rejected", {"judge": row.get("judge"), "rationale": row.get("rationale")})
        return None


POLICIES: dict[str, tuple[type[Filter], ...]] = {
    "verifier": (TrajectoryFault, NoVerifierOutcome, VerifierFailed),
    "judge": (TrajectoryFault, JudgeNoVerdict, JudgeRejected),
    "both": (TrajectoryFault, NoVerifierOutcome, JudgeNoVerdict, Disagreement, VerifierFailed),
}
ACCEPTED_REASON = {"verifier": "verifier passed", "judge": "judge accepted", "both": "verifier and judge agree: success"}


def policy_for(policy: AcceptPolicy, row: Mapping[str, Any]) -> str:
    """``auto``: both where the task has a verifier outcome, judge where it has none."""
    if policy != "auto":
        return policy
    return "both" if row.get("verifier_success") is not None or row.get("trajectory_failure") else "judge"


def filters_for(policy: str) -> list[Filter]:
    return [cls() for cls in POLICIES[policy]]
