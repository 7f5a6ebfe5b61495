"""What a person reads on the desktop: text lines and their boxes, OCR'd from a frame.

LibreOffice under Xvfb reports no element geometry, so a reference that uses the mouse
finds the menu bar's "Data", the menu's "Sort...", a dialog's "OK" the way a person does:
by reading the screen. :class:`ScreenText` holds one frame and reads a region of it only
when asked (a step that needs a mouse target), with tesseract on a grey, upscaled crop
(menu text is ~9 px high: tesseract reads it reliably only at 2x or more). Results are
cached by the crop's hash, so the menu bar, which looks the same frame after frame, is
read once per look and screen size.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PIL import Image

from guiforge.envs.actions import to_grid

SCALE = 3  # upscale factor before OCR (menu text is ~9 px high)
RETRY_SCALES = (SCALE, 2.0, 4.0)
PAD = 20  # white margin (scaled px) around a button row: tesseract's line mode wants one
MIN_CONFIDENCE = 0.0  # garbage never matches a label; a faint real word must not be lost
_CACHE: OrderedDict[str, list[TextLine]] = OrderedDict()
_CACHE_SIZE = 256
_PUNCT = re.compile(r"[^\w+&]+")


@dataclass(frozen=True)
class TextLine:
    """One line of text as tesseract grouped it, with its box in screen pixels."""

    text: str
    box: tuple[int, int, int, int]  # x, y, width, height

    @property
    def centre(self) -> tuple[int, int]:
        x, y, w, h = self.box
        return x + w // 2, y + h // 2

    def as_element(self, width: int, height: int) -> dict[str, Any]:
        return {"label": self.text, "box": list(self.box), "grid": list(to_grid(*self.centre, width, height)),
                "source": "ocr"}


def normalise(text: str) -> str:
    """Words only, case-folded: "Sort..." and "sort" compare equal, "Use Excel 2007-365!" keeps
    its words."""
    return " ".join(_PUNCT.sub(" ", text.casefold().replace("&", " and ")).split())


def tesseract(png: bytes, psm: str = "11") -> str:
    """Tesseract's TSV of a PNG (``psm``: its page segmentation mode), one thread, bounded in time."""
    # one thread: eight helpers share two cores, and OpenMP's spinning makes it slower there
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(["tesseract", "stdin", "stdout", "--psm", psm, "tsv"], input=png,
                              capture_output=True, timeout=60, env=env, start_new_session=True)
    except FileNotFoundError:
        raise RuntimeError("tesseract is not installed (apt-get install tesseract-ocr)") from None
    return done.stdout.decode("utf-8", "replace")


def _lines(tsv: str, left: int, top: int, scale: float) -> list[TextLine]:
    """Words -> lines: tesseract's (block, paragraph, line) groups, split where a gap wider
    than two characters separates words (two menu titles, two buttons on one row)."""
    groups: dict[tuple[str, str, str], list[tuple[int, int, int, int, str]]] = {}
    for row in tsv.splitlines()[1:]:
        f = row.split("\t")
        if len(f) != 12 or not f[11].strip() or float(f[10]) < MIN_CONFIDENCE:
            continue
        x, y, w, h = (int(v) for v in f[6:10])
        groups.setdefault((f[2], f[3], f[4]), []).append((x, y, w, h, f[11].strip()))
    lines: list[TextLine] = []
    for words in groups.values():
        words.sort()
        run: list[tuple[int, int, int, int, str]] = []
        for word in words:
            prev = run[-1] if run else None
            if not normalise(word[4]):  # a frame's edge read as "|": a separator, not a word
                if run:
                    lines.append(_line(run, left, top, scale))
                run = []
                continue
            if prev is not None and word[0] - (prev[0] + prev[2]) > 0.6 * max(prev[3], word[3]):
                lines.append(_line(run, left, top, scale))
                run = []
            run.append(word)
        if run:
            lines.append(_line(run, left, top, scale))
    return lines


def _line(words: list[tuple[int, int, int, int, str]], left: int, top: int, scale: float) -> TextLine:
    x0 = min(w[0] for w in words)
    y0 = min(w[1] for w in words)
    x1 = max(w[0] + w[2] for w in words)
    y1 = max(w[1] + w[3] for w in words)
    # left/top: the crop's offset in the scaled image (a white margin is negative)
    box = (round((x0 + left) / scale), round((y0 + top) / scale), round((x1 - x0) / scale), round((y1 - y0) / scale))
    return TextLine(" ".join(w[4] for w in words), box)


