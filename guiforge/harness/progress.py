"""Progress after every step of an episode: the rubric scored on the state the step left,
through the lease's own verifier worker, with no extra reset.

Per step: where the environment has a cheap stamp of its state (the web apps hash theirs in
the page), the stamp; the whole final state is read only when the stamp changed (or there
is none), and the verifier runs only when that state differs from the last one it scored (a
click that opens a menu changes no app state, so its verdict is reused).
The verdict after the last step is the episode's verdict: the final evaluation costs nothing
more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guiforge.verify.contract import VerifierResult
from guiforge.verify.progress import (
    flips,
    progress_of,
    required_criteria,
    state_key,
    step_progress,
    undoes,
)


@dataclass
class ProgressCounts:
    """What tracking cost: stamps read, final states read, and verdicts the verifier worker
    computed."""

    stamps: int = 0
    reads: int = 0
    verified: int = 0


class ProgressTracker:
    """Scores the state a lease's episode is in, step after step."""

    def __init__(self, lease, task):
        self.lease = lease
        self.required = required_criteria(task.rubric, task.feasible)
        self.counts = ProgressCounts()
        self._key: str | None = None
        self._stamp: str | None = None
        self.verdict: VerifierResult | None = None
        self.progress = 0.0

    def _score(self) -> VerifierResult:
        stamp = self.lease.state_stamp()
        self.counts.stamps += 1
        if stamp is not None and stamp == self._stamp and self.verdict is not None:
            return self.verdict
        self._stamp = stamp
        state = self.lease.final_state()
        self.counts.reads += 1
        key = state_key(state)
        if key != self._key or self.verdict is None:
            self.verdict = self.lease.verify(state)
            self.counts.verified += 1
            self._key = key
        return self.verdict

    def start(self) -> None:
        """Score s0 (what the first step's delta is measured from)."""
        self.progress = progress_of(self.required, self._score())

    def step(self) -> dict[str, Any]:
        """The progress columns of the step just taken."""
        before, before_progress = dict(self.verdict.criteria) if self.verdict else {}, self.progress
        after = self._score()
        self.progress = progress_of(self.required, after)
        return step_progress(self.progress, before_progress, flips(before, after.criteria),
                             undoes(self.required, before, after.criteria))

    def unchanged(self) -> dict[str, Any]:
        """The columns of a step that changed nothing (no action was carried out)."""
        return step_progress(self.progress, self.progress, {}, False)
