"""The desktop grounding scan: the text a person can point at on a LibreOffice screen (the
menu bar's titles, a dropped menu's items, Calc's cells and sheet tabs, a document's lines,
the status bar's fields), read with tesseract, every box checked before it is kept.

LibreOffice draws with its own X11 backend here (``SAL_USE_VCLPLUGIN=gen``), which has no
accessibility bridge (AT-SPI needs the gtk3 backend and a D-Bus session bus inside the
sandbox), so boxes come from OCR, and OCR boxes are only candidates. Each gets a
``status`` in the web scan's terms (guiforge.envs.web.grounding_scan):

- ``hidden``: the box's own crop, read again alone (another scale), does not say the same
  words (the box cuts the text, holds more than the line, or the first read was noise:
  grid lines read as "ee"); or the words are not what this screen can say: a menu's or a
  menu item's are not one of LibreOffice's own labels (its registry, ``*.xcd``), a status
  field's match none of the known fields, a document line's are not in the document;
- ``offscreen``: the box is not inside the window it belongs to;
- ``occluded``: X's own hit test (the pointer's window, ``xdotool getmouselocation``) at
  the box's centre or at one of its corners finds another window (a dropped menu, a
  tooltip, a dialog); for Calc's cells also: a click at the centre does not select the
  cell (the input line does not then read the cell's text);
- ``ok``: none of these.

Moving the pointer for the hit test changes nothing on screen (LibreOffice's menus do not
follow it) but can raise a tooltip later: the caller parks the pointer before each frame.
"""

from __future__ import annotations

import contextlib
import functools
import html
import io
import random
import re
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageOps, ImageStat

from guiforge.envs.actions import to_grid
from guiforge.envs.desktop.ocr import (
    ScreenText,
    TextLine,
    normalise,
    tesseract,  # one runner: threads, timeout
)
from guiforge.envs.desktop.office import ANY_DOCUMENT
from guiforge.envs.desktop.profile import LO_PROGRAM
from guiforge.envs.desktop.settle import STATUS_S, settled_frame
from guiforge.envs.web.grounding_scan import HIDDEN, OCCLUDED, OFFSCREEN, OK

MENU_BAR_H = 22  # px: the menu bar's text row, the same in every look and screen size
STATUS_H = 19  # px: the status bar at the bottom edge
REREAD_PAD = 3  # px around a box for its second reading
SHEET_GAP = 24  # px of white between the stacked crops of the second reading
# What reads as a menu item's shortcut ("Ctrl+Shift+S", "F2"): part of the item, not a target
_SHORTCUT = re.compile(r"^(ctrl|shift|alt|f\d{1,2}\b|del|delete|insert|backspace|home|end|page)", re.I)
_SHORTCUT_TAIL = re.compile(r"\s+(ctrl|shift|alt)\+\S*$", re.I)
_WORDLIKE = re.compile(r"[^\W\d_]{3,}|\d")  # a word of three letters or a number: not a glyph's piece
MENU_TITLES = frozenset({"file", "edit", "view", "insert", "format", "styles", "sheet", "data", "tools", "window",
                         "help", "table", "form", "slide", "slide show"})
# The status bar's fields whose words can be told apart from a misreading
STATUS_FIELDS = (re.compile(r"^(Page|Sheet|Slide) \d+ of \d+$"), re.compile(r"^\d+%$"),
                 re.compile(r"^\d[\d,]* words?, \d[\d,]* characters?$"),
                 re.compile(r"^(English|German|French|Spanish) \((USA|UK|Germany|France|Spain)\)$"))
REGISTRY = LO_PROGRAM.parent / "share" / "registry"
_LABEL = re.compile(r'<value xml:lang="en-US">([^<]*)</value>')
_NUMBER = re.compile(r"^[-+(]?[$€£]?\d[\d,]*(\.\d+)?%?\)?$")


@dataclass(frozen=True)
class Region:
    """A part of the screen read as one: the role its lines get, and the OCR scale that
    reads its text best (menu text is ~9 px high: 3x; cell and page text: 2x)."""

    role: str
    box: tuple[int, int, int, int]
    scale: float
    window: str = "document"  # document | popup: the window its boxes must be in


