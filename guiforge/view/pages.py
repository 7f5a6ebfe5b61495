"""The viewer's HTML pages (jinja, escaped): the runs, one run, a row table with filters and
sorting, two runs side by side. The trajectory player is in player.py. Every count links to
the rows behind it (``rows_url``)."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from jinja2 import DictLoader, Environment
from markupsafe import Markup, escape

from guiforge.report.provenance import header_items
from guiforge.report.stats import money, per_unit_line, ratio, seconds
from guiforge.view.rows import Page, filter_names

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d232a; background: #f6f7f9; }
header { background: #1f2933; color: #fff; padding: 10px 20px; }
header a { color: #cfe3ff; } header h1 { margin: 0; font-size: 18px; display: inline; }
header nav { display: inline; margin-left: 16px; } header nav a { margin-right: 12px; }
.prov { font-size: 12px; opacity: .85; margin-top: 4px; } .prov span { margin-right: 14px; }
main { padding: 8px 20px 40px; }
section { background: #fff; border: 1px solid #e1e4e8; border-radius: 6px; padding: 8px 14px 12px; margin: 12px 0; }
h2 { font-size: 16px; margin: 6px 0; } .note { color: #59636e; }
table { border-collapse: collapse; font-size: 13px; } td, th { border-bottom: 1px solid #e7e9ec;
 padding: 3px 10px 3px 0; text-align: left; vertical-align: top; } th a { color: inherit; }
td.num, th.num { text-align: right; } .weak { background: #fde8e8; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 8px 0; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: #59636e; }
.ok { color: #2f7d32; } .bad { color: #b3261e; } code { font-size: 12px; }
.cols { display: flex; gap: 16px; flex-wrap: wrap; } .cols > section { flex: 1 1 420px; }
"""

