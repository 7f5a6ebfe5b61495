"""SFT acceptance: which judged trajectories training may use, as filters of one shape.

A row here is a judgments row (``success`` is the judge's verdict, ``verifier_success`` the
code verifier's, ``trajectory_failure`` the fault the trajectory met, if any: an
environment, model or verifier failure, which no policy accepts). The policy names the filters:

- ``verifier``: the code verifier passed;
- ``judge``: the judge said success (tasks without a verifier, e.g. replayed real sites);
- ``both``: both did (the default where a verifier exists; ``auto`` picks per row).
Every row a filter drops becomes an exclusions row with the filter's reason. Each policy is
an entry point of ``guiforge.acceptance`` (these three too) naming an
:class:`AcceptancePolicy`; ``accept: package.module:NAME`` names one directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from guiforge.filters import Drop, Filter
from guiforge.plugins import PluginRef, Registry

# auto, or an acceptance policy plugin (verifier, judge, both, module:NAME)
AcceptPolicy = Annotated[str, PluginRef("guiforge.acceptance", builtin=("auto",))]


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


@dataclass(frozen=True)
class AcceptancePolicy:
    """A named SFT acceptance policy: the filters a judgments row must pass, in order, and
    the reason an accepted row records."""

    name: str
    filters: tuple[type[Filter], ...]
    accepted_reason: str


VERIFIER = AcceptancePolicy("verifier", (TrajectoryFault, NoVerifierOutcome, VerifierFailed), "verifier passed")
JUDGE = AcceptancePolicy("judge", (TrajectoryFault, JudgeNoVerdict, JudgeRejected), "judge accepted")
BOTH = AcceptancePolicy("both", (TrajectoryFault, NoVerifierOutcome, JudgeNoVerdict, Disagreement, VerifierFailed),
                        "verifier and judge agree: success")


def _check_policy(name: str, policy: AcceptancePolicy) -> str | None:
    if ":" not in name and policy.name != name:
        return f"registered as {name!r} but the policy is named {policy.name!r}; make them the same"
    if not all(isinstance(f, type) and issubclass(f, Filter) for f in policy.filters):
        return "its filters are not all Filter subclasses (guiforge.filters)"
    return None


ACCEPTANCE: Registry[AcceptancePolicy] = Registry(
    "guiforge.acceptance", "acceptance policy", "an AcceptancePolicy (guiforge.judge.accept)",
    lambda o: isinstance(o, AcceptancePolicy), _check_policy)


def policy_for(policy: str, row: Mapping[str, Any]) -> str:
    """``auto``: both where the task has a verifier outcome, judge where it has none."""
    if policy != "auto":
        return policy
    return "both" if row.get("verifier_success") is not None or row.get("trajectory_failure") else "judge"


def policies_of(accept: str) -> tuple[str, ...]:
    """The policies ``accept`` applies, in the order rows are grouped (auto: judge, both)."""
    return ("judge", "both") if accept == "auto" else (accept,)


def filters_for(policy: str) -> list[Filter]:
    return [cls() for cls in ACCEPTANCE.get(policy).filters]


def accepted_reason(policy: str) -> str:
    return ACCEPTANCE.get(policy).accepted_reason
