"""Quality tiers by domain (``judgments.quality_tier``, guiforge.judge.tiers), for
``guiforge stats`` and the report. Read in Python, not as a catalog view: lakes judged
before tiers have no such column, and a view naming it would not bind there."""

from __future__ import annotations

from collections import Counter

import pyarrow.compute as pc
from rich.table import Table

from guiforge.judge.tiers import TIERS, worst
from guiforge.lake.store import Lake


def tiers_by_domain(lake: Lake, run_id: str | None = None) -> list[dict]:
    """One row per domain (and one for all): trajectories per tier, each at its strictest
    judge's tier; [] where no judgment carries a tier."""
    if "judgments" not in lake.tables():
        return []
    table = lake.read_table("judgments", run_id=run_id)
    if "quality_tier" not in table.column_names:
        return []
    # only judgments with a tier reach Python: a trajectory whose judges gave none has no tier
    table = table.filter(pc.is_valid(table["quality_tier"]))
    rows = table.select(["trajectory_id", "domain", "quality_tier"]).to_pylist()
    per: dict[tuple[str, str], list[str | None]] = {}
    for r in rows:
        per.setdefault((r["trajectory_id"], r.get("domain") or "?"), []).append(r.get("quality_tier"))
    counts: dict[str, Counter] = {}
    for (_, domain), tiers in per.items():
        tier = worst(tiers)
        if tier is not None:
            counts.setdefault(domain, Counter())[tier] += 1
    if not counts:
        return []
    total = sum(counts.values(), Counter())
    return [{"domain": d, **{t: c[t] for t in TIERS}, "trajectories": sum(c.values())}
            for d, c in [*sorted(counts.items()), ("all", total)]]


def print_tiers(out, lake: Lake, run_id: str | None = None) -> None:
    """The tiers table of ``guiforge stats`` (nothing where the run has no tiers)."""
    rows = tiers_by_domain(lake, run_id)
    if not rows:
        return
    table = Table(title="quality tiers by domain (trajectories; judgments.quality_tier)")
    for col in ("domain", *TIERS, "trajectories"):
        table.add_column(col, justify="left" if col == "domain" else "right")
    for r in rows:
        table.add_row(*(str(r[c]) for c in ("domain", *TIERS, "trajectories")))
    out.print(table)
