"""One thing wrong with a world: a rule's code and a message, what the consistency and the
coherence checks return."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
