"""Plotly figures for the report, one per function, each drawn from the rows a query in
guiforge.report.queries returns. Figures are SVG-drawn trace types only (no WebGL), so a
headless browser without a GPU renders every one."""

from __future__ import annotations

import plotly.graph_objects as go

# One colour per domain on every chart.
DOMAIN_COLORS = {"web": "#4C78A8", "mobile": "#F58518", "desktop": "#54A24B", "tools": "#B279A2", "?": "#9D9D9D"}
OUTCOME_COLORS = {True: "#54A24B", False: "#E45756"}


def _layout(fig: go.Figure, title: str, height: int = 380, **kw) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0.01}, height=height, template="plotly_white",
                      margin={"l": 60, "r": 20, "t": 50, "b": 50}, legend={"orientation": "h", "y": -0.15}, **kw)
    return fig


def _domains(data: list[dict]) -> list[str]:
    order = list(DOMAIN_COLORS)
    return sorted({r["domain"] for r in data}, key=lambda d: (order.index(d) if d in order else 99, d))


def funnel(data: list[dict]) -> go.Figure:
    steps = list(dict.fromkeys(r["step"] for r in data))
    fig = go.Figure()
    for domain in _domains(data):
        by_step = {r["step"]: r["tasks"] for r in data if r["domain"] == domain}
        fig.add_trace(go.Funnel(name=domain, y=steps, x=[by_step.get(s, 0) for s in steps],
                                marker={"color": DOMAIN_COLORS.get(domain)}, textinfo="value"))
    return _layout(fig, "Tasks through the pipeline, by domain", height=360)


def success_by_domain(data: list[dict]) -> go.Figure:
    fig = go.Figure(go.Bar(
        x=[r["domain"] for r in data], y=[r["success_rate"] for r in data],
        marker={"color": [DOMAIN_COLORS.get(r["domain"], "#9D9D9D") for r in data]},
        text=[f"{(r['success_rate'] or 0):.0%} of {r['trajectories']}" for r in data], textposition="outside",
        customdata=[r["no_outcome"] for r in data],
        hovertemplate="%{x}: %{y:.1%} success<br>no outcome (faults): %{customdata}<extra></extra>"))
    fig.update_yaxes(range=[0, 1.1], tickformat=".0%", title="success rate (valid samples)")
    return _layout(fig, "Success by domain", height=340)


def app_of(skill_id: str) -> str:
    """A skill's application: the part of its id before the first dot (mail.reply -> mail)."""
    return (skill_id or "?").split(".", 1)[0]


def success_by_app(data: list[dict], url=None) -> go.Figure:
    """Success rate per application, every skill of the app pooled (readable at any count)."""
    apps: dict[str, list[int]] = {}
    for r in data:
        agg = apps.setdefault(app_of(r["skill_id"]), [0, 0, 0])
        agg[0] += r["trajectories"]
        agg[1] += round((r["success_rate"] or 0) * (r["valid"] if "valid" in r else r["trajectories"]))
        agg[2] += 1
    names = sorted(apps, key=lambda a: apps[a][1] / max(apps[a][0], 1))
    fig = go.Figure(go.Bar(
        orientation="h", y=names, x=[apps[a][1] / max(apps[a][0], 1) for a in names], marker={"color": "#4C78A8"},
        text=[f"{apps[a][1] / max(apps[a][0], 1):.0%} · {apps[a][2]} skills, {apps[a][0]} samples" for a in names],
        textposition="auto", ids=[url(a) for a in names] if url else None,
        hovertemplate="%{y}: %{x:.1%}<extra></extra>"))
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title="success rate")
    fig.update_yaxes(automargin=True)
    return _layout(fig, "Success by application (skills pooled)", height=max(260, 70 + 26 * len(names)))


def success_by_skill(data: list[dict], url=None, top: int = 10) -> go.Figure:
    """The hardest and the easiest ``top`` skills (all of them when there are few), one bar
    each, labelled in full."""
    shown = data if len(data) <= 2 * top else data[:top] + data[-top:]
    title = (f"Success by skill: the {top} hardest and {top} easiest of {len(data)}" if len(shown) < len(data)
             else "Success by skill")
    fig = go.Figure()
    for domain in _domains(shown):
        part = [r for r in shown if r["domain"] == domain]
        fig.add_trace(go.Bar(name=domain, orientation="h", y=[r["skill_id"] for r in part],
                             x=[r["success_rate"] for r in part], marker={"color": DOMAIN_COLORS.get(domain)},
                             customdata=[r["trajectories"] for r in part],
                             ids=[url(r["skill_id"]) for r in part] if url else None,
                             hovertemplate="%{y}: %{x:.1%} of %{customdata}<extra></extra>"))
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title="success rate")
    fig.update_yaxes(categoryorder="array", categoryarray=[r["skill_id"] for r in shown], automargin=True,
                     tickfont={"size": 11})
    return _layout(fig, title, height=max(300, 70 + 20 * len(shown)))


