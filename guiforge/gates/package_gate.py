"""The package gate: in the real environment, the verifier fails on the initial state,
passes after the reference solution, and fails again after reset. A task whose reference
does not run, or whose verifier cannot tell done from not done, never reaches the lake.

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
from guiforge.envs.manager import EnvManager
from guiforge.failures import Fault
from guiforge.faults import unit
from guiforge.teacher.reference import GroundingError, ReferenceProgram


@dataclass
class Verdict:
    passed: bool
    gate: str = "package"
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def env_spec(domain: str, variant: str | None, phone_screenshots: str | None = None,
             presentation: dict | None = None) -> EnvSpec:
    """What a task needs to acquire. A desktop's screen size (its Xvfb's) and look (its
    LibreOffice profile) are fixed when the instance starts, so a task's viewport and theme
    pick the pool; web and mobile instances resize and restyle their page on reset instead."""
    look = (presentation or {}) if domain == "desktop" and variant != "terminal" else {}
    viewport, theme = look.get("viewport"), (look.get("theme") or {}).get("name")
    return EnvSpec(domain=domain, variant=variant if domain == "desktop" else None,
                   viewport=tuple(viewport) if viewport else None, theme=theme,
                   screenshot_scale=phone_screenshots if domain == "mobile" else None)


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
    def __init__(self, manager: EnvManager, attempts: int = 2, acquire_timeout_s: float = 1800.0):
        self.manager = manager
        self.attempts = attempts
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
        spec_for = env_spec(spec.domain, variant, presentation=spec.presentation)
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
            after = lease.evaluate()
            if not after.success:
                failed = sorted(k for k, v in after.criteria.items() if not v)
                return Verdict(
                    False,
                    reason=f"the reference solution does not pass the verifier (failed: "
                    f"{', '.join(failed)}{'; ' + after.errors[0] if after.errors else ''})",
                    details={
                        "criteria": after.criteria,
                        "errors": after.errors,
                        "actions": actions,
                    },
                )
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
            },
        )