class ScreenText:
    """One desktop frame, read on demand: ``lines(region)``, ``find(label, region)``."""

    def __init__(self, bgra: bytes, width: int, height: int):
        self.width, self.height = width, height
        self._bgra = bgra
        self._image: Image.Image | None = None
        self.reads = 0  # OCR runs this frame needed (cache misses)
        self.seen: list[TextLine] = []  # every line read so far (for thoughts: no new OCR)

    def image(self) -> Image.Image:
        if self._image is None:
            self._image = Image.frombytes("RGB", (self.width, self.height), self._bgra, "raw", "BGRX").convert("L")
        return self._image

    def lines(self, region: tuple[int, int, int, int] | None = None, row: bool = False,
              scale: float = SCALE) -> list[TextLine]:
        """Text lines inside ``region`` (x, y, width, height in pixels; the whole screen if None).
        ``row``: the region is one row of framed buttons (read as a single line: tesseract's
        sparse mode skips text inside frames)."""
        x, y, w, h = region or (0, 0, self.width, self.height)
        x, y = max(0, x), max(0, y)
        w, h = min(w, self.width - x), min(h, self.height - y)
        if w <= 0 or h <= 0:
            return []
        crop = self.image().crop((x, y, x + w, y + h))
        key = hashlib.sha1(crop.tobytes() + f"{w}x{h}:{row}:{scale}".encode()).hexdigest()
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return self._placed(cached, x, y)
        big = crop.resize((round(w * scale), round(h * scale)), Image.LANCZOS)
        pad = PAD if row else 0
        if pad:
            framed = Image.new("L", (big.width + 2 * pad, big.height + 2 * pad), 255)
            framed.paste(big, (pad, pad))
            big = framed
        out = io.BytesIO()
        big.save(out, format="PNG", compress_level=1)
        self.reads += 1
        found = _lines(tesseract(out.getvalue(), "7" if row else "11"), -pad, -pad, scale)  # relative to the crop
        _CACHE[key] = found
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return self._placed(found, x, y)

    def _placed(self, lines: list[TextLine], x: int, y: int) -> list[TextLine]:
        placed = [TextLine(line.text, (line.box[0] + x, line.box[1] + y, *line.box[2:])) for line in lines]
        self.seen.extend(placed)
        return placed

    def line_at(self, px: int, py: int, slack: int = 4) -> TextLine | None:
        """A line already read that holds the point (pixels), or None."""
        for line in self.seen:
            x, y, w, h = line.box
            if x - slack <= px <= x + w + slack and y - slack <= py <= y + h + slack:
                return line
        return None

    def text_at(self, px: int, py: int, slack: int = 4) -> str | None:
        line = self.line_at(px, py, slack)
        return line.text if line else None

    def find(self, label: str, region: tuple[int, int, int, int] | None = None,
             exclude: str | None = None, row: bool = False) -> TextLine | None:
        """The line that reads ``label`` (exactly, else one starting with it, else containing
        it as whole words, else most of it cut short), top-most first; ``exclude`` drops lines
        containing that word."""
        # tesseract's reading of small UI text shifts with the crop and the scale: a second
        # scale catches most of what the first one garbles
        for scale in RETRY_SCALES:
            hit = self._match(normalise(label), self.lines(region, row, scale), exclude)
            if hit is not None:
                return hit
        return None

    @staticmethod
    def _match(want: str, lines: list[TextLine], exclude: str | None) -> TextLine | None:
        lines = [ln for ln in lines if not (exclude and normalise(exclude) in normalise(ln.text))]
        lines.sort(key=lambda ln: (ln.box[1], ln.box[0]))
        for test in (lambda t: t == want, lambda t: t.startswith(want + " "),
                     lambda t: f" {want} " in f" {t} ",
                     # a label cut short by what stands next to it ("Find and R" + "Ctrl+H"):
                     # most of a several-word label, never one word of it
                     lambda t: " " in t and len(t) >= 0.6 * len(want) and want.startswith(t)):
            hit = next((ln for ln in lines if test(normalise(ln.text))), None)
            if hit is not None:
                return hit
        return None
