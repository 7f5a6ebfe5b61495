"""``guiforge stats``'s time and cost section: per run, its provenance in a few lines, the
time per stage (wall, CPU, shards/s, environment use) and the tokens and cost by role with
the cost per trajectory, per accepted SFT row and per RL task. The same functions feed the
report and the viewer, so the three show the same figures."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from guiforge.lake.store import Lake
from guiforge.report.costs import cost_summary
from guiforge.report.provenance import header_items, lake_runs, run_provenance
from guiforge.report.timing import stage_times
from guiforge.report.views import open_views


def run_figures(lake: Lake, run_id: str) -> dict:
    """Everything the time-and-cost views show for one run."""
    con, filled = open_views(lake, run_id)
    try:
        provenance = run_provenance(lake, run_id, con, filled)
        costs = cost_summary(con, filled, {run_id: provenance})
    finally:
        con.close()
    return {"run_id": run_id, "provenance": provenance, "stages": stage_times(lake, run_id, provenance),
            "costs": costs}


def money(value: float | None) -> str:
    if value is None:
        return "unpriced"
    return f"${value:.4f}" if value < 10 else f"${value:,.2f}"


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}s" if value < 600 else f"{value / 60:.1f}min"


def ratio(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def per_unit_line(c: dict) -> str:
    """The run's cost and its cost per unit, in one line (stats, report and viewer)."""
    u, per = c["units"], c["per_unit"]

    def each(unit: str, n: str) -> str:
        return money(per[unit]) if u[n] else "- (none)"

    return (f"cost {money(c['total_cost_usd'])}: per trajectory {each('trajectory', 'trajectories')} "
            f"({u['trajectories']}), per accepted SFT row {each('accepted_sft_row', 'sft_rows')} "
            f"({u['sft_rows']} rows of {u['accepted_trajectories']} trajectories accepted by {c['accepted_by']}), "
            f"per RL task {each('rl_task', 'rl_tasks')} ({u['rl_tasks']})")


def print_time_and_cost(out: Console, lake_uri: str, run_id: str | None = None) -> None:
    lake = Lake(lake_uri)
    for run in [run_id] if run_id else lake_runs(lake):
        f = run_figures(lake, run)
        if not f["stages"] and not f["costs"]["units"]["trajectories"]:
            continue
        out.print(f"[bold]run {run}[/]", highlight=False)
        for label, value in header_items(f["provenance"])[1:]:
            out.print(f"  {label}: {value}", highlight=False, soft_wrap=True)
        if f["stages"]:
            st = Table(title=f"time per stage ({run})")
            for col in ("stage", "shards", "rows", "wall", "CPU", "CPU/wall", "shards/s", "envs busy", "env use",
                        "busy/leased"):
                st.add_column(col, justify="left" if col == "stage" else "right")
            for s in f["stages"]:
                st.add_row(s["stage"], str(s["shards"]), str(s["rows"]), seconds(s["wall_s"]), seconds(s["cpu_s"]),
                           ratio(s["cpu_s"] / s["wall_s"] if s["cpu_s"] is not None and s["wall_s"] else None),
                           ratio(s["shards_per_s"], 3), ratio(s["env_busy"]),
                           "-" if s["env_utilisation"] is None else f"{s['env_utilisation']:.0%}",
                           "-" if s.get("env_leased_busy") is None else f"{s['env_leased_busy']:.0%}")
            out.print(st)
        c = f["costs"]
        if c["by_role"]:
            ct = Table(title=f"tokens and cost ({run})")
            for col in ("role", "model", "trajectories", "prompt", "completion", "cached", "cost", "priced by"):
                ct.add_column(col, justify="left" if col in ("role", "model", "priced by") else "right")
            for r in c["by_role"]:
                ct.add_row(r["role"], r["model"], str(r["trajectories"]), f"{r['prompt_tokens']:,}",
                           f"{r['completion_tokens']:,}", f"{r['cached_tokens']:,}", money(r["cost_usd"]),
                           r["price_source"] or "no price: add it to data/prices.yaml")
            out.print(ct)
            out.print(f"  {per_unit_line(c)}", highlight=False, soft_wrap=True)
