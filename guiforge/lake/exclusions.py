"""Rows of the exclusions table: what a gate, filter or stage left out, and why. Every layer
that drops something writes one (filters, gates, stages, exports), so it lives with the lake."""

from __future__ import annotations

import json
from typing import Any


def exclusion_row(stage: str, gate: str, reason: str, subject_id: str, subject_table: str,
                  details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row of the exclusions table: what a gate or filter dropped, and why."""
    return {"stage": stage, "gate": gate, "reason": reason, "subject_id": subject_id,
            "subject_table": subject_table, "details_json": json.dumps(details or {}, default=str)}