LAYOUT = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{ title }} · guiforge view</title>
<style>{{ style }}</style>{% block head %}{% endblock %}</head><body>
<header><h1>guiforge view</h1><nav><a href="/">runs</a>{% for t in tables %}<a href="/rows/{{ t }}">{{ t }}</a>{% endfor %}
</nav><span class="note">{{ lake }}</span>
{% if header %}<div class="prov" id="provenance">{% for label, value in header %}<span><b>{{ label }}</b> {{ value }}</span>{% endfor %}</div>{% endif %}
</header><main>{% block body %}{% endblock %}</main></body></html>"""

INDEX = """{% extends "layout" %}{% block body %}
<section><h2>Runs</h2><table><tr><th>run</th><th class="num">tasks</th><th class="num">trajectories</th>
<th class="num">success</th><th class="num">RL tasks</th><th>provenance</th><th>recorded</th></tr>
{% for r in runs %}<tr><td><a href="/run/{{ r.run_id }}">{{ r.run_id }}</a></td>
<td class="num"><a href="{{ rows_url('tasks', run=r.run_id) }}">{{ r.tasks }}</a></td>
<td class="num"><a href="{{ rows_url('trajectories', run=r.run_id) }}">{{ r.trajectories }}</a></td>
<td class="num">{{ pct(r.success_rate) }}</td><td class="num">{{ r.rl_tasks }}</td>
<td>{% for label, value in r.provenance %}<div><b>{{ label }}</b> {{ value }}</div>{% endfor %}</td>
<td>{{ when(r.recorded_at) }}</td></tr>{% else %}<tr><td colspan="7">no runs in this lake yet</td></tr>{% endfor %}
</table></section>
{% if runs|length > 1 %}<section><h2>Two runs side by side</h2><form action="/compare" class="filters">
<label>run A<select name="a">{% for r in runs %}<option{% if loop.index == 1 %} selected{% endif %}>{{ r.run_id }}</option>{% endfor %}</select></label>
<label>run B<select name="b">{% for r in runs %}<option{% if loop.index == 2 %} selected{% endif %}>{{ r.run_id }}</option>{% endfor %}</select></label>
<button>compare</button></form></section>{% endif %}
{% endblock %}"""

RUN = """{% extends "layout" %}{% block body %}
<div class="cols"><section id="funnel"><h2>Funnel</h2><table>
{% for f in o.funnel %}<tr><td>{{ f.step }}</td><td class="num"><a class="count" href="{{ funnel_url(f) }}">{{ f.n }}</a></td>
<td class="note">{{ f.unit }}</td></tr>{% endfor %}</table></section>
<section id="cost"><h2>Tokens and cost</h2><p>{{ per_unit_line(o.costs) }}</p><table>
<tr><th>role</th><th>model</th><th class="num">trajectories</th><th class="num">prompt</th><th class="num">completion</th>
<th class="num">cached</th><th class="num">cost</th><th>priced by</th></tr>
{% for r in o.costs.by_role %}<tr><td>{{ r.role }}</td><td>{{ r.model }}</td><td class="num">{{ r.trajectories }}</td>
<td class="num">{{ r.prompt_tokens }}</td><td class="num">{{ r.completion_tokens }}</td><td class="num">{{ r.cached_tokens }}</td>
<td class="num">{{ money(r.cost_usd) }}</td><td>{{ r.price_source or "no price: data/prices.yaml" }}</td></tr>{% endfor %}
</table></section></div>
<section id="stages"><h2>Stages: time per stage and timeline</h2><table>
<tr><th>stage</th><th class="num">shards</th><th class="num">rows</th><th class="num">wall</th><th class="num">CPU</th>
<th class="num">shards/s</th><th class="num">envs busy</th><th class="num">env use</th></tr>
{% for s in o.stages %}<tr><td>{{ s.stage }}</td><td class="num">{{ s.shards }}</td><td class="num">{{ s.rows }}</td>
<td class="num">{{ seconds(s.wall_s) }}</td><td class="num">{{ seconds(s.cpu_s) }}</td><td class="num">{{ ratio(s.shards_per_s, 3) }}</td>
<td class="num">{{ ratio(s.env_busy) }}</td><td class="num">{{ pct(s.env_utilisation) }}</td></tr>{% endfor %}</table>
{{ timeline|safe }}</section>
<div class="cols"><section id="skills"><h2>Success by skill</h2><table>
<tr><th>domain</th><th>skill</th><th class="num">trajectories</th><th class="num">success</th><th class="num">failures</th></tr>
{% for s in o.by_skill %}<tr><td>{{ s.domain }}</td><td>{{ s.skill_id }}</td>
<td class="num"><a href="{{ rows_url('trajectories', run=o.run_id, skill=s.skill_id) }}">{{ s.trajectories }}</a></td>
<td class="num">{{ pct(s.success_rate) }}</td>
<td class="num"><a class="failures" href="{{ rows_url('trajectories', run=o.run_id, skill=s.skill_id, outcome='failure') }}">{{ s.failures }}</a></td></tr>
{% else %}<tr><td colspan="5" class="note">no trajectories yet</td></tr>{% endfor %}</table></section>
<section id="judge"><h2>Judge against the verifier</h2><table>
<tr><th>judge</th><th>domain</th><th class="num">n</th><th class="num">TP</th><th class="num">FP</th><th class="num">TN</th>
<th class="num">FN</th><th class="num">precision</th><th class="num">recall</th><th class="num">kappa</th><th class="num">disagree</th></tr>
{% for a in o.audit %}<tr><td>{{ a.judge }}</td><td>{{ a.domain }}</td>
<td class="num"><a href="{{ rows_url('judgments', run=o.run_id, judge=a.judge, domain=a.domain if a.domain != 'all' else '') }}">{{ a.n }}</a></td>
<td class="num">{{ a.tp }}</td><td class="num">{{ a.fp }}</td><td class="num">{{ a.tn }}</td><td class="num">{{ a.fn }}</td>
<td class="num">{{ ratio(a.precision) }}</td><td class="num">{{ ratio(a.recall) }}</td><td class="num">{{ ratio(a.kappa) }}</td>
<td class="num"><a href="{{ rows_url('judgments', run=o.run_id, judge=a.judge, agreement='no', domain=a.domain if a.domain != 'all' else '') }}">{{ a.disagree }}</a></td></tr>
{% else %}<tr><td colspan="11" class="note">no judgments yet</td></tr>{% endfor %}</table></section></div>
<section id="exclusions"><h2>Exclusions by pattern</h2><table><tr><th>stage</th><th>gate</th><th>pattern</th><th class="num">rows</th></tr>
{% for e in o.exclusions %}<tr><td>{{ e.stage }}</td><td>{{ e.gate }}</td><td title="{{ e.example }}">{{ e.pattern }}</td>
<td class="num"><a href="{{ rows_url('exclusions', run=o.run_id, stage=e.stage, gate=e.gate, pattern=e.pattern) }}">{{ e.n }}</a></td></tr>
{% else %}<tr><td colspan="4" class="note">none</td></tr>{% endfor %}</table></section>
{% endblock %}"""

ROWS = """{% extends "layout" %}{% block body %}
<section><h2>{{ p.table }} <span class="note" id="total">{{ p.total }} row(s)</span></h2>
<form class="filters" method="get">{% for name in names %}<label>{{ name }}
{% if name in p.choices or name in fixed %}<select name="{{ name }}"><option value="">any</option>
{% for v in p.choices.get(name) or fixed.get(name, []) %}<option{% if p.filters.get(name) == v %} selected{% endif %}>{{ v }}</option>{% endfor %}
{% if p.filters.get(name) and p.filters.get(name) not in (p.choices.get(name) or fixed.get(name, [])) %}<option selected>{{ p.filters.get(name) }}</option>{% endif %}
</select>{% else %}<input name="{{ name }}" value="{{ p.filters.get(name, '') }}" size="14">{% endif %}</label>{% endfor %}
<button>filter</button> <a href="/rows/{{ p.table }}">clear</a></form>
<table id="rows"><tr>{% for c in p.columns %}<th><a href="{{ sort_url(c) }}">{{ c }}{% if p.sort == c %}{{ ' ▼' if p.desc else ' ▲' }}{% endif %}</a></th>{% endfor %}</tr>
{% for r in p.rows %}<tr>{% for c in p.columns %}<td>{{ cell(c, r[loop.index0], r) }}</td>{% endfor %}</tr>{% endfor %}</table>
<p>{% if p.offset %}<a href="{{ page_url(p.offset - p.limit) }}">← previous</a>{% endif %}
 rows {{ p.offset + 1 if p.total else 0 }}–{{ [p.offset + p.limit, p.total]|min }} of {{ p.total }}
{% if p.offset + p.limit < p.total %}<a href="{{ page_url(p.offset + p.limit) }}">next →</a>{% endif %}</p></section>
{% endblock %}"""

COMPARE = """{% extends "layout" %}{% block body %}
<section id="changes"><h2>What changed from {{ c.a }} to {{ c.b }} (config, models, code, plugins)</h2><table>
<tr><th>setting</th><th>{{ c.a }}</th><th>{{ c.b }}</th></tr>
{% for key, va, vb in c.changes %}<tr><td><code>{{ key }}</code></td><td>{{ short(va) }}</td><td>{{ short(vb) }}</td></tr>
{% else %}<tr><td colspan="3">nothing recorded differs</td></tr>{% endfor %}</table></section>
<section id="funnels"><h2>Funnel</h2><table><tr><th>step</th><th class="num">{{ c.a }}</th><th class="num">{{ c.b }}</th></tr>
{% for step in steps %}<tr><td>{{ step }}</td>{% for run in (c.a, c.b) %}<td class="num">{{ c.sides[run].funnel.get(step, 0) }}</td>{% endfor %}</tr>{% endfor %}</table></section>
<section><h2>Time and cost</h2>{% for run in (c.a, c.b) %}<p><b>{{ run }}</b>: {{ per_unit_line(c.sides[run].costs) }};
wall {{ seconds(c.sides[run].stages|sum(attribute='wall_s')) }} over {{ c.sides[run].stages|length }} stage(s)</p>{% endfor %}</section>
<section id="skills"><h2>Success by skill</h2><table><tr><th>skill</th><th class="num">{{ c.a }}</th><th class="num">{{ c.b }}</th><th class="num">change</th></tr>
{% for skill in c.skills %}{% set sa = c.sides[c.a].by_skill.get(skill) %}{% set sb = c.sides[c.b].by_skill.get(skill) %}<tr><td>{{ skill }}</td>
<td class="num">{% if sa %}<a href="{{ rows_url('trajectories', run=c.a, skill=skill) }}">{{ pct(sa.success_rate) }} of {{ sa.trajectories }}</a>{% else %}–{% endif %}</td>
<td class="num">{% if sb %}<a href="{{ rows_url('trajectories', run=c.b, skill=skill) }}">{{ pct(sb.success_rate) }} of {{ sb.trajectories }}</a>{% else %}–{% endif %}</td>
<td class="num">{% if sa and sb and sa.success_rate is not none and sb.success_rate is not none %}{{ '%+.0f'|format((sb.success_rate - sa.success_rate) * 100) }} pt{% endif %}</td></tr>{% endfor %}</table></section>
<section><h2>Judge audit</h2><div class="cols">{% for run in (c.a, c.b) %}<div><b>{{ run }}</b><table>
<tr><th>judge</th><th>domain</th><th class="num">n</th><th class="num">precision</th><th class="num">recall</th><th class="num">kappa</th></tr>
{% for a in c.sides[run].audit %}<tr><td>{{ a.judge }}</td><td>{{ a.domain }}</td><td class="num">{{ a.n }}</td><td class="num">{{ ratio(a.precision) }}</td>
<td class="num">{{ ratio(a.recall) }}</td><td class="num">{{ ratio(a.kappa) }}</td></tr>{% else %}<tr><td colspan="6" class="note">no judgments</td></tr>{% endfor %}
</table></div>{% endfor %}</div></section>
{% endblock %}"""

TABLES = ("tasks", "trajectories", "judgments", "exclusions")
FIXED = {"outcome": ["success", "failure", "none", "mixed"], "agreement": ["yes", "no", "none"],
         "accepted": ["yes", "no", "none"]}


def rows_url(table: str, **filters) -> str:
    query = urlencode({k: v for k, v in filters.items() if v not in (None, "")})
    return f"/rows/{table}" + (f"?{query}" if query else "")


def pct(value) -> str:
    return "–" if value is None else f"{value:.0%}"


def when(stamp) -> str:
    return dt.datetime.fromtimestamp(stamp, dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if stamp else "–"


def short(value) -> str:
    text = "–" if value is None else str(value)
    return text if len(text) <= 120 else text[:117] + "…"


_env = Environment(autoescape=True, loader=DictLoader(
    {"layout": LAYOUT, "index": INDEX, "run": RUN, "rows": ROWS, "compare": COMPARE}))
_env.globals.update(style=STYLE, tables=TABLES, rows_url=rows_url, pct=pct, when=when, money=money, seconds=seconds,
                    ratio=ratio, per_unit_line=per_unit_line, short=short)


def template(name: str):
    return _env.get_template(name)


def add_template(name: str, source: str) -> None:
    """A page defined in another module (the player) that extends the layout."""
    _env.loader.mapping[name] = source


def render_index(lake: str, runs: list[dict]) -> str:
    return template("index").render(title="runs", lake=lake, runs=runs, header=None)


def _funnel_url(run: str):
    def url(f: dict) -> str:
        table = {"task_candidates": "tasks", "rl_tasks": "tasks"}.get(f["rows_of"], f["rows_of"])
        extra = dict(pair.split("=", 1) for pair in f["query"].split("&") if pair)
        return rows_url(table, run=run, **extra)
    return url


def render_run(lake: str, overview: dict, timeline: str) -> str:
    return template("run").render(title=overview["run_id"], lake=lake, o=overview, header=overview["header"],
                                  timeline=timeline, funnel_url=_funnel_url(overview["run_id"]))


def render_rows(lake: str, page: Page, header: list | None) -> str:
    def url(**change) -> str:
        params = {**page.filters, "sort": page.sort or "", "desc": "1" if page.desc else ""} | change
        return rows_url(page.table, **params)

    def sort_url(column: str) -> str:
        return url(sort=column, desc="" if page.sort == column and page.desc else ("1" if page.sort == column else ""),
                   offset="")

    def cell(column: str, value, row: tuple):
        run = row[page.columns.index("run_id")] if "run_id" in page.columns else ""
        if column == "trajectory_id" and value:
            return _link(f"/trajectory/{run}/{value}", value)
        if column == "task_id" and value:
            return _link(rows_url("trajectories", run=run, task=value), value)
        if isinstance(value, float):
            return f"{value:.3f}".rstrip("0").rstrip(".")
        if isinstance(value, list):
            return ", ".join(map(str, value))
        return short(value)

    return template("rows").render(title=page.table, lake=lake, p=page, names=filter_names(page.table), fixed=FIXED,
                                   header=header, sort_url=sort_url, page_url=lambda offset: url(offset=str(offset)),
                                   cell=cell)


def _link(href: str, text: str) -> Markup:
    return Markup(f'<a href="{escape(href)}">{escape(text)}</a>')


def render_compare(lake: str, comparison: dict) -> str:
    steps = list(dict.fromkeys([*comparison["sides"][comparison["a"]]["funnel"],
                                *comparison["sides"][comparison["b"]]["funnel"]]))
    header = [("compare", f"{comparison['a']} ↔ {comparison['b']}")]
    for run in (comparison["a"], comparison["b"]):
        header += [(f"{run} {label}", value) for label, value in
                   header_items(comparison["sides"][run]["provenance"])[1:4]]
    return template("compare").render(title="compare", lake=lake, c=comparison, steps=steps, header=header)

