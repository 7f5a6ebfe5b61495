"""The report as one self-contained HTML page: sections of figures, small tables and sample
trajectories, with plotly.js inlined once in the head (no CDN: the page opens offline)."""

from __future__ import annotations

from dataclasses import dataclass, field

import plotly.graph_objects as go
from jinja2 import Environment
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from guiforge.report.samples import Sample

NONE_YET = "none yet"


@dataclass
class Section:
    title: str
    anchor: str
    figures: list[go.Figure] = field(default_factory=list)
    tables: list[tuple[str, list[dict]]] = field(default_factory=list)  # (caption, rows)
    note: str = ""  # shown above the figures; "none yet" when the section has no data
    samples: list[Sample] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.figures or self.tables or self.samples)


TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>guiforge report: {{ title }}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #1f2933; color: #fff; padding: 14px 24px; }
header h1 { margin: 0; font-size: 20px; } header p { margin: 4px 0 0; opacity: .8; }
nav { padding: 8px 24px; background: #eef1f4; } nav a { margin-right: 14px; color: #1f5fa8; }
main { padding: 8px 24px 40px; max-width: 1200px; }
section { background: #fff; border: 1px solid #e3e6ea; border-radius: 6px; padding: 8px 16px 16px; margin: 16px 0; }
h2 { font-size: 17px; margin: 8px 0; } .note { color: #555; } .none { color: #888; font-style: italic; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
td, th { border-bottom: 1px solid #e3e6ea; padding: 3px 10px 3px 0; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
.sample { display: flex; gap: 16px; border-top: 1px solid #e3e6ea; padding: 10px 0; }
.sample .meta { flex: 0 0 300px; } .sample .frames { display: flex; gap: 8px; flex-wrap: wrap; }
.sample figure { margin: 0; } .sample figcaption { font-size: 12px; color: #555; }
.sample img { border: 1px solid #ccc; display: block; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px; }
.accepted { background: #3a8a3a; } .rejected { background: #c43c3c; }
</style>
<script type="text/javascript">{{ plotly_js }}</script>
</head><body>
<header><h1>guiforge report</h1><p>{{ subtitle }}</p></header>
<nav>{% for s in sections %}<a href="#{{ s.anchor }}">{{ s.title }}</a>{% endfor %}</nav>
<main>
{% for s in sections %}<section id="{{ s.anchor }}"><h2>{{ s.title }}</h2>
{% if s.note %}<p class="{{ 'none' if s.note.startswith(none_yet) else 'note' }}">{{ s.note }}</p>{% endif %}
{% for fig in s.figure_html %}<div class="plot">{{ fig }}</div>{% endfor %}
{% for caption, rows in s.tables %}{% if rows %}<table><caption>{{ caption }}</caption>
<tr>{% for k in rows[0] %}<th>{{ k }}</th>{% endfor %}</tr>
{% for r in rows %}<tr>{% for v in r.values() %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}{% endfor %}
{% for x in s.samples %}<div class="sample"><div class="meta">
<span class="badge {{ 'accepted' if x.accepted else 'rejected' }}">{{ 'accepted' if x.accepted else 'rejected' }}</span>
<b>{{ x.domain }}</b> · {{ x.skill_id }}<p>{{ x.instruction }}</p>
<p class="note">{{ x.n_steps }} steps, score {{ fmt(x.score) }}<br>{{ x.verdict }}<br>
<code>{{ x.trajectory_id }}</code></p></div><div class="frames">
{% for f in x.frames %}<figure><img src="{{ f.data_uri }}" width="{{ f.width }}" height="{{ f.height }}"
 alt="step {{ f.step_index }} of {{ x.trajectory_id }}"><figcaption>step {{ f.step_index }}: {{ f.action }}</figcaption></figure>
{% else %}<p class="note">no screenshots stored for this trajectory</p>{% endfor %}
</div></div>{% endfor %}
</section>
{% endfor %}</main></body></html>
"""


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "–"
    return "–" if value is None else str(value)


def render(title: str, subtitle: str, sections: list[Section]) -> str:
    env = Environment(autoescape=True)
    template = env.from_string(TEMPLATE)
    views = []
    for i, s in enumerate(sections):
        note = s.note or (NONE_YET if s.empty else "")
        figure_html = [_figure_div(fig, f"plot-{i}-{j}") for j, fig in enumerate(s.figures)]
        views.append({"title": s.title, "anchor": s.anchor, "note": note, "figure_html": figure_html,
                      "tables": s.tables, "samples": s.samples})
    return template.render(title=title, subtitle=subtitle, sections=views, none_yet=NONE_YET, fmt=_fmt,
                           plotly_js=_MarkupJs(get_plotlyjs()))


def _figure_div(fig: go.Figure, div_id: str) -> Markup:
    return Markup(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                              config={"displaylogo": False, "responsive": True}))


class _MarkupJs(str):
    """plotly.js inserted verbatim (it is ours, not data); jinja's escaping would break it."""

    def __html__(self) -> str:
        return str(self)
