"""The grounding scan: every interactive element a page renders, with the part of its box
that shows and whether a click at that part's centre would reach it.

The apps' own scan (``window.guiforge.elements`` in core.js) drops an element that fails its
hit test without saying so; grounding data must count those (a box that is covered by a
modal or cut off is a wrong label, and the share of such boxes is a figure of the data), so
this scan reports every candidate with a ``status``:

- ``ok``: at least 2x2 CSS pixels show, the element is visible, and
  ``document.elementFromPoint`` at the centre of what shows returns the element or one of
  its descendants (nothing else: a label around a checkbox does not count);
- ``offscreen``: scrolled out of the viewport or clipped away by a scrolling ancestor;
- ``hidden``: ``visibility: hidden`` or ``opacity: 0`` (on it or an ancestor);
- ``occluded``: something else is hit at the centre (a modal, a banner, a sticky bar);
  ``occluder`` names it.

Each element also carries what a referring expression can be written from: its visible
text and accessible name, role, input type and placeholder, the list row and the section
(or dialog) it sits in, and a same-origin link's route. The page's visible text comes back
too, so an expression can be proved absent from the screen (refusal rows).

Like the replay scripts, nothing is left on ``window``: each call sends the function. The
visible box is the apps' own (``guiforge.visibleBox`` in core.js), so the scan runs on the
apps' pages only.
"""

from __future__ import annotations

from typing import Any

from guiforge.envs.actions import to_grid

OK, OFFSCREEN, HIDDEN, OCCLUDED = "ok", "offscreen", "hidden", "occluded"
STATUSES = (OK, OFFSCREEN, HIDDEN, OCCLUDED)

GROUNDING_SCAN = r"""() => {
  const INTERACTIVE = "a[href], button, input:not([type=hidden]), textarea, select, summary, [role=button], " +
    "[role=link], [role=tab], [role=option], [role=checkbox], [role=menuitem], [role=switch], [contenteditable=true]";
  const squash = (s) => (s || "").replace(/\s+/g, " ").trim();
  const nameOf = (el) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return squash(aria);
    if (el.labels && el.labels.length) {
      const text = squash(el.labels[0].innerText);
      if (text) return text;
    }
    return squash(el.innerText || el.textContent) || el.getAttribute("placeholder") || el.getAttribute("title") ||
      el.getAttribute("alt") || "";
  };
  const describe = (el) => el ? `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}` +
    `${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""}` : null;
  // The part of the box that shows: the apps' own clip walk (core.js), one map per scan.
  const clips = new Map();
  const visibleBox = (el, fixed) => guiforge.visibleBox(el, fixed ? null : clips);
  const invisible = (el) => {
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.visibility === "hidden" || s.opacity === "0") return true;
    }
    return false;
  };
  const sectionOf = (el) => {
    const box = el.parentElement && el.parentElement.closest(
      "[role=dialog], [role=alertdialog], dialog, form, nav, header, aside, section, main, footer");
    if (!box) return null;
    const heading = box.querySelector("h1, h2, h3, h4, legend, [role=heading]");
    return { tag: box.tagName.toLowerCase(), role: box.getAttribute("role"),
      dialog: !!box.closest("[role=dialog], [role=alertdialog], dialog"),
      name: squash(box.getAttribute("aria-label") || (heading ? heading.innerText : "")).slice(0, 80) || null };
  };
  const rowOf = (el) => {
    const row = el.parentElement && el.parentElement.closest("li, tr, [role=row], [role=listitem], article");
    if (!row) return null;
    return squash(row.getAttribute("aria-label") || row.innerText).slice(0, 100) || null;
  };
  const out = [];
  for (const el of document.querySelectorAll(INTERACTIVE)) {
    const style = getComputedStyle(el);
    if (style.display === "none" || el.getClientRects().length === 0) continue;  // not rendered at all
    // whole CSS pixels: the centre tested here is the point the rows carry
    const [x0, y0, x1, y1] = visibleBox(el, style.position === "fixed").map(Math.round);
    let status = "ok", occluder = null;
    if (x1 - x0 < 2 || y1 - y0 < 2) status = "offscreen";
    else if (invisible(el)) status = "hidden";
    else {
      const hit = document.elementFromPoint((x0 + x1) / 2, (y0 + y1) / 2);
      if (!hit || !(hit === el || el.contains(hit))) { status = "occluded"; occluder = describe(hit); }
    }
    let route = null;
    if (el.tagName === "A" && el.href) {
      const u = new URL(el.href, location.href);
      if (u.origin === location.origin) route = u.pathname;
    }
    out.push({
      id: el.id || null, tag: el.tagName.toLowerCase(), role: el.getAttribute("role"),
      type: el.getAttribute("type"), name: nameOf(el).slice(0, 120),
      text: el.tagName === "SELECT" ? (el.selectedOptions[0] ? squash(el.selectedOptions[0].text) : null) :
        squash((el.innerText || "").split("\n").find((l) => /\p{L}.*\p{L}.*\p{L}/u.test(l)) || "").slice(0, 120) || null,
      placeholder: el.getAttribute("placeholder"), title: el.getAttribute("title"),
      disabled: !!el.disabled, checked: "checked" in el && (el.type === "checkbox" || el.type === "radio") ? el.checked : null,
      route, row: rowOf(el), section: sectionOf(el), status, occluder,
      box: [x0, y0, Math.max(x1 - x0, 0), Math.max(y1 - y0, 0)],
    });
  }
  return { elements: out, text: squash(document.body.innerText).slice(0, 40000), path: location.pathname,
           viewport: [innerWidth, innerHeight] };
}"""


def grounding_scan(env: Any, timeout_s: float = 10.0) -> dict[str, Any]:
    """The scan of ``env``'s page as it is now (a :class:`~guiforge.envs.web.page_env.PageEnv`
    after a reset or observe, so the scan and the last frame show the same screen), with
    every box in screenshot pixels (``[x, y, w, h]``, rounded) and its centre on the 0-999
    grid."""
    scan = env.js_sync(GROUNDING_SCAN, reply_timeout_s=timeout_s)
    width, height = env.frame_size()
    scale = env.scale
    for el in scan["elements"]:
        x, y, w, h = (v * scale for v in el["box"])
        el["box"] = [round(x), round(y), round(w), round(h)]
        el["grid"] = list(to_grid(x + w / 2, y + h / 2, width, height))
    scan["size"] = [width, height]
    return scan
