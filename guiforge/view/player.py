"""The trajectory player: each step's screenshot with its action drawn over it (the click
point, the drag path, the scroll's direction, the typed text, the keys), the thought, the
feedback, the parse attempts, the model's raw reply, timings and tokens; beside it the
verifier's criteria and each judge's verdict, rationale and key frames. Arrow keys (or j/k,
Home/End) step through it; ``#step=N`` opens a step."""

from __future__ import annotations

import json

from guiforge.view.pages import add_template, template

PLAYER = """{% extends "layout" %}{% block head %}<style>
.player { display: flex; gap: 16px; align-items: flex-start; flex-wrap: wrap; }
.stage { flex: 1 1 640px; max-width: 980px; } .frame { position: relative; display: inline-block; max-width: 100%; }
.frame img { display: block; max-width: 100%; max-height: 78vh; border: 1px solid #c9ced4; }
.frame svg { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
.side { flex: 1 1 360px; max-width: 560px; } pre { white-space: pre-wrap; word-break: break-word; background: #f3f4f6;
 padding: 6px; font-size: 12px; max-height: 240px; overflow: auto; } .steps a { display: inline-block; min-width: 22px;
 text-align: center; margin: 1px; padding: 1px 3px; border: 1px solid #d3d7dc; border-radius: 3px; text-decoration: none; }
.steps a.current { background: #1f2933; color: #fff; } .steps a.err { border-color: #b3261e; }
.kf img { width: 150px; border: 1px solid #c9ced4; margin: 2px; } dt { font-weight: 600; } dd { margin: 0 0 6px 0; }
</style>{% endblock %}{% block body %}
<section><h2>{{ t.domain }} · {{ t.skill_id }} · sample {{ t.sample_index }}
<span class="{{ 'ok' if t.success else 'bad' }}">{{ 'success' if t.success else ('failure' if t.success == false else 'no outcome') }}</span>
score {{ t.score if t.score is not none else '–' }}</h2><p>{{ t.instruction }}</p>
<p class="note">{{ t.trajectory_id }} · task <a href="{{ rows_url('trajectories', run=t.run_id, task=t.task_id) }}">{{ t.task_id }}</a>
 · {{ t.n_steps }} steps · {{ seconds(t.wall_s) }} · teacher {{ t.teacher_model }}
 · tokens {{ cost.prompt_tokens if cost else t.input_tokens }} in / {{ cost.completion_tokens if cost else t.output_tokens }} out
 ({{ cost.cached_tokens if cost else 0 }} cached) · {{ money(cost.cost_usd) if cost else 'unpriced' }}
{% if t.error %}<br><span class="bad">{{ t.error }}</span>{% endif %}
<br>samples of this task: {% for s in siblings %}<a href="/trajectory/{{ t.run_id }}/{{ s.trajectory_id }}">#{{ s.sample_index }}
{{ '✓' if s.success else '✗' }}</a> {% endfor %}</p></section>
<div class="player"><section class="stage"><div class="steps" id="step-links"></div>
<p><button id="prev">← previous</button> <button id="next">next →</button>
<span id="position" class="note"></span> <span class="note">keys: ← → (or k j), Home, End</span></p>
<div class="frame" id="frame"><img id="shot" alt="screenshot"><svg id="overlay" preserveAspectRatio="none"></svg></div>
<p id="noshot" class="note" hidden>no screenshot for this step (a tool step)</p></section>
<section class="side"><h2 id="action-title"></h2><dl>
<dt>thought</dt><dd id="thought"></dd><dt>feedback</dt><dd id="feedback"></dd><dt>error</dt><dd id="error"></dd>
<dt>timing and tokens</dt><dd id="timing"></dd><dt>target</dt><dd id="target"></dd>
<dt>parse attempts</dt><dd id="attempts"></dd><dt>raw reply</dt><dd><pre id="raw"></pre></dd></dl></section></div>
<div class="cols"><section id="verifier"><h2>Verifier</h2>{% if criteria %}<p>success {{ criteria.success }} · score {{ criteria.score }}</p>
<table><tr><th>criterion</th><th>met</th><th>what it checks</th></tr>{% for cid, met in (criteria.criteria or {}).items() %}
<tr><td>{{ cid }}</td><td class="{{ 'ok' if met else 'bad' }}">{{ met }}</td><td>{{ rubric_text.get(cid, '') }}</td></tr>{% endfor %}</table>
{% for e in criteria.errors or [] %}<p class="bad">{{ e }}</p>{% endfor %}{% else %}<p class="note">no verifier result</p>{% endif %}</section>
<section id="judges"><h2>Judges</h2>{% for j in judgments %}<div><b>{{ j.judge }}</b> ({{ j.judge_model }}):
<span class="{{ 'ok' if j.success else 'bad' }}">{{ j.success }}</span> · verifier {{ j.verifier_success }} ·
{{ 'agrees' if j.agrees else 'disagrees' }} · {{ 'accepted' if j.accepted else 'not accepted' }} ({{ j.accept_reason }})
<p>{{ j.rationale }}</p>{% if j.flags %}<p class="note">flags: {{ j.flags|join(', ') }}</p>{% endif %}
<div class="kf">{% for i in j.evidence_steps or [] %}<a href="#step={{ i }}" class="keyframe" data-step="{{ i }}">
{% set sha = (j.evidence_images or [])[loop.index0] if (j.evidence_images or [])|length > loop.index0 else None %}
{% if sha %}<img src="/image/{{ sha }}" alt="key frame {{ i }}">{% endif %}<br>step {{ i }}</a>{% endfor %}</div></div>
{% else %}<p class="note">not judged</p>{% endfor %}</section></div>
<script type="application/json" id="steps-data">{{ steps_json|safe }}</script>
<script>{{ js|safe }}</script>
{% endblock %}"""

