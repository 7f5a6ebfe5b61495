"""What a verifier reads and returns: a rubric criterion, the final state of an episode
(app state JSON, the workspace, the agent's answer; never the screen) and the verdict.
Environments produce the state and tasks carry the criteria, so these types sit here,
below the environments."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Criterion(BaseModel):
    """One binary rubric criterion ``b_j`` with weight ``w_j``. ``check`` names a check
    function from :mod:`guiforge.verify.checks` and its arguments."""

    model_config = ConfigDict(extra="forbid")

    id: str
    description: str = ""
    weight: float = Field(default=1.0, gt=0)
    required: bool = True
    check: dict[str, Any]


@dataclass
class VerifierResult:
    score: float
    success: bool
    criteria: dict[str, int]
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "success": self.success, "criteria": self.criteria, "errors": self.errors}


@dataclass
class FinalState:
    """What a verifier may read: app state JSON, the workspace, the agent's final answer."""

    apps: dict[str, Any] = field(default_factory=dict)
    workspace: Path | None = None
    answer: str | None = None
    status: str | None = None
    terminal: list[dict[str, Any]] = field(default_factory=list)
