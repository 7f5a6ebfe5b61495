"""The failure taxonomy: why a unit of work (an episode, a gate, a judged trajectory, a
relabelled step) has no outcome, shared by every layer.

- ``env_failure``: the environment crashed, hung past a deadline or lost its page;
- ``model_failure``: an endpoint error that outlasted the retries, an unreadable body, a
  request the endpoint refuses (HTTP 400);
- ``verifier_failure``: the verifier timed out or crashed, twice (the second time in a fresh
  worker);
- ``parse_failure``: the policy's replies could not be used, even with the error fed back.

The first three are faults of the machinery, never of the agent: a row that meets one has
no outcome (``success`` and ``score`` null) and is never a valid sample, a reward or
training data. A parse failure is the policy's own failure: its episode ends and is scored
as it stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

ENV_FAILURE = "env_failure"
MODEL_FAILURE = "model_failure"
VERIFIER_FAILURE = "verifier_failure"
PARSE_FAILURE = "parse_failure"
FAILURE_KINDS = (ENV_FAILURE, MODEL_FAILURE, VERIFIER_FAILURE, PARSE_FAILURE)
# faults of the machinery: no outcome, never a valid sample
FAULT_KINDS = frozenset({ENV_FAILURE, MODEL_FAILURE, VERIFIER_FAILURE})
# An env_failure whose message starts with this lost its env host (guiforge.envs.service):
# the host died or dropped the lease, so nothing about the task is known and a rerun runs the
# episode again (the engine redoes a shard that holds one).
ENV_HOST_LOST = "env host lost"


class Fault(RuntimeError):
    """A failure of the machinery (environment, model endpoint, verifier), not of the agent:
    recorded as a row of its ``kind``, never as a reward."""

    kind: ClassVar[str] = ""


def failure_kind(row: Mapping[str, Any]) -> str | None:
    """A trajectory row's failure kind; rows written before the column existed say only
    ``env_failure``."""
    return row.get("failure_kind") or (ENV_FAILURE if row.get("env_failure") else None)


def is_fault(row: Mapping[str, Any]) -> bool:
    return failure_kind(row) in FAULT_KINDS


def valid_sample(row: Mapping[str, Any]) -> bool:
    """A trajectory whose outcome counts: no fault, and a verifier verdict."""
    return not is_fault(row) and row.get("success") is not None


def lost_env_host(text: str | None) -> bool:
    """Whether a failure message says the episode's env host was lost."""
    return bool(text) and ENV_HOST_LOST in text


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message on one line (its type where the message is empty)."""
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:limit]