def regions(app: str, width: int, height: int) -> list[Region]:
    """Where LibreOffice's text is on a ``width`` x ``height`` screen for ``app``."""
    out = [Region("menu", (0, 0, width, MENU_BAR_H), 3),
           Region("status", (0, height - STATUS_H, width, STATUS_H), 3)]
    if app == "calc":
        # the grid right of the row headers, above the sheet tabs; the tabs' row
        out += [Region("gridcell", (36, 124, width - 100, height - 124 - 64), 2),
                Region("tab", (100, height - 44, width - 300, 24), 3)]
    elif app == "writer":
        out.append(Region("paragraph", (0, 100, width - 64, height - 100 - STATUS_H - 2), 2))
    elif app == "impress":
        # the slide; the slide pane's thumbnails and the sidebar's small controls stay out
        out.append(Region("paragraph", (160, 75, width - 490, height - 75 - STATUS_H - 30), 1.5))
    return out


def candidates(text: ScreenText, parts: list[Region]) -> list[dict[str, Any]]:
    """The lines OCR finds in ``parts``: one candidate element each (status still unset)."""
    out = []
    for part in parts:
        lines = text.lines(part.box, scale=part.scale)
        if part.role == "menuitem":
            lines = _menu_rows(lines)
        for line in lines:
            if not _WORDLIKE.search(line.text) or line.box[2] < 4 or line.box[3] < 5:
                continue  # a stray mark: an icon's edge read as "oT}", a glyph's piece as "ih"
            if part.role == "menu" and normalise(line.text) not in MENU_TITLES:
                continue  # two titles read as one, or a highlighted title misread
            out.append(_element(line, part, len(out), text.width, text.height))
    return out


@functools.cache
def labels() -> dict[str, list[str]]:
    """LibreOffice's own labels (its commands', menus', styles' and layouts' English names
    in the registry's ``*.xcd``): normalised words -> the labels as shown ("Save As...")."""
    found: dict[str, list[str]] = {}
    for path in sorted(REGISTRY.glob("*.xcd")):
        for raw in _LABEL.findall(path.read_text(encoding="utf-8", errors="replace")):
            shown = html.unescape(raw).replace("~", "").replace("%PRODUCTNAME", "LibreOffice").strip()
            if shown and len(shown) <= 60:
                found.setdefault(normalise(shown), []).append(shown)
    return found


def known_words(el: dict[str, Any], document: str | None) -> bool:
    """Whether the element's words are ones this screen can say (see the module); a menu's
    or menu item's text becomes LibreOffice's label (its case, its "...")."""
    words = normalise(el["text"])
    if el["role"] in ("menu", "menuitem"):
        shown = labels().get(normalise(el["name"]))
        if not shown:
            return False
        dots = el["text"].rstrip().endswith((".", "…"))
        el["text"] = next((t for t in shown if t.endswith("...") == dots), shown[0])
        el["name"] = el["text"].rstrip(".…").strip()
        return True
    if el["role"] == "status":
        return any(p.match(el["text"].strip()) for p in STATUS_FIELDS)
    if el["role"] == "paragraph":
        # whole words: a line cut short ("Revenue gre") or a piece of one ("gion") is not
        return document is not None and len(words) >= 3 and f" {words} " in f" {document} "
    return True  # Calc's cells: their click test reads them back from the input line