def steps_per_trajectory(data: list[dict]) -> go.Figure:
    fig = go.Figure()
    for outcome in (True, False):
        values = [r["n_steps"] for r in data if bool(r["success"]) is outcome]
        if values:
            fig.add_trace(go.Histogram(x=values, name="success" if outcome else "failure", xbins={"size": 1},
                                       marker={"color": OUTCOME_COLORS[outcome]}, opacity=0.75))
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title="steps")
    fig.update_yaxes(title="trajectories")
    return _layout(fig, "Steps per trajectory", height=340)


def exclusions(data: list[dict]) -> go.Figure:
    labels = [f"{r['stage']} / {r['gate']}" for r in data]
    fig = go.Figure(go.Bar(orientation="h", y=labels, x=[r["n"] for r in data], marker={"color": "#E45756"},
                           text=[r["n"] for r in data], textposition="auto",
                           hovertext=[(r["example"] or "")[:200] for r in data],
                           hovertemplate="%{y}: %{x}<br>%{hovertext}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="rows excluded")
    return _layout(fig, "Exclusions by stage and gate", height=max(260, 80 + 28 * len(data)))


def judge_agreement(data: list[dict]) -> go.Figure:
    """Confusion counts per judge and domain as stacked bars (verdict vs verifier)."""
    labels = [f"{r['judge']} / {r['domain']}" for r in data]
    fig = go.Figure()
    for key, name, color in (("tp", "both success", "#54A24B"), ("tn", "both failure", "#88D27A"),
                             ("fp", "judge success, verifier failure", "#E45756"),
                             ("fn", "judge failure, verifier success", "#F58518")):
        fig.add_trace(go.Bar(name=name, x=labels, y=[r[key] for r in data], marker={"color": color}))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="trajectories")
    return _layout(fig, "Judge against verifier", height=360)


def success_rate_histogram(all_tasks: list[dict], pool: list[dict]) -> go.Figure:
    fig = go.Figure()
    bins = {"start": -0.05, "end": 1.05, "size": 0.1}  # bins centred on 0, 0.1, ... 1 (k up to 10)
    fig.add_trace(go.Histogram(x=[r["success_rate"] for r in all_tasks], name="rolled-out tasks", xbins=bins,
                               marker={"color": "#BAB0AC"}, opacity=0.8))
    if pool:
        fig.add_trace(go.Histogram(x=[r["success_rate"] for r in pool], name="RL pool", xbins=bins,
                                   marker={"color": "#4C78A8"}, opacity=0.9))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title="per-task success rate over valid samples", range=[-0.05, 1.05], dtick=0.1)
    fig.update_yaxes(title="tasks")
    return _layout(fig, "Per-task success rates" + (" and the RL pool" if pool else ""), height=340)


def rounds(data: list[dict]) -> go.Figure:
    fig = go.Figure()
    for domain in _domains(data):
        part = [r for r in data if r["domain"] == domain]
        fig.add_trace(go.Bar(name=f"{domain} tasks", x=[f"round {r['round']}" for r in part],
                             y=[r["tasks"] for r in part], marker={"color": DOMAIN_COLORS.get(domain)}))
        fig.add_trace(go.Scatter(name=f"{domain} success", x=[f"round {r['round']}" for r in part],
                                 y=[r["success_rate"] for r in part], yaxis="y2", mode="lines+markers",
                                 line={"color": DOMAIN_COLORS.get(domain), "dash": "dot"}))
    fig.update_layout(barmode="group", yaxis={"title": "tasks"},
                      yaxis2={"title": "success rate", "overlaying": "y", "side": "right", "range": [0, 1.05],
                              "tickformat": ".0%", "dtick": 0.25, "showgrid": False})
    return _layout(fig, "Rounds: tasks and success by domain", height=360)


def counts_bar(data: list[dict], label: str, value: str, title: str) -> go.Figure:
    fig = go.Figure(go.Bar(orientation="h", y=[str(r[label]) for r in data], x=[r[value] for r in data],
                           marker={"color": "#72B7B2"}, text=[r[value] for r in data], textposition="auto"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, title, height=max(240, 80 + 28 * len(data)))