# Draws with the same colour on every frame (the tests look for it in screenshots).
JS = r"""
const STEPS = JSON.parse(document.getElementById('steps-data').textContent);
const MARK = '#ff00e6';
let current = 0;
const $ = id => document.getElementById(id);
const NS = 'http://www.w3.org/2000/svg';
function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function pixels(step) {
  const w = step.width || 1000, h = step.height || 1000, a = step.action || {}, p = step.pixels || {};
  const conv = (g, size) => g === null || g === undefined ? null : Math.round(g * (size - 1) / 999);
  return {w, h, x: p.x ?? conv(a.x, w), y: p.y ?? conv(a.y, h), x2: p.x2 ?? conv(a.x2, w), y2: p.y2 ?? conv(a.y2, h)};
}
function label(svg, w, x, y, text, size) {
  const pad = size * 0.4, width = Math.min(w * 0.9, text.length * size * 0.62 + 2 * pad);
  const lx = Math.max(2, Math.min(x, w - width - 2)), ly = Math.max(2, y);
  svg.appendChild(el('rect', {x: lx, y: ly, width: width, height: size * 1.6, rx: size * 0.3,
    fill: 'rgba(255,255,255,0.92)', stroke: MARK, 'stroke-width': size * 0.18, class: 'mark'}));
  svg.appendChild(el('text', {x: lx + pad, y: ly + size * 1.15, 'font-size': size, fill: '#7a0069',
    'font-family': 'monospace', class: 'mark-text'}, text));
}
function draw(step) {
  const svg = $('overlay');
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const a = step.action || {}, q = pixels(step), u = Math.max(q.w, q.h) / 100;
  svg.setAttribute('viewBox', `0 0 ${q.w} ${q.h}`);
  svg.dataset.action = a.type || '';
  const line = {stroke: MARK, 'stroke-width': u * 0.6, fill: 'none', class: 'mark'};
  if (q.x !== null && q.y !== null) {
    if (q.x2 !== null && q.y2 !== null) {  // drag or swipe: the path, its ends and an arrow head
      svg.appendChild(el('line', {x1: q.x, y1: q.y, x2: q.x2, y2: q.y2, ...line}));
      const ang = Math.atan2(q.y2 - q.y, q.x2 - q.x), hl = u * 3;
      svg.appendChild(el('polygon', {points: `${q.x2},${q.y2} ${q.x2 - hl * Math.cos(ang - 0.4)},${q.y2 - hl * Math.sin(ang - 0.4)} ${q.x2 - hl * Math.cos(ang + 0.4)},${q.y2 - hl * Math.sin(ang + 0.4)}`, fill: MARK, class: 'mark'}));
    }
    svg.appendChild(el('circle', {cx: q.x, cy: q.y, r: u * 2.2, ...line}));
    svg.appendChild(el('circle', {cx: q.x, cy: q.y, r: u * 0.7, fill: MARK, class: 'mark point'}));
    if (a.type === 'scroll' && a.direction) {
      const d = {up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0]}[a.direction] || [0, 1];
      svg.appendChild(el('line', {x1: q.x, y1: q.y, x2: q.x + d[0] * u * 8, y2: q.y + d[1] * u * 8, ...line}));
    }
  }
  let text = '';
  if (a.type === 'type') text = `⌨ "${a.text || ''}"`;
  else if (a.keys && a.keys.length) text = `⌨ ${a.keys.join('+')}`;
  else if (q.x === null || a.text || a.app) text = [a.type || 'no action', a.app, a.text ? `"${a.text}"` : '',
    a.direction, a.status, a.answer ? ': ' + a.answer : ''].filter(Boolean).join(' ');
  if (text) {
    const size = Math.max(18, q.h / 24);
    label(svg, q.w, q.x !== null ? q.x + u * 3 : u, q.y !== null ? q.y + u * 3 : u, text.slice(0, 80), size);
  }
}
function show(i) {
  current = Math.max(0, Math.min(STEPS.length - 1, i));
  const s = STEPS[current];
  if (!s) return;
  const img = $('shot');
  if (s.image) { img.hidden = false; $('noshot').hidden = true; img.src = '/image/' + s.image; }
  else { img.hidden = true; $('noshot').hidden = false; }
  draw(s);
  $('position').textContent = `step ${s.index} of ${STEPS.length}`;
  $('action-title').textContent = s.action ? JSON.stringify(Object.fromEntries(Object.entries(s.action).filter(([, v]) => v !== null))) : 'no parsed action';
  $('thought').textContent = s.thought || '–';
  $('feedback').textContent = s.feedback || '–';
  $('error').textContent = s.error || '–';
  $('timing').textContent = `${(s.latency_s ?? 0).toFixed(2)} s · ${s.input_tokens ?? 0} prompt + ${s.output_tokens ?? 0} completion tokens · prompt ${s.prompt_hash || ''} (${s.prompt_messages ?? '?'} messages)`;
  $('target').textContent = s.target ? `${s.target.tag || ''} ${s.target.role || ''} "${s.target.label || ''}"` : '–';
  $('attempts').textContent = (s.attempts || []).map((t, k) => `#${k + 1}${t.cached ? ' (cached)' : ''}: ${t.error ? 'refused: ' + t.error : 'used'}`).join(' · ') || '–';
  $('raw').textContent = s.raw || '';
  document.querySelectorAll('#step-links a').forEach((a, k) => a.classList.toggle('current', k === current));
  history.replaceState(null, '', '#step=' + s.index);
}
STEPS.forEach((s, k) => {
  const a = document.createElement('a');
  a.href = '#step=' + s.index; a.textContent = s.index;
  if (s.error) a.classList.add('err');
  a.addEventListener('click', e => { e.preventDefault(); show(k); });
  $('step-links').appendChild(a);
});
$('prev').addEventListener('click', () => show(current - 1));
$('next').addEventListener('click', () => show(current + 1));
document.addEventListener('keydown', e => {
  if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
  if (e.key === 'ArrowRight' || e.key === 'j') show(current + 1);
  else if (e.key === 'ArrowLeft' || e.key === 'k') show(current - 1);
  else if (e.key === 'Home') show(0);
  else if (e.key === 'End') show(STEPS.length - 1);
  else return;
  e.preventDefault();
});
document.querySelectorAll('.keyframe').forEach(a => a.addEventListener('click', e => {
  e.preventDefault(); show(STEPS.findIndex(s => s.index === Number(a.dataset.step)));
}));
const m = location.hash.match(/step=(\d+)/);
show(m ? Math.max(0, STEPS.findIndex(s => s.index === Number(m[1]))) : 0);
"""