def _menu_rows(lines: list[TextLine]) -> list[TextLine]:
    """A dropped menu's lines, one per item: the pieces of a row (a grey label read in
    parts) joined, its shortcut ("Ctrl+S") left out."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.centre[1], ln.box[0])):
        if _SHORTCUT.match(normalise(line.text)):
            continue
        if rows and abs(rows[-1][0].centre[1] - line.centre[1]) <= 4:
            rows[-1].append(line)
        else:
            rows.append([line])
    out = []
    for row in rows:
        row.sort(key=lambda ln: ln.box[0])
        x0, y0 = min(ln.box[0] for ln in row), min(ln.box[1] for ln in row)
        x1 = max(ln.box[0] + ln.box[2] for ln in row)
        y1 = max(ln.box[1] + ln.box[3] for ln in row)
        out.append(TextLine(" ".join(ln.text for ln in row), (x0, y0, x1 - x0, y1 - y0)))
    return out


def _element(line: TextLine, part: Region, i: int, width: int, height: int) -> dict[str, Any]:
    shown = line.text.strip()
    # a menu item's "..." says a dialog follows, and its shortcut is no part of its name
    name = _SHORTCUT_TAIL.sub("", shown).rstrip(".…").strip() if part.role == "menuitem" else shown
    return {"id": f"{part.role}-{i}", "role": part.role, "tag": None, "text": shown, "name": name,
            "box": list(line.box), "grid": list(to_grid(*line.centre, width, height)), "window": part.window,
            "scale": part.scale, "status": None}


def reread(text: ScreenText, elements: list[dict[str, Any]]) -> list[bool]:
    """Whether each box alone, read again at another scale, says the same words as its
    first reading. One tesseract run for all: the crops stacked one under another on a
    white sheet, each read back from its own band (a run per box costs ~0.1 s each)."""
    image = text.image()
    crops = []
    for el in elements:
        x, y, w, h = el["box"]
        # another scale than the first reading's, one that suits the text's height
        scale = 2 if el["scale"] == 3 else 3 if h < 20 else 1
        box = (max(0, x - REREAD_PAD), max(0, y - REREAD_PAD), min(text.width, x + w + REREAD_PAD),
               min(text.height, y + h + REREAD_PAD))
        crop = ImageOps.autocontrast(image.crop(box))
        if ImageStat.Stat(crop).mean[0] < 128:
            crop = ImageOps.invert(crop)  # a highlighted title, light on dark: one threshold reads the sheet
        crops.append(crop.resize((round(crop.width * scale), round(crop.height * scale)), Image.LANCZOS))
    if not crops:
        return []
    sheet = Image.new("L", (max(c.width for c in crops) + 2 * SHEET_GAP, sum(c.height + SHEET_GAP for c in crops)
                            + SHEET_GAP), 255)
    bands, top = [], SHEET_GAP
    for crop in crops:
        sheet.paste(crop, (SHEET_GAP, top))
        bands.append((top, top + crop.height))
        top += crop.height + SHEET_GAP
    out = io.BytesIO()
    sheet.save(out, format="PNG", compress_level=1)
    said: list[list[tuple[int, str]]] = [[] for _ in crops]
    for row in tesseract(out.getvalue(), "6").splitlines()[1:]:
        f = row.split("\t")
        if len(f) != 12 or not f[11].strip():
            continue
        left, top, width, height = (int(v) for v in f[6:10])
        middle = top + height / 2
        for i, (y0, y1) in enumerate(bands):
            if y0 - SHEET_GAP / 2 <= middle < y1 + SHEET_GAP / 2:
                said[i].append((left, f[11]))
                break
    return [normalise(" ".join(w for _, w in sorted(words))) == normalise(el["text"])
            for words, el in zip(said, elements, strict=True)]


def windows(x) -> dict[int, tuple[int, int, int, int]]:
    """The documents' visible windows: id -> box."""
    done = x.xdotool("search", "--onlyvisible", "--name", ANY_DOCUMENT, "getwindowgeometry", "--shell", "%@",
                     timeout_s=10)
    return _geometries(done.stdout)


def window_box(x, window: int) -> tuple[int, int, int, int] | None:
    done = x.xdotool("getwindowgeometry", "--shell", str(window), timeout_s=10)
    return _geometries(done.stdout).get(window)


