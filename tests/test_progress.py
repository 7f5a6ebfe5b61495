"""Dense progress (guiforge.verify.progress, guiforge.harness.progress): the rubric's
required criteria scored on each state an episode passes through, in the real verifier
worker, scored again only when the state changed."""

from __future__ import annotations

import json

import pytest

from guiforge.harness.progress import ProgressTracker
from guiforge.verify.contract import Criterion, FinalState, VerifierResult
from guiforge.verify.progress import flips, progress_of, required_criteria, state_key, undoes
from guiforge.verify.runner import VerifierPool

RUBRIC = [
    Criterion(id="answered", weight=3, check={"fn": "answer_matches", "value": "7"}),
    Criterion(id="nothing_sent", weight=1, check={"fn": "state_count", "path": "mail.sent[*]", "max": 0, "min": 0}),
    Criterion(id="optional", required=False, check={"fn": "status_is", "status": "success"}),
]


class StateLease:
    """A lease whose state is what the test sets, scored by a real verifier worker."""

    def __init__(self, pool: VerifierPool):
        self.pool, self.state, self.reads = pool, FinalState(apps={"mail": {"sent": []}}), 0
        self.stamp: str | None = None  # the environment's cheap token of its state; None: it has none

    def state_stamp(self) -> str | None:
        return self.stamp

    def final_state(self) -> FinalState:
        self.reads += 1
        return self.state

    def verify(self, state: FinalState) -> VerifierResult:
        return self.pool.verify(RUBRIC, state)


class Task:
    rubric, feasible = RUBRIC, True


@pytest.fixture(scope="module")
def pool():
    p = VerifierPool()
    yield p
    p.close()


def test_progress_is_the_weighted_share_of_required_criteria():
    required = required_criteria(RUBRIC)
    assert [c.id for c in required] == ["answered", "nothing_sent"]
    half = VerifierResult(0.2, False, {"answered": 0, "nothing_sent": 1, "optional": 1})
    assert progress_of(required, half) == 0.25  # the optional criterion does not count
    graded = VerifierResult(0.5, False, {"answered": 0.5, "nothing_sent": 1, "optional": 0})
    assert progress_of(required, graded) == pytest.approx(0.625)
    assert progress_of(required, VerifierResult(1.0, True, {"answered": 1, "nothing_sent": 1})) == 1.0
    # an infeasible task needs the agent to say so: one more required criterion
    assert [c.id for c in required_criteria(RUBRIC, feasible=False)][-1] == "reported_infeasible"
    # no required criteria (a kind's own graded reward): the score, 1.0 on success
    assert progress_of([], VerifierResult(0.4, False, {})) == 0.4
    assert progress_of([], VerifierResult(0.8, True, {})) == 1.0


def test_flips_and_undone_progress():
    required = required_criteria(RUBRIC)
    assert flips({"answered": 0, "nothing_sent": 1}, {"answered": 1, "nothing_sent": 0}) == {
        "answered": [0, 1], "nothing_sent": [1, 0]}
    assert undoes(required, {"answered": 0, "nothing_sent": 1}, {"answered": 1, "nothing_sent": 0})
    assert not undoes(required, {"answered": 0, "nothing_sent": 1}, {"answered": 1, "nothing_sent": 1})
    assert not undoes(required, {"optional": 1}, {"optional": 0})  # not required: no progress lost


def test_state_key_sees_app_state_answer_and_workspace_files(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    base = FinalState(apps={"x": 1}, workspace=tmp_path)
    key = state_key(base)
    assert state_key(FinalState(apps={"x": 1}, workspace=tmp_path)) == key
    assert state_key(FinalState(apps={"x": 2}, workspace=tmp_path)) != key
    assert state_key(FinalState(apps={"x": 1}, workspace=tmp_path, answer="7")) != key
    (tmp_path / "a.txt").write_text("two")  # a save changes what a file check reads
    assert state_key(base) != key
    ran = {"command": "ls", "output": "a.txt\n", "exit_code": 0}
    timed = [FinalState(terminal=[{**ran, "duration_s": s}]) for s in (0.004, 0.9)]  # idle, loaded
    assert state_key(timed[0]) == state_key(timed[1]) != state_key(FinalState(terminal=[{**ran, "exit_code": 1}]))


def test_tracker_scores_changed_states_only_and_marks_undone_steps(pool):
    lease = StateLease(pool)
    tracker = ProgressTracker(lease, Task())
    tracker.start()
    assert tracker.progress == 0.25
    same = tracker.step()  # nothing changed: the verdict is reused
    assert same == {"progress": 0.25, "progress_delta": 0.0, "criteria_flips_json": None, "undoes_progress": False}
    lease.state = FinalState(apps={"mail": {"sent": [{"to": "x"}]}})  # a mail went out: a required criterion lost
    lost = tracker.step()
    assert lost["progress"] == 0.0 and lost["progress_delta"] == -0.25 and lost["undoes_progress"]
    assert json.loads(lost["criteria_flips_json"]) == {"nothing_sent": [1, 0]}
    lease.state = FinalState(apps={"mail": {"sent": []}}, answer="7", status="success")
    done = tracker.step()
    assert done["progress"] == 1.0 and done["progress_delta"] == 1.0 and not done["undoes_progress"]
    assert json.loads(done["criteria_flips_json"]) == {"answered": [0, 1], "nothing_sent": [0, 1],
                                                       "optional": [0, 1]}
    assert tracker.verdict.success
    assert tracker.counts.reads == lease.reads == 4 and tracker.counts.verified == 3
    assert tracker.unchanged()["progress_delta"] == 0.0


def test_an_unchanged_stamp_skips_the_state_read(pool):
    lease = StateLease(pool)
    lease.stamp = "s0"
    tracker = ProgressTracker(lease, Task())
    tracker.start()
    tracker.step()  # same stamp: neither read nor scored
    assert lease.reads == 1 and tracker.counts.stamps == 2
    lease.state, lease.stamp = FinalState(apps={"mail": {"sent": []}}, answer="7"), "s1"
    assert tracker.step()["progress"] == 1.0 and lease.reads == 2 and tracker.counts.verified == 2
