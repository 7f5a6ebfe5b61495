"""What a frame shows, in a few facts a thought can be written from later: the place (the
app's route, the document and the dialog in front), the labelled elements in view, the
focused field, a notice, the terminal's or tools' last output, and on the desktop the text
OCR already read (never a new OCR run). The harness stores them per step (``screen_json``)
so the offline relabeler can say what was on screen without the live observation.

Text taken from the screen goes through :func:`readable` first: a scan label, and above
all an OCR line, can be noise ("en.", "|=", a debug string), and a thought must never
quote it.
"""

from __future__ import annotations

import re
from typing import Any

from guiforge.envs.actions import Action, action_pixels
from guiforge.envs.base import Observation

MAX_ELEMENTS = 40  # labelled elements kept per frame, in scan order (top of the page first)
MAX_LABEL = 80
MAX_OUTPUT = 400  # characters of terminal or tool output kept (its end: the latest)

_DEBUG = re.compile(r"\b(?:id|label|None|null|undefined|NaN)\s*=|=\s*None\b|\bNone\b|\[object|[{}<>\\]|\bnan\b")
_WORD = re.compile(r"[^\W\d_]{3,}")
_VOWEL = re.compile(r"[aeiouyàâäáéèêëíîïóôöúùûüœæåø]", re.I)


def readable(text: str | None, ocr: bool = False) -> str | None:
    """``text`` with its whitespace folded when a person could read it off the screen and
    quote it, else None: no debug strings, mostly letters and digits, and (for OCR text)
    at least one real-looking word of three letters or more."""
    if not text:
        return None
    s = " ".join(str(text).split())
    if len(s) < 2 or _DEBUG.search(s):
        return None
    plain = sum(c.isalnum() or c.isspace() or c in ".,:;!?'’\"“”()-–—/&%€$£+@#*" for c in s)
    if plain / len(s) < 0.85:
        return None
    if ocr:
        words = _WORD.findall(s)
        if not words or not any(_VOWEL.search(w) for w in words):
            return None
        if sum(len(w) for w in words) < 0.4 * len(s.replace(" ", "")):
            return None  # mostly stray marks and single letters: "| i ll .. Ee"
    return s[:MAX_LABEL]


def _path(obs: Observation) -> list[str] | None:
    path = obs.debug.get("path")
    if isinstance(path, str):  # a URL: its route's parts
        path = re.sub(r"^[a-z]+://[^/]*", "", path).split("?")[0].split("#")[0]
        path = [p for p in path.split("/") if p and ":" not in p]
    return [str(p) for p in path] if path else None


def _dialog(obs: Observation) -> str | None:
    windows = obs.debug.get("windows") or []
    if len(windows) > 1 and "LibreOffice" not in (windows[-1].get("title") or ""):
        return readable(windows[-1].get("title"))
    return None


def screen_facts(obs: Observation, action: Action | None = None) -> dict[str, Any] | None:
    """The facts of ``obs`` (see the module), or None when it shows nothing to describe."""
    facts: dict[str, Any] = {}
    path = _path(obs)
    if path:
        facts["path"] = path
    elements = []
    for e in obs.debug.get("elements") or []:
        label = readable(e.get("label"))
        if label is None:
            continue
        item = {"label": label, "role": e.get("role") or e.get("tag")}
        if e.get("focused"):
            item["focused"] = True
        if e.get("value"):
            item["value"] = readable(e["value"]) or ""
        elements.append(item)
    if elements:
        facts["elements"] = elements[:MAX_ELEMENTS]
        facts["n_elements"] = len(elements)
    focus = obs.debug.get("focus") or {}
    if focus.get("editable") and readable(focus.get("label")):
        facts["focus"] = readable(focus["label"])
    if obs.debug.get("document"):
        facts["document"] = str(obs.debug["document"]).rsplit("/", 1)[-1]
        dialog = _dialog(obs)
        if dialog:
            facts["dialog"] = dialog
    screen = obs.debug.get("screen")
    if screen is not None:  # the desktop: only lines OCR already read for this frame
        seen = []
        for line in getattr(screen, "seen", []):
            text = readable(line.text, ocr=True)
            if text and text not in seen:
                seen.append(text)
        if seen:
            facts["texts"] = seen[:20]
        if action is not None and action.x is not None and obs.width:
            point = action_pixels(action, obs.width, obs.height)
            line = screen.line_at(point["x"], point["y"])
            pointed = readable(line.text, ocr=True) if line is not None else None
            if pointed:
                facts["pointed"] = pointed
    if "calls" in obs.debug:
        facts["tools"] = int(obs.debug["calls"] or 0)
    elif obs.text:  # the terminal's output (a tools frame's text is the task and its tool list)
        facts["output"] = obs.text[-MAX_OUTPUT:]
    if obs.feedback:
        facts["feedback"] = obs.feedback[:200]
    return facts or None