def _geometries(out: str) -> dict[int, tuple[int, int, int, int]]:
    found: dict[int, tuple[int, int, int, int]] = {}
    block: dict[str, str] = {}
    for line in [*out.splitlines(), "WINDOW=end"]:
        key, _, value = line.partition("=")
        if key == "WINDOW" and block:
            with contextlib.suppress(KeyError, ValueError):  # a window gone between the lines
                found[int(block["WINDOW"])] = tuple(int(block[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
            block = {}
        block[key] = value
    return found


def pointer_windows(x, points: list[tuple[int, int]]) -> list[int | None]:
    """The window X's pointer query finds at each point (one xdotool run for all)."""
    if not points:
        return []
    args: list[str] = []
    for px, py in points:
        args += ["mousemove", str(px), str(py), "getmouselocation", "--shell"]
    done = x.xdotool(*args, timeout_s=30)
    hits = [int(v) if v.isdigit() else None for v in
            (line[7:] for line in done.stdout.splitlines() if line.startswith("WINDOW="))]
    return hits + [None] * (len(points) - len(hits))


def _probes(box: list[int]) -> list[tuple[int, int]]:
    """The centre and the four corners (1 px inside) of a box."""
    x, y, w, h = box
    return [(x + w // 2, y + h // 2), (x + 1, y + 1), (x + w - 2, y + 1), (x + 1, y + h - 2), (x + w - 2, y + h - 2)]


def _inside(box: list[int], window: tuple[int, int, int, int]) -> bool:
    x, y, w, h = box
    wx, wy, ww, wh = window
    return wx <= x and wy <= y and x + w <= wx + ww and y + h <= wy + wh


def check(x, text: ScreenText, elements: list[dict[str, Any]], owners: dict[str, tuple[int, tuple]],
          document: str | None = None) -> None:
    """Set every element's ``status`` (see the module); ``owners``: window kind (document,
    popup) -> (its X id, its box); ``document``: the open document's words, normalised
    (None: unreadable, so no document line is confirmed)."""
    probed = []
    inside = [el for el in elements if el["window"] in owners and _inside(el["box"], owners[el["window"]][1])]
    same = dict(zip(map(id, inside), reread(text, inside), strict=True))
    for el in elements:
        if id(el) not in same:
            el["status"] = OFFSCREEN
        elif not same[id(el)] or not known_words(el, document):
            el["status"] = HIDDEN
        elif "popup" in owners and el["window"] != "popup" and _overlaps(el["box"], owners["popup"][1]):
            el["status"] = OCCLUDED  # under the dropped menu, which the frame shows
        else:
            probed.append(el)
    # the dropped menu's items first: pointer moves over the menu bar can close or swap it
    probed.sort(key=lambda el: el["window"] != "popup")
    hits = pointer_windows(x, [p for el in probed for p in _probes(el["box"])])
    for i, el in enumerate(probed):
        mine = hits[5 * i:5 * i + 5]
        el["status"] = OK if all(h == owners[el["window"]][0] for h in mine) else OCCLUDED


def _overlaps(box: list[int], other: tuple[int, int, int, int]) -> bool:
    x, y, w, h = box
    ox, oy, ow, oh = other
    return x < ox + ow and ox < x + w and y < oy + oh and oy < y + h


def same_value(shown: str, entered: str) -> bool:
    """A cell's text and what its input line says are the same value: the same words, or
    the same number however the cell formats it ("1,234.50" / "1234.5")."""
    a, b = normalise(shown), normalise(entered)
    if a == b:
        return True
    if _NUMBER.match(shown.strip()) and _NUMBER.match(entered.strip()):
        strip = re.compile(r"[^\d.\-]")
        try:
            return float(strip.sub("", shown)) == float(strip.sub("", entered))
        except ValueError:
            return False
    return False


def click_cells(x, office, elements: list[dict[str, Any]], n: int, rng: random.Random,
                input_line: tuple[int, int, int, int], known: dict[tuple, str] | None = None) -> int:
    """Calc's click test: click the centre of up to ``n`` of the ok cells (seeded choice) and
    read the input line; a cell whose text it does not then show is ``occluded`` (the click
    selected another cell: the text overflows into a neighbour). A cell ``known`` from an
    earlier screen of the same document (text, box -> status) keeps that status; an ok cell
    neither clicked nor known is left out (status ``None``). The clicks select cells and
    change nothing in the document. Returns the clicks made."""
    known = known or {}
    cells = [el for el in elements if el["role"] == "gridcell" and el["status"] == OK]
    fresh = []
    for el in cells:
        before = known.get((el["text"], tuple(el["box"])))
        if before is None:
            fresh.append(el)
        else:
            el["status"] = before
    rng.shuffle(fresh)
    for el in fresh[n:]:
        el["status"] = None
    for el in fresh[:n]:
        cx, cy = el["box"][0] + el["box"][2] // 2, el["box"][1] + el["box"][3] // 2
        x.xdotool("mousemove", str(cx), str(cy), "click", "1", timeout_s=10)
        frame = settled_frame(x, office, STATUS_S).frame
        shown = ScreenText(frame, x.width, x.height).lines(input_line, row=True, scale=3)
        if not same_value(el["text"], " ".join(line.text for line in shown)):
            el["status"] = OCCLUDED
    return min(n, len(fresh))
