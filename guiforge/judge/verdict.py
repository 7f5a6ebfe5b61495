"""A judge's verdict on one trajectory, and the reply shape model judges must produce."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field


class JudgeReply(BaseModel):
    """The JSON object a model judge answers with (validated; errors are fed back)."""

    model_config = ConfigDict(extra="ignore")

    success: bool
    score: float = Field(ge=0, le=1)
    rationale: str = Field(min_length=1, max_length=4000)
    evidence_steps: list[int] = Field(default_factory=list)


@dataclass
class Verdict:
    success: bool | None  # None: no verdict (a parse or model failure, or nothing to judge)
    score: float | None
    rationale: str
    judge_model: str
    prompt_hash: str | None = None
    evidence_steps: list[int] = field(default_factory=list)
    evidence_images: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    parse_failure: bool = False
    failure_kind: str | None = None  # the judge's own: parse_failure, model_failure (guiforge.failures)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
