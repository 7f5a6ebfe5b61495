"""One shape for every filter: ``check(row)`` returns None to keep a row, or the reason
it is dropped; the base turns every drop into an ``exclusions`` row.

After datatrove's filters (a filter returns a reason, the base writes the exclusion): the
judge's acceptance, the RL selection's band, the relabel consistency check and the quota
are blocks of this shape, listed in a stage's config, instead of code wired in order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from guiforge.lake.exclusions import exclusion_row


@dataclass(frozen=True)
class Drop:
    """Why a filter dropped a row: a short reason, plus details for the exclusions row."""

    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)


class Filter(ABC):
    """A named check; ``gate`` is the name written to ``exclusions.gate``."""

    gate: ClassVar[str]

    @abstractmethod
    def check(self, row: Mapping[str, Any]) -> str | Drop | None:
        """None keeps the row; a reason (or a :class:`Drop`) drops it."""


@dataclass
class Filtered:
    kept: list[Mapping[str, Any]]
    exclusions: list[dict[str, Any]]


def apply_filters(filters: Sequence[Filter], rows: Iterable[Mapping[str, Any]], *, stage: str,
                  subject: str, subject_table: str) -> Filtered:
    """Run ``filters`` in order over ``rows``; the first one to drop a row names the reason.
    ``subject`` is the column holding the row's id (``exclusions.subject_id``)."""
    kept, excluded = [], []
    for row in rows:
        for f in filters:
            verdict = f.check(row)
            if verdict is None:
                continue
            drop = verdict if isinstance(verdict, Drop) else Drop(str(verdict))
            excluded.append(exclusion_row(stage, f.gate, drop.reason, str(row[subject]), subject_table,
                                          dict(drop.details)))
            break
        else:
            kept.append(row)
    return Filtered(kept, excluded)
