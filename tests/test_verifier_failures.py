"""A verifier that times out or crashes is retried once in a fresh worker, then a
VerifierFailure: the episode is a verifier_failure with no verdict (success and score null),
never success=false with score 0. The worker is the real one (python -m guiforge.verify.worker);
injected faults (guiforge.faults) make that process exit or hang."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from guiforge.envs import (
    Criterion,
    Deadlines,
    EnvManager,
    EnvSpec,
    FinalState,
    TaskSpec,
    default_factories,
)
from guiforge.faults import FaultsConfig, Injector, unit
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import run_episode
from guiforge.harness.policies import Reply
from guiforge.verify.runner import VerifierFailure, VerifierPool

SEVEN = [Criterion(id="seven", check={"fn": "answer_matches", "value": "7"})]
TASK = TaskSpec(task_id="t7", domain="tools", instruction="What is 3 + 4?", rubric=SEVEN)


class AnswersSeven:
    """The agent's side of the episode (the harness, environment and verifier are real)."""

    name = "test:answers-seven"

    def act(self, turn) -> Reply:
        return Reply('{"thought": "3 + 4 is 7.", "action": {"type": "answer", "answer": "7"}}')


def _gone(pid: int, timeout: float = 10) -> bool:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_worker_hung_once_is_killed_and_the_rubric_scored_again():
    pool = VerifierPool(deadline_s=1.0)
    try:
        state = FinalState(answer="7")
        assert pool.verify(SEVEN, state).success
        hung = pool._proc.pid
        os.kill(hung, signal.SIGSTOP)  # the warm worker stops answering
        verdict = pool.verify(SEVEN, state)
        assert verdict.success and verdict.criteria == {"seven": 1}  # from a fresh worker
        assert _gone(hung) and pool._proc.pid != hung  # the deadline killed the hung one
    finally:
        pool.close()


@pytest.mark.parametrize("kind,says", [("crash", "verifier process crashed"), ("hang", "verifier timed out after 0.5s")])
def test_a_verifier_that_fails_twice_is_a_verifier_failure(kind, says):
    pool = VerifierPool(deadline_s=0.5)
    injector = Injector(FaultsConfig(verifier={kind: 1.0}))
    try:
        with injector.shard("test", "s0"), unit("t7", 0), pytest.raises(VerifierFailure) as info:
            pool.verify(SEVEN, FinalState(answer="7"))
        assert f"{says}; again in a fresh worker: {says}" in str(info.value)
        assert f"injected verifier fault: {kind}" in str(info.value) and info.value.kind == "verifier_failure"
        assert pool.verify(SEVEN, FinalState(answer="7")).success  # outside the scope: sound again
    finally:
        pool.close()


@pytest.mark.parametrize("kind", ["crash", "hang"])
def test_an_episode_whose_verifier_fails_has_no_verdict(kind):
    injector = Injector(FaultsConfig(verifier={kind: 1.0}))
    with EnvManager(default_factories(), deadlines=Deadlines(evaluate_s=0.5)) as manager, \
            manager.acquire(EnvSpec(domain="tools")) as lease:
        sound = run_episode(lease, TASK, AnswersSeven(), ContextPolicy())
        assert sound.verdict.success and sound.failure_kind is None
        with injector.shard("test", "s0"), unit(TASK.task_id, 0):
            episode = run_episode(lease, TASK, AnswersSeven(), ContextPolicy())
        assert episode.verdict is None and episode.failure_kind == "verifier_failure"
        assert not episode.env_failure and episode.error.startswith("verifier failure: ")
        assert len(episode.steps) == 1 and not lease.broken  # the environment is sound: it is kept
