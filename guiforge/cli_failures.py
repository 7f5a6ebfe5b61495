"""``guiforge stats``: failures by kind, stage and domain (guiforge.failures), and what a
run's ``faults:`` injected."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from guiforge.failures import FAILURE_KINDS
from guiforge.report.failures import failure_counts, injected_counts


def print_failures(out: Console, lake, run_id: str | None) -> None:
    """Failures by kind, stage and domain; what a run's ``faults:`` injected beside them."""
    rows = failure_counts(lake, run_id)
    runs = sorted({r["run_id"] for r in rows})
    if rows:
        ft = Table(title="failures by stage and domain: env, model, verifier failures have no outcome (never a "
                         "reward or training data); parse failures are the policy's own")
        names = ["run"] if len(runs) > 1 else []
        for col in (*names, "stage", "domain", *(k.removesuffix("_failure") for k in FAILURE_KINDS), "total"):
            ft.add_column(col, justify="left" if col in ("run", "stage", "domain") else "right")
        for r in rows:
            ft.add_row(*([r["run_id"]] if names else []), r["stage"], r["domain"],
                       *(str(r[k]) for k in FAILURE_KINDS), str(r["total"]))
        out.print(ft)
    for run in sorted(set(runs) | ({run_id} if run_id else set())):
        injected = injected_counts(lake, run)
        if injected:
            summary = ", ".join(f"{r['stage']} {r['site']} {r['kind']} {r['n']}" for r in injected)
            out.print(f"injected faults (faults: in the pipeline file) of run {run}: {summary}", soft_wrap=True)
