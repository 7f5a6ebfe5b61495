"""A run's stage timeline as an SVG: one lane per stage, a bar per shard from its start to
its commit (a stage's shards side by side show how parallel it ran), the stage's wall time
at the end of its lane."""

from __future__ import annotations

from markupsafe import Markup, escape

from guiforge.report.stats import seconds

WIDTH, LANE, LABEL = 900, 22, 150


def timeline_svg(stages: list[dict], shards: list[dict]) -> Markup:
    spans = [(s["started_at"], s["committed_at"]) for s in shards if s["started_at"] and s["committed_at"]]
    if not spans:
        return Markup('<p class="note">no shard timings recorded</p>')
    t0, t1 = min(a for a, _ in spans), max(b for _, b in spans)
    scale = (WIDTH - LABEL - 80) / max(t1 - t0, 1e-6)
    order = [s["stage"] for s in stages]
    height = LANE * len(order) + 24
    parts = [f'<svg id="timeline" width="{WIDTH}" height="{height}" role="img" aria-label="stage timeline">']
    for i, stage in enumerate(order):
        y = i * LANE
        parts.append(f'<text x="0" y="{y + 15}" font-size="12">{escape(stage)}</text>')
        mine = [s for s in shards if s["stage"] == stage and s["started_at"] and s["committed_at"]]
        for k, s in enumerate(mine):
            x = LABEL + (s["started_at"] - t0) * scale
            w = max((s["committed_at"] - s["started_at"]) * scale, 1.5)
            lane_y = y + 3 + (k % 3) * 5  # overlapping shards step down a little
            parts.append(f'<rect x="{x:.1f}" y="{lane_y}" width="{w:.1f}" height="6" fill="#4C78A8" opacity=".8">'
                         f'<title>{escape(stage)} {escape(s["key"] or "")}: {s["seconds"]}s</title></rect>')
        wall = next((s["wall_s"] for s in stages if s["stage"] == stage), None)
        end = max((LABEL + (s["committed_at"] - t0) * scale for s in mine), default=LABEL)
        parts.append(f'<text x="{end + 6:.1f}" y="{y + 14}" font-size="11" fill="#59636e">{seconds(wall)}</text>')
    parts.append(f'<text x="{LABEL}" y="{height - 4}" font-size="11" fill="#59636e">0</text>'
                 f'<text x="{WIDTH - 80}" y="{height - 4}" font-size="11" fill="#59636e" text-anchor="end">'
                 f'{seconds(t1 - t0)} from the first shard to the last</text></svg>')
    return Markup("".join(parts))
