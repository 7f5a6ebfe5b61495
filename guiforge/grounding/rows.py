"""Grounding rows from rendered screens: one row per referring expression of each
hit-tested element, near misses marked with the element they could be mistaken for, and
refusal rows naming elements of other screens that this one does not show.

Only elements whose scan status is ``ok`` (visible, unoccluded, hit at their centre) are
emitted; the others are counted on the screen's row (``grounding_screens``).
"""

from __future__ import annotations

import random
import re
from typing import Any

from guiforge.envs.actions import to_grid
from guiforge.envs.web.grounding_scan import HIDDEN, OCCLUDED, OFFSCREEN, OK
from guiforge.grounding.expressions import centre, expressions, refusal_text, role_word, similar
from guiforge.grounding.screens import Screen
from guiforge.lake.fingerprint import fingerprint

SMALL_SHARE = 0.001  # a target under 0.1% of the screen's area is small (ScreenSpot-Pro's are ~0.07%)
DENSE = 40  # hit-testable elements from which a screen is dense


def refusal_pool(screens: list[Screen]) -> list[tuple[str, str, str]]:
    """(name, role, app) of every named element on ``screens``: what a refusal may ask for."""
    seen: dict[str, tuple[str, str, str]] = {}
    for s in screens:
        for e in s.elements:
            name = (e.get("text") or e.get("name") or "").strip()
            # no digits: "Cart, 0 items" would name the cart of a screen showing "Cart, 1 item"
            if 3 <= len(name) <= 40 and not re.search(r"\d", name) and not (e.get("id") or "").startswith("gf-"):
                seen.setdefault(name.casefold(), (name, role_word(e), s.app))
    return [seen[k] for k in sorted(seen)]


def absent(name: str, screen: Screen) -> bool:
    """``name`` is nowhere on ``screen``: not in its visible text, and no element's name or
    text holds it, is held by it or could be mistaken for it ("Books" / "Ridge Books")."""
    want = name.casefold()
    if want in (screen.scan.get("text") or "").casefold():
        return False
    for e in screen.scan["elements"]:
        for said in (e.get("name"), e.get("text")):
            if said and (want in said.casefold() or said.casefold() in want or similar(said, name)):
                return False
    return True


def counts(screen: Screen) -> dict[str, int]:
    statuses = [e["status"] for e in screen.scan["elements"]]
    return {"n_candidates": len(statuses), "n_ok": statuses.count(OK), "n_occluded": statuses.count(OCCLUDED),
            "n_hidden": statuses.count(HIDDEN), "n_offscreen": statuses.count(OFFSCREEN)}


def screen_rows(screen: Screen, pool: list[tuple[str, str, str]], refusals: int, touch: bool,
                seed: str) -> list[dict[str, Any]]:
    """The grounding rows of one screen (see the module)."""
    rng = random.Random(fingerprint(["grounding-rows", seed, screen.screen_id]))
    size = (screen.width, screen.height)
    ok = screen.elements
    base = {"screen_id": screen.screen_id, "task_id": screen.task_id, "world_id": screen.world_id,
            "domain": screen.domain, "app": screen.app, "route": screen.route, "theme": screen.theme,
            "viewport": list(screen.look.viewport) if screen.look.viewport else None,
            "distractors": screen.distractor_kinds, "image_width": screen.width, "image_height": screen.height,
            "dense_screen": len(ok) >= DENSE, "n_elements": len(ok)}
    rows = []
    for el in ok:
        name = (el.get("name") or "").strip()
        x, y, w, h = el["box"]
        cx, cy = centre(el)
        near = _nearest_similar(el, ok)
        for ex in expressions(el, ok, size, screen.app, touch, rng.randrange(1 << 16)):
            rows.append({**base, "instruction": ex.text, "expression_kind": ex.kind,
                         "data_type": "text" if el.get("text") else "icon", "refusal": False,
                         "near_miss": ex.near_miss or near is not None,
                         "small_target": w * h < SMALL_SHARE * screen.width * screen.height,
                         "element_role": role_word(el), "element_name": name or None, "element_id": el.get("id"),
                         "bbox": [x, y, w, h], "point_x": int(cx), "point_y": int(cy),
                         "grid_x": to_grid(cx, cy, *size)[0], "grid_y": to_grid(cx, cy, *size)[1],
                         "distractor_bbox": near["box"] if near else None,
                         "distractor_name": (near.get("name") or None) if near else None})
    candidates = [p for p in pool if p[2] == screen.app] or pool
    rng.shuffle(candidates := list(candidates))
    made = 0
    for name, role, app in candidates:
        if made >= refusals:
            break
        if not absent(name, screen):
            continue
        # the desktop's boxes are OCR lines: its toolbar icons are never named, so a request
        # ("save this") could be one an icon serves; its refusals name the element
        ex = refusal_text(name, role, app, touch, rng.randrange(1 << 16), named_only=screen.domain == "desktop")
        rows.append({**base, "instruction": ex.text, "expression_kind": "refusal", "data_type": "none",
                     "refusal": True, "near_miss": False, "small_target": False, "element_role": role,
                     "element_name": name, "element_id": None, "bbox": None, "point_x": None, "point_y": None,
                     "grid_x": None, "grid_y": None, "distractor_bbox": None, "distractor_name": None})
        made += 1
    for r in rows:
        r["grounding_id"] = "gnd_" + fingerprint([screen.screen_id, r["expression_kind"], r["instruction"],
                                                  r["bbox"]], 16)
    return rows


def _nearest_similar(el: dict[str, Any], ok: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The closest other element that shows the same text, or whose name is the same or one
    a reader could mistake for it ("Reply" / "Reply all"), or None."""
    name = (el.get("name") or "").strip()
    text = (el.get("text") or "").strip().casefold()
    cx, cy = centre(el)
    close = [o for o in ok if o is not el and (
        (text and (o.get("text") or "").strip().casefold() == text) or
        (name and o.get("name") and (o["name"].casefold() == name.casefold() or similar(o["name"], name))))]
    if not close:
        return None
    return min(close, key=lambda o: (centre(o)[0] - cx) ** 2 + (centre(o)[1] - cy) ** 2)
