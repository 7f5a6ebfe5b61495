"""The report as one HTML page: sections of figures, small tables and sample trajectories,
with plotly.js loaded from a file beside it (``plotly-<version>.min.js``, shared by every
report in the folder; no CDN, so the page opens offline). Every figure links to its rows
in ``guiforge view`` (a link under it, and a click on a bar opens that bar's rows)."""

from __future__ import annotations

from dataclasses import dataclass, field

import plotly
import plotly.graph_objects as go
from jinja2 import Environment
from markupsafe import Markup, escape

from guiforge.report.samples import Sample

NONE_YET = "none yet"
PLOTLY_ASSET = f"plotly-{plotly.__version__}.min.js"


@dataclass(frozen=True)
class Link:
    """A table cell that links into the viewer."""

    text: str
    url: str

    def __html__(self) -> str:
        return f'<a href="{escape(self.url)}">{escape(self.text)}</a>'


@dataclass
class Section:
    title: str
    anchor: str
    figures: list[go.Figure] = field(default_factory=list)
    tables: list[tuple[str, list[dict]]] = field(default_factory=list)  # (caption, rows)
    note: str = ""  # shown above the figures; "none yet" when the section has no data
    samples: list[Sample] = field(default_factory=list)
    figure_links: list[str] = field(default_factory=list)  # the viewer's rows behind each figure
    flags: list[str] = field(default_factory=list)  # weak figures of this section, one line each

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
.rows { font-size: 12px; margin: 0 0 12px; } .flag { color: #b3261e; margin: 2px 0; }
header dl { display: flex; flex-wrap: wrap; gap: 2px 16px; margin: 6px 0 0; font-size: 12px; opacity: .85; }
header dt { font-weight: 600; } header dd { margin: 0; } header a { color: #cfe3ff; }
</style>
<script type="text/javascript" src="{{ plotly_src }}"></script>
</head><body>
<header><h1>guiforge report</h1><p>{{ subtitle }} · <a href="{{ viewer_url }}">open in guiforge view</a></p>
<dl id="provenance">{% for label, value in provenance %}<dt>{{ label }}</dt><dd>{{ value }}</dd>{% endfor %}</dl></header>
<nav>{% for s in sections %}<a href="#{{ s.anchor }}">{{ s.title }}</a>{% endfor %}</nav>
<main>
{% for s in sections %}<section id="{{ s.anchor }}"><h2>{{ s.title }}</h2>
{% if s.note %}<p class="{{ 'none' if s.note.startswith(none_yet) else 'note' }}">{{ s.note }}</p>{% endif %}
{% for f in s.flags %}<p class="flag">⚠ {{ f }}</p>{% endfor %}
{% for fig, link in s.figures %}<div class="plot">{{ fig }}</div>{% if link %}<p class="rows"><a href="{{ link }}">the rows behind this figure, in guiforge view →</a></p>{% endif %}{% endfor %}
{% for caption, rows in s.tables %}{% if rows %}<table><caption>{{ caption }}</caption>
<tr>{% for k in rows[0] %}<th>{{ k }}</th>{% endfor %}</tr>
{% for r in rows %}<tr>{% for v in r.values() %}<td>{{ fmt(v) }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}{% endfor %}
{% for x in s.samples %}<div class="sample"><div class="meta">
<span class="badge {{ 'accepted' if x.accepted else 'rejected' }}">{{ 'accepted' if x.accepted else 'rejected' }}</span>
<b>{{ x.domain }}</b> · {{ x.skill_id }}<p>{{ x.instruction }}</p>
<p class="note">{{ x.n_steps }} steps, score {{ fmt(x.score) }}<br>{{ x.verdict }}<br>
{% if x.url %}<a href="{{ x.url }}"><code>{{ x.trajectory_id }}</code> in the player →</a>{% else %}<code>{{ x.trajectory_id }}</code>{% endif %}</p></div><div class="frames">
{% for f in x.frames %}<figure><img src="{{ f.data_uri }}" width="{{ f.width }}" height="{{ f.height }}"
 alt="step {{ f.step_index }} of {{ x.trajectory_id }}"><figcaption>step {{ f.step_index }}: {{ f.action }}</figcaption></figure>
{% else %}<p class="note">no screenshots stored for this trajectory</p>{% endfor %}
</div></div>{% endfor %}
</section>
{% endfor %}</main>
<script>
// A click on a bar opens its rows in the viewer (each point's id is that link).
document.querySelectorAll('.js-plotly-plot').forEach(p => p.on && p.on('plotly_click', d => {
  const id = d.points && d.points[0] && d.points[0].id;
  if (id && /^https?:[/][/]/.test(id)) window.open(id, '_blank');
}));
</script></body></html>
"""


def _fmt(value) -> str:
    if isinstance(value, Link):
        return Markup(value.__html__())
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "–"
    return "–" if value is None else str(value)


def render(title: str, subtitle: str, sections: list[Section], provenance: list[tuple[str, str]] | None = None,
           viewer_url: str = "", plotly_src: str = PLOTLY_ASSET) -> str:
    env = Environment(autoescape=True)
    template = env.from_string(TEMPLATE)
    views = []
    for i, s in enumerate(sections):
        note = s.note or (NONE_YET if s.empty else "")
        links = list(s.figure_links) + [""] * (len(s.figures) - len(s.figure_links))
        figures = [(_figure_div(fig, f"plot-{i}-{j}"), links[j]) for j, fig in enumerate(s.figures)]
        views.append({"title": s.title, "anchor": s.anchor, "note": note, "figures": figures, "flags": s.flags,
                      "tables": s.tables, "samples": s.samples})
    return template.render(title=title, subtitle=subtitle, sections=views, none_yet=NONE_YET, fmt=_fmt,
                           provenance=provenance or [], viewer_url=viewer_url, plotly_src=plotly_src)


def _figure_div(fig: go.Figure, div_id: str) -> Markup:
    return Markup(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                              config={"displaylogo": False, "responsive": True}))
