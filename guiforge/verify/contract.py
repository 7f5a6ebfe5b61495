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
    """One rubric criterion ``b_j`` with weight ``w_j``. ``check`` names a check function
    (guiforge.verify.registry: guiforge's own, an installed package's, or one the run
    declares) and its arguments; a check answers 0/1 or a graded value in [0, 1]."""

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
    criteria: dict[str, int | float]  # binary checks 0/1, graded ones their value
    errors: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # what a check said about its value
    graded: dict[str, Any] | None = None  # the environment kind's own reward {value, reason}

    def as_dict(self) -> dict[str, Any]:
        out = {"score": self.score, "success": self.success, "criteria": self.criteria, "errors": self.errors}
        if self.reasons:
            out["reasons"] = self.reasons
        if self.graded is not None:
            out["graded"] = self.graded
        return out


@dataclass
class FinalState:
    """What a verifier may read: app state JSON, the workspace, the agent's final answer,
    and the initial state they started from."""

    apps: dict[str, Any] = field(default_factory=dict)
    workspace: Path | None = None
    answer: str | None = None
    status: str | None = None
    terminal: list[dict[str, Any]] = field(default_factory=list)
    # s0, for the side-damage check (guiforge.verify.side_effects): the app state the task
    # seeded (web, mobile) and the workspace files as the preparers wrote them (desktop,
    # tools); None where the environment gives none
    initial_apps: dict[str, Any] | None = None
    initial_files: dict[str, bytes] | None = None
