"""Page scripts for replayed sites, which have no ``window.guiforge``: the element scan, hit
test and focus probe the apps expose, written for any page; and the init script that makes a
replay deterministic (seeded ``Math.random`` and ``crypto``; the clock is frozen by
Playwright's ``clock.set_fixed_time``). Nothing is left on ``window``: each call sends its
function."""

from __future__ import annotations

_HELPERS = r"""
  const INTERACTIVE = "a[href], button, input:not([type=hidden]), textarea, select, summary, [role=button], " +
    "[role=link], [role=tab], [role=option], [role=checkbox], [role=menuitem], [role=switch], [contenteditable=true]";
  const labelOf = (el) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    if (el.labels && el.labels.length) {
      const text = el.labels[0].innerText.trim();
      if (text) return text.split("\n")[0];
    }
    const text = (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim();
    return text || el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("alt") ||
      el.getAttribute("name") || el.value || "";
  };
"""

SCAN = "() => {" + _HELPERS + r"""
  const vw = innerWidth, vh = innerHeight, out = [];
  for (const el of document.querySelectorAll(`${INTERACTIVE}, [role=alert], [role=status]`)) {
    const r = el.getBoundingClientRect();
    const x0 = Math.max(r.left, 0), y0 = Math.max(r.top, 0), x1 = Math.min(r.right, vw), y1 = Math.min(r.bottom, vh);
    if (x1 - x0 < 2 || y1 - y0 < 2) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.opacity === "0") continue;
    const hit = document.elementFromPoint((x0 + x1) / 2, (y0 + y1) / 2);
    if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === "LABEL" && hit.contains(el)))) continue;
    out.push({
      id: el.id || null, tag: el.tagName.toLowerCase(), role: el.getAttribute("role") || null,
      type: el.getAttribute("type") || null, label: labelOf(el).slice(0, 120),
      value: "value" in el && el.tagName !== "BUTTON" ? String(el.value).slice(0, 200) : null,
      checked: "checked" in el && (el.type === "checkbox" || el.type === "radio") ? el.checked : null,
      disabled: !!el.disabled, focused: el === document.activeElement,
      box: [Math.round(x0), Math.round(y0), Math.round(x1 - x0), Math.round(y1 - y0)],
    });
  }
  return {elements: out, path: location.href, focus: (FOCUS_FN)()};
}"""

HIT = "(x, y) => {" + _HELPERS + r"""
  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  const t = el.closest(INTERACTIVE + ", label");
  return t ? {interactive: true, label: labelOf(t).slice(0, 60), id: t.id || null} : {interactive: false};
}"""

FOCUS = "() => {" + _HELPERS + r"""
  const a = document.activeElement;
  const textTypes = ["text", "search", "email", "tel", "url", "password", "number", "date", "time", ""];
  const editable = !!a && a !== document.body && (a.isContentEditable || a.tagName === "TEXTAREA" || a.tagName === "SELECT" ||
    (a.tagName === "INPUT" && textTypes.includes((a.getAttribute("type") || "").toLowerCase())));
  return editable ? {editable, label: labelOf(a).slice(0, 80), id: a.id || null} : {editable: false, label: null};
}"""

SCAN = SCAN.replace("FOCUS_FN", FOCUS)

# mulberry32, seeded per document: the same page makes the same "random" choices every replay.
DETERMINISM = r"""(() => {
  let s = 0x2545f491;
  const next = () => { s = (s + 0x6d2b79f5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  Math.random = next;
  if (self.crypto) {
    const fill = (a) => { const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      for (let i = 0; i < b.length; i++) b[i] = (next() * 256) | 0; return a; };
    crypto.getRandomValues = fill;
    crypto.randomUUID = () => { const b = fill(new Uint8Array(16)); b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
      const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`; };
  }
})();"""