add_template("player", PLAYER)


def _json(text):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def step_view(s: dict) -> dict:
    pixels = _json(s.get("action_pixels_json")) or {}
    return {"index": s["step_index"], "image": s["image_sha256"],
            "width": pixels.get("width") or s.get("image_width"), "height": pixels.get("height") or s.get("image_height"),
            "action": s["action"], "pixels": pixels, "thought": s["thought"], "feedback": s["feedback"],
            "error": s["error"], "raw": s["raw_output"], "attempts": _json(s.get("attempts_json")) or [],
            "latency_s": s["latency_s"], "input_tokens": s["input_tokens"], "output_tokens": s["output_tokens"],
            "prompt_hash": s["prompt_hash"], "prompt_messages": s["prompt_messages"],
            "target": _json(s.get("target_json"))}


def _rubric_text(rubric) -> dict[str, str]:
    """criterion id -> what it checks, from the task's rubric (whatever shape it has)."""
    items = rubric.get("criteria", []) if isinstance(rubric, dict) else rubric if isinstance(rubric, list) else []
    return {str(c.get("id")): str(c.get("description") or c.get("check") or "") for c in items if isinstance(c, dict)}


def render_player(lake: str, data: dict, header: list) -> str:
    steps = [step_view(s) for s in data["steps"]]
    # "</" inside the JSON would end the script element early.
    steps_json = json.dumps(steps, ensure_ascii=False, default=str).replace("</", "<\\/")
    return template("player").render(
        title=data["trajectory"]["trajectory_id"], lake=lake, header=header, t=data["trajectory"],
        siblings=data["siblings"], judgments=data["judgments"], criteria=data["criteria"], cost=data["cost"],
        rubric_text=_rubric_text(data["rubric"]), steps_json=steps_json, js=JS)
