"""Ask for JSON, validate it against a pydantic model, and on failure retry with the error
fed back to the model. After the last attempt the failure is returned, never raised; so is
a call that failed for good (``failure``: the :class:`ModelFailure`, a ``model_failure``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from guiforge.models.base import Completion, Message, ModelClient
from guiforge.models.errors import ModelFailure

M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


@dataclass
class Structured(Generic[M]):
    value: M | None
    completions: list[Completion] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failure: ModelFailure | None = None  # the endpoint failed: no reply to judge at all

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def attempts(self) -> int:
        return len(self.completions)


def extract_json(text: str) -> object:
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    start, end = candidate.find("{"), candidate.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    return json.loads(candidate[start : end + 1])


def describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        lines = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:12]]
        return "; ".join(lines)
    return f"{type(exc).__name__}: {exc}"


async def agenerate(client: ModelClient, messages: list[Message], model: type[M], attempts: int | None = None,
                    extra_check=None) -> Structured[M]:
    """``extra_check(value) -> list[str]`` may add semantic errors that also trigger a retry."""
    attempts = attempts or client.config.max_parse_attempts
    convo = list(messages)
    result: Structured[M] = Structured(None)
    for _ in range(attempts):
        try:
            completion = await client.acomplete(convo, json=True)
        except ModelFailure as exc:
            result.failure = exc
            result.errors.append(str(exc))
            return result
        result.completions.append(completion)
        try:
            value = model.model_validate(extract_json(completion.text))
            problems = extra_check(value) if extra_check else []
            if not problems:
                result.value = value
                return result
            error = "; ".join(problems)
        except (ValueError, ValidationError) as exc:
            error = describe(exc)
        result.errors.append(error)
        convo = [*convo, Message("assistant", completion.text),
                 Message("user", f"Your JSON was rejected: {error}\nReply with the corrected JSON object only.")]
    return result
