"""The run's brake on failures: a stage whose share of units that met a fault of the
machinery (an environment, model or verifier failure, guiforge.failures; in episodes, gated
candidates, judgments, relabelled steps: each stage says what it counts, ``Stage.failures``)
passes the pipeline's ``max_failure_share`` stops the run with one line.

The shard that tips the share over is not committed (a rerun after the cause is fixed does
it again); shards committed before it stay, so the rerun resumes. Committed shards record
their counts in their manifest entry, so a resumed stage starts from them.
"""

from __future__ import annotations

import threading
from collections import Counter

from guiforge.errors import GuiforgeError


class FailureShareExceeded(GuiforgeError):
    """More than ``max_failure_share`` of a stage's units failed."""


class FailureShare:
    """One stage's failures and units so far in this run (thread-safe)."""

    def __init__(self, ctx, stage):
        self.stage = stage.name
        self.limit: float | None = ctx.pipeline.config.max_failure_share
        source = ctx.pipeline.source  # "<pipeline name>" where a flow rebuilt it from its dict
        self.source = "the pipeline file" if source.startswith("<") else source
        self.kinds: Counter = Counter()
        self.units = 0
        self.tripped: str | None = None
        self._lock = threading.Lock()
        for entry in ctx.lake.manifest_entries(ctx.run_id, stage.name):  # the engine records them beside the outputs
            self.kinds.update(entry.get("failures") or {})
            self.units += int(entry.get("units") or 0)

    def admit(self, kinds: dict[str, int], units: int) -> None:
        """Count a finished shard, or raise :class:`FailureShareExceeded` (and count nothing)
        when the stage's share with it passes the limit."""
        with self._lock:
            failed = sum(self.kinds.values()) + sum(kinds.values())
            total = self.units + units
            if self.limit is not None and total and failed / total > self.limit:
                together = self.kinds + Counter(kinds)
                by_kind = ", ".join(f"{k} {n}" for k, n in sorted(together.items()))
                self.tripped = (
                    f"stage {self.stage}: {failed} of {total} units failed ({by_kind}), more than "
                    f"max_failure_share {self.limit:g}; the last shard was not committed and the committed ones are "
                    f"kept: fix the cause (`guiforge stats` counts the failures), then rerun to resume (or raise "
                    f"max_failure_share in {self.source})")
                raise FailureShareExceeded(self.tripped)
            self.kinds.update(kinds)
            self.units += units
