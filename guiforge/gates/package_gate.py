"""The package gate: in the real environment, the verifier fails on the initial state,
passes after the reference solution, and fails again after reset. A task whose reference
does not run, or whose verifier cannot tell done from not done, never reaches the lake.

With ``plant_side_errors`` (the default) it also proves the verifier sees side damage: the
reference's final state with one planted side error (a digit changed in a record the task must
not touch, an extra record, another cell edited, an extra file; guiforge.verify.plant) must
fail the rubric's ``no_side_damage`` criterion.

A fault of the environment or the verifier during the gate says nothing about the task:
the gate runs again on a fresh instance, and if the fault repeats the task is excluded
under the fault's kind (``env_failure``, ``verifier_failure``) with its reason, never with
a verdict on the task."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from guiforge import shutdown
from guiforge.envs.base import EnvSpec, TaskSpec
from guiforge.envs.kind import EnvKind
from guiforge.envs.kinds import kind_for, kind_of
from guiforge.envs.manager import EnvManager
from guiforge.failures import Fault
from guiforge.faults import unit
from guiforge.teacher.reference import GroundingError, ReferenceProgram
from guiforge.verify.contract import FinalState
from guiforge.verify.plant import plant_side_error
from guiforge.verify.side_effects import CRITERION_ID, side_damage


@dataclass
class Verdict:
    passed: bool
    gate: str = "package"
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def env_spec(domain: str, variant: str | None, phone_screenshots: str | None = None,
             presentation: dict | None = None, kind: EnvKind | None = None) -> EnvSpec:
    """What a task needs to acquire: its kind's spec (guiforge.envs.kind), whose pool key
    says which instances can serve it (``kind``: the run's kind for the domain)."""
    return (kind or kind_of(domain)).spec(variant, presentation, phone_screenshots=phone_screenshots)


def run_reference(
    lease, obs, reference: list[dict], domain: str, variant: str | None, limit: int
) -> tuple[int, str | None]:
    """Play the reference from observation ``obs``. Returns (actions taken, error or None)."""
    program = ReferenceProgram(reference, domain, variant)
    actions = 0
    try:
        while (plan := program.send(obs)) is not None:
            actions += 1
            if actions > limit:
                return actions, f"reference needs more than {limit} actions"
            result = lease.step(plan.action)
            if result.error:
                return (
                    actions,
                    f"reference step {plan.step_index} ({plan.action.type}) failed: {result.error}",
                )
            obs = result.observation
            if result.done:
                break
    except GroundingError as exc:
        return actions, f"reference cannot be grounded: {exc}"
    return actions, None


GATE_SPAN = 3  # an injected fault strikes one of the first three steps or evaluations


class PackageGate:
    def __init__(self, manager: EnvManager, attempts: int = 2, acquire_timeout_s: float = 1800.0,
                 plant_side_errors: bool = True):
        self.manager = manager
        self.attempts = attempts
        self.plant_side_errors = plant_side_errors
        # gates running at once queue for the domain's instances: a long wait is not a fault
        self.acquire_timeout_s = acquire_timeout_s

    def check(self, spec: TaskSpec, reference: list[dict], variant: str | None = None) -> Verdict:
        faults: list[Fault] = []
        for attempt in range(self.attempts):
            try:
                # an injected fault (guiforge.faults) strikes a reference step or an evaluation
                with unit(spec.task_id, attempt, env=GATE_SPAN, verifier=GATE_SPAN):
                    return self._check(spec, reference, variant)
            except Fault as exc:  # the machinery failed, not the task: try a fresh instance
                shutdown.check("during the package gate")  # closed by a shutdown: not the task's fault
                faults.append(exc)
        last = faults[-1]
        label = {"env_failure": "environment failure", "verifier_failure": "verifier failure"}.get(last.kind, last.kind)
        return Verdict(False, gate=last.kind, reason=f"{label} in {len(faults)} attempts: {last}",
                       details={"failure_kind": last.kind, "faults": [f"{f.kind}: {f}" for f in faults]})

    def _check(self, spec: TaskSpec, reference: list[dict], variant: str | None) -> Verdict:
        started = time.perf_counter()
        limit = max(spec.max_steps * 3, 30)
        spec_for = env_spec(spec.domain, variant, presentation=spec.presentation,
                            kind=kind_for(self.manager.factories, spec.domain))
        with self.manager.acquire(spec_for, timeout_s=self.acquire_timeout_s) as lease:
            lease.capture(False)  # the gate needs state and geometry, never pixels
            obs = lease.reset(spec)
            # Evaluating reads state and changes nothing, so the reference starts from this s0.
            before = lease.evaluate()
            if before.success:
                return Verdict(
                    False,
                    reason="the verifier already passes on the initial state",
                    details={"criteria": before.criteria},
                )
            actions, error = run_reference(lease, obs, reference, spec.domain, variant, limit)
            if error:
                return Verdict(False, reason=error, details={"actions": actions})
            state = lease.final_state()
            after = lease.verify(state)
            if not after.success:
                failed = sorted(k for k, v in after.criteria.items() if not v)
                return Verdict(
                    False,
                    reason=f"the reference solution does not pass the verifier (failed: "
                    f"{', '.join(failed)}{'; ' + after.errors[0] if after.errors else ''}"
                    f"{_damage_note(spec, state) if not after.criteria.get(CRITERION_ID, 1) else ''})",
                    details={
                        "criteria": after.criteria,
                        "errors": after.errors,
                        "actions": actions,
                    },
                )
            planted, caught = self._plant_side_error(lease, spec, state) if self.plant_side_errors else (None, True)
            if not caught:
                return Verdict(False, reason=f"the verifier passes the reference with a planted side error ({planted})",
                               details={"criteria": after.criteria, "planted": planted})
            lease.reset(spec)
            again = lease.evaluate()
            if again.success:
                return Verdict(
                    False,
                    reason="the verifier still passes after reset (reset does not restore s0)",
                )
        return Verdict(
            True,
            details={
                "actions": actions,
                "seconds": round(time.perf_counter() - started, 3),
                "score": after.score,
                "planted": planted,  # the side error the verifier caught (None: none was planted)
            },
        )

    @staticmethod
    def _plant_side_error(lease, spec: TaskSpec, state: FinalState) -> tuple[str | None, bool]:
        """Plant one side error in the reference's final state and verify it: (what was planted,
        whether ``no_side_damage`` failed it). (None, True) when there was nothing to plant."""
        criterion = next((c for c in spec.rubric if c.id == CRITERION_ID), None)
        if criterion is None:
            return None, True  # a task made before the criterion existed (or by hand) has nothing to prove
        planted = plant_side_error(state, criterion.check.get("changes") or [])
        if planted is None:
            return None, True  # no app state and no files: nothing the task could damage
        try:
            result = lease.verify(planted.state)
        finally:
            planted.cleanup()
        crashed = any(e.startswith(f"{CRITERION_ID}:") for e in result.errors)  # an error caught nothing
        return planted.description, not crashed and not result.criteria.get(CRITERION_ID, 1)


def _damage_note(spec: TaskSpec, state: FinalState) -> str:
    """What the reference changed that the task may not (for the gate's reason)."""
    criterion = next((c for c in spec.rubric if c.id == CRITERION_ID), None)
    if criterion is None:
        return ""
    try:
        damage = side_damage(state, criterion.check.get("changes") or [])
    except ValueError as exc:
        return f"; {exc}"
    return "; side damage: " + "; ".join(c.describe() for c in damage[:4]) if damage else ""
