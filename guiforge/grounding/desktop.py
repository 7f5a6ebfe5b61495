"""Desktop screens for grounding data: a task's LibreOffice document (Calc, Writer,
Impress) as the task opens it, then with menus dropped, each element's box from the
desktop grounding scan (guiforge.envs.desktop.grounding_scan: OCR boxes, read twice and
hit-tested with X's pointer query; Calc's cells also clicked).

A task gives up to ``screens`` screens: its start screen, then one per menu title opened
(seeded choice). Opening a title is that title's click test: a menu must drop under it,
else its box is marked ``occluded`` on the start screen and never emitted. The menu is
closed with Escape before the next, and the start screen's menu bar must come back (else
the task is reset). Screens are :class:`guiforge.grounding.screens.Screen` objects, so
rows, refusals and near misses come from guiforge.grounding.rows as for web and mobile.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from typing import Any

from guiforge.envs.base import EnvFailure, TaskSpec
from guiforge.envs.desktop.grounding_scan import (
    MENU_BAR_H,
    Region,
    candidates,
    check,
    click_cells,
    pointer_windows,
    regions,
    window_box,
    windows,
)
from guiforge.envs.desktop.ocr import ScreenText, normalise
from guiforge.envs.desktop.settle import settled_frame
from guiforge.envs.desktop.setup import DesktopSetup
from guiforge.envs.web.grounding_scan import OCCLUDED, OK
from guiforge.grounding.screens import Screen
from guiforge.lake.fingerprint import fingerprint
from guiforge.preparers.file_read import FileReadError, read_file_text
from guiforge.presentation import Presentation

WAIT_S = 5.0  # for a dropped menu to map or unmap (LibreOffice answers a click in ~0.1 s)
POLL_S = 0.05
ITEM_INDENT = 22  # px: a menu's icon column, left of its items' labels (tesseract drops lines with icons)

# What LibreOffice's menu titles hold: (functional description, what a user asks)
MENUS = {
    "file": ("the menu with the commands to open, save, export and print the {obj}", "open the File menu"),
    "edit": ("the menu with undo, copy, paste and find", "open the Edit menu"),
    "view": ("the menu that changes what the window shows (toolbars, zoom, sidebar)", "open the View menu"),
    "insert": ("the menu for adding images, charts, tables and comments", "open the Insert menu"),
    "format": ("the menu with text and cell formatting", "open the Format menu"),
    "styles": ("the menu with the paragraph and cell styles", "open the Styles menu"),
    "sheet": ("the menu for inserting and deleting rows, columns and sheets", "open the Sheet menu"),
    "data": ("the menu with sort, filter and other data tools", "open the Data menu"),
    "tools": ("the menu with spelling, macros and options", "open the Tools menu"),
    "window": ("the menu that lists the open windows", "open the Window menu"),
    "help": ("the menu with LibreOffice's help and version information", "open the Help menu"),
    "table": ("the menu for inserting and editing tables", "open the Table menu"),
    "form": ("the menu with form controls", "open the Form menu"),
    "slide": ("the menu for adding, deleting and arranging slides", "open the Slide menu"),
    "slide show": ("the menu that starts and sets up the slide show", "open the Slide Show menu"),
}
# Menu items whose action is plain from their label, as (functional clause, user imperative)
ITEMS = {
    "new": ("creates a new document", "start a new document"),
    "open": ("opens another file", "open a file"),
    "close": ("closes this {obj}", "close this {obj}"),
    "save": ("saves this {obj}", "save this {obj}"),
    "save as": ("saves this {obj} under another name or format", "save this {obj} under a new name"),
    "save a copy": ("saves a copy of this {obj}", "save a copy of this {obj}"),
    "export as pdf": ("exports this {obj} as a PDF", "export this {obj} as a PDF"),
    "print": ("prints this {obj}", "print this {obj}"),
    "print preview": ("shows how this {obj} will print", "preview the printout"),
    "properties": ("shows this {obj}'s properties", "see the {obj}'s properties"),
    "exit libreoffice": ("quits LibreOffice", "quit LibreOffice"),
    "cut": ("cuts the selection", "cut the selection"),
    "copy": ("copies the selection", "copy the selection"),
    "paste": ("pastes what was copied", "paste"),
    "select all": ("selects everything", "select everything"),
    "find and replace": ("opens find and replace", "find and replace some text"),
    "sort": ("sorts the selected rows", "sort these rows"),
    "sort ascending": ("sorts the selection smallest first", "sort ascending"),
    "sort descending": ("sorts the selection largest first", "sort descending"),
    "autofilter": ("adds filter buttons to the column headers", "turn on the filter"),
    "spelling": ("checks the spelling", "check the spelling"),
    "word count": ("counts the words", "count the words"),
    "chart": ("inserts a chart", "add a chart"),
    "image": ("inserts an image", "add a picture"),
    "comment": ("adds a comment", "add a comment"),
    "new slide": ("adds a slide", "add a new slide"),
    "delete slide": ("deletes this slide", "delete this slide"),
    "start from first slide": ("starts the slide show from the beginning", "start the slide show"),
}
APP_OBJECTS = {"calc": "spreadsheet", "writer": "document", "impress": "presentation"}
OFFICE_APPS = frozenset(APP_OBJECTS)  # the desktop apps with screens (terminal tasks have none)


def document_words(env, name: str | None) -> str | None:
    """The text of the document the task opens, normalised (a line read on screen must be
    in it); None when there is none or it cannot be read."""
    if not name or env.workspace is None:
        return None
    path = env.workspace.path / name
    try:
        return normalise(read_file_text(path.name, path.read_bytes()))
    except (OSError, FileReadError):
        return None


def _park(x) -> None:
    """The pointer where it raises no tooltip and covers nothing read: the document's
    lower right (an empty cell, the page's margin, the slide)."""
    x.xdotool("mousemove", str(int(x.width * 0.7)), str(int(x.height * 0.62)), timeout_s=10)


def _document(x) -> tuple[int, tuple[int, int, int, int]]:
    found = windows(x)
    if not found:
        raise EnvFailure("no LibreOffice document window is showing")
    return max(found.items(), key=lambda kv: kv[1][2] * kv[1][3])


def _phrase(el: dict[str, Any], app: str) -> None:
    """What menus and menu items do, from the tables above (other elements: the generic
    phrasing of guiforge.grounding.expressions)."""
    obj = APP_OBJECTS.get(app, "document")
    if el["role"] == "tab":
        return  # "the tab that shows Sales"
    said = (MENUS if el["role"] == "menu" else ITEMS).get(el["name"].casefold())
    if said is None or el["role"] not in ("menu", "menuitem"):
        el["does"] = None  # a cell's or a line's words say what it holds, not what it does
        return
    clause, user = said[0].format(obj=obj), said[1].format(obj=obj)
    el["does"] = (clause if el["role"] == "menu" else f"the menu item that {clause}", user)


def capture(env, app: str, task: TaskSpec, seed: str, index: int, cell_clicks: int, rng: random.Random,
            popup: tuple[int, tuple[int, int, int, int]] | None = None, via: str | None = None,
            cells: dict[tuple, str] | None = None, words: str | None = None) -> Screen:
    """The screen now, scanned (see the module); ``popup``: a dropped menu (X id, box);
    ``cells``: Calc's cells clicked on an earlier screen (text, box -> status); ``words``:
    the document's text, normalised (document_words)."""
    started = time.perf_counter()
    x = env.x
    _park(x)
    frame = settled_frame(x, env.office).frame
    text = ScreenText(frame, x.width, x.height)
    parts = regions(app, x.width, x.height)
    owners = {"document": _document(x)}
    if popup is not None:
        px, py, pw, ph = popup[1]
        parts.append(Region("menuitem", (px + ITEM_INDENT, py + 2, pw - ITEM_INDENT - 2, ph - 4), 3, "popup"))
        owners["popup"] = popup
    elements = candidates(text, parts)
    check(x, text, elements, owners, words)
    if app == "calc":
        box = (232, 80, x.width - 312, 18)  # Calc's input line, right of the Name Box and the fx buttons
        # with a menu dropped a click would close it: only cells clicked before count
        click_cells(x, env.office, elements, 0 if popup else cell_clicks, rng, box, cells)
    _park(x)
    for el in elements:
        _phrase(el, app)
        if el["status"] == OK:
            el["position"] = place(el, elements)
    image = x.png(frame)
    scan = {"path": f"/{app}", "text": " ".join(line.text for line in text.seen), "elements": elements,
            "popup": list(popup[1]) if popup else None}
    return Screen(screen_id="scr_" + fingerprint([task.task_id, index, via, seed, "desktop"], 14),
                  task_id=task.task_id, world_id=task.world_id, domain=task.domain, image=image, image_format="png",
                  width=x.width, height=x.height, scan=scan, look=Presentation(), via=via,
                  render_s=time.perf_counter() - started,
                  elements=[el for el in elements if el["status"] == OK])


def _nearest(el: dict[str, Any], elements: list[dict[str, Any]], side: str) -> dict[str, Any] | None:
    """The closest element of the same role and window on ``side`` (left, right: on its
    row; above, below: overlapping its column), whatever its status."""
    x, y, w, h = el["box"]
    cy = y + h / 2
    best, gap = None, None
    for o in elements:
        if o is el or o["role"] != el["role"] or o["window"] != el["window"]:
            continue
        ox, oy, ow, oh = o["box"]
        if side in ("left", "right"):
            if abs(oy + oh / 2 - cy) > 4:
                continue
            d = x - (ox + ow) if side == "left" else ox - (x + w)
        else:
            if ox >= x + w or x >= ox + ow:
                continue
            d = y - (oy + oh) if side == "above" else oy - (y + h)
        if d >= -2 and (gap is None or d < gap):
            best, gap = o, d
    return best


NEIGHBOURS = {"menu": ("left", "right"), "status": ("left", "right"), "menuitem": ("above", "below"),
              "paragraph": ("above", "below"), "gridcell": ("above",)}
OPPOSITE = {"left": "right", "right": "left", "above": "below", "below": "above"}
SAID = {"left": "right of", "right": "left of", "above": "below", "below": "above"}
ROLE_NAMES = {"menu": "menu", "status": "status bar field", "menuitem": "menu item", "paragraph": "text",
              "gridcell": "cell"}


def place(el: dict[str, Any], elements: list[dict[str, Any]]) -> str | None:
    """Where ``el`` is, by a neighbour that was read and checked: "the menu right of “Edit”",
    "the menu item below “Copy”", "the cell below “Region”"; the first menu or item when
    nothing precedes it. None when no neighbour places it for sure (the one beside it
    failed its checks: an ordinal counted over checked elements could be wrong)."""
    role = el["role"]
    noun = ROLE_NAMES.get(role)
    if noun is None:
        return None
    for side in NEIGHBOURS[role]:
        other = _nearest(el, elements, side)
        if other is None and side == "left" and role == "menu" and el["box"][0] < 12:
            return "the first menu in the menu bar"
        if other is None and side == "above" and role == "menuitem" and el["box"][1] < MENU_BAR_H + 12:
            return "the first item of the open menu"
        if other is None or other["status"] != OK or _nearest(other, elements, OPPOSITE[side]) is not el:
            continue
        x, y, w, h = el["box"]
        if role in ("gridcell", "paragraph") and y - (other["box"][1] + other["box"][3]) > 1.5 * h:
            continue  # rows apart: an empty one between
        return f"the {noun} {SAID[side]} “{_clip(other['text'])}”"
    return None


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def refusal_pools(screens: list[Screen]) -> dict[str, list[tuple[str, str, str]]]:
    """Per screen: (name, role, app) of the menu items a refusal may ask for: those of
    the menus this screen does not show dropped (never document text: a line OCR missed
    may still be on screen)."""
    items: dict[str, dict[str, tuple[str, str, str]]] = {}
    for s in screens:
        for e in s.elements:
            name = e.get("name") or ""
            if e["role"] == "menuitem" and 3 <= len(name) <= 40 and not re.search(r"\d", name):
                items.setdefault(s.via or "", {}).setdefault(name.casefold(), (name, "menu item", s.app))
    out = {}
    for s in screens:
        pool = {k: v for menu, named in items.items() if menu != (s.via or "") for k, v in named.items()}
        out[s.screen_id] = [pool[k] for k in sorted(pool)]
    return out


def _wait_window_at(x, point: tuple[int, int], present: bool, document: int) -> int | None:
    """Wait until the window at ``point`` is (``present``) or is not another window than
    the document; that window's id, or None when it never came or never went."""
    until = time.monotonic() + WAIT_S
    while True:
        hit = pointer_windows(x, [point])[0]
        if (hit not in (None, document)) == present:
            return hit if present else document
        if time.monotonic() > until:
            return None
        time.sleep(POLL_S)


def open_menu(env, title: dict[str, Any], document: int) -> tuple[int, tuple[int, int, int, int]] | None:
    """Click a menu title; the menu that drops under it (X id, box), or None when none does
    (the title fails its click test)."""
    x = env.x
    tx, ty, tw, th = title["box"]
    x.xdotool("mousemove", str(tx + tw // 2), str(ty + th // 2), "click", "1", timeout_s=10)
    window = _wait_window_at(x, (tx + 4, MENU_BAR_H + 8), True, document)
    box = window_box(x, window) if window is not None else None
    if box is None or not (box[0] - 12 <= tx <= box[0] + box[2]) or box[1] > MENU_BAR_H + 4:
        return None
    return window, box


def close_menu(env, popup: tuple[int, tuple[int, int, int, int]], document: int, menu_bar: bytes) -> bool:
    """Escape until the menu is gone and the menu bar reads as on the start screen."""
    x = env.x
    px, py, pw, ph = popup[1]
    for _ in range(2):  # the first Escape closes the menu, a second leaves the menu bar
        x.xdotool("key", "Escape", timeout_s=10)
        if _wait_window_at(x, (px + pw // 2, py + ph // 2), False, document) is None:
            continue
        if _menu_bar(x, settled_frame(x, env.office).frame) == menu_bar:
            return True
    return False


def _menu_bar(x, frame: bytes) -> bytes:
    return frame[: 4 * x.width * MENU_BAR_H]


def render_desktop_task(lease, spec: TaskSpec, n: int, seed: str, cell_clicks: int) -> list[Screen]:
    """Up to ``n`` screens of ``spec``'s document (see the module); none for a task that
    opens no LibreOffice (a terminal task)."""
    env = lease.env
    if not hasattr(env, "office"):
        raise TypeError(f"task {spec.task_id}: the {spec.domain} environment is not the desktop")
    app = DesktopSetup.from_task(spec.setup, spec.apps).app
    if app is None:
        return []
    rng = random.Random(fingerprint(["grounding-desktop", seed, spec.task_id]))
    lease.capture(False)  # frames are grabbed here, once each screen has settled
    lease.reset(spec)
    words = document_words(env, DesktopSetup.from_task(spec.setup, spec.apps).open)
    first = capture(env, app, spec, seed, 0, cell_clicks, rng, words=words)
    screens = [first]
    seen = {hashlib.sha256(first.image).hexdigest()}
    document = _document(env.x)[0]
    bar = _menu_bar(env.x, settled_frame(env.x, env.office).frame)
    cells = {(e["text"], tuple(e["box"])): e["status"] for e in first.scan["elements"]
             if e["role"] == "gridcell" and e["status"] in (OK, OCCLUDED)}
    titles = [e for e in first.elements if e["role"] == "menu"]
    rng.shuffle(titles)
    for i, title in enumerate(titles[: max(0, n - 1)], 1):
        popup = open_menu(env, title, document)
        if popup is None:
            title["status"] = OCCLUDED  # clicking it dropped no menu beneath it
            first.elements.remove(title)
            document = _restart(lease, spec)
            continue
        screen = capture(env, app, spec, seed, i, 0, rng, popup, title["name"], cells, words)
        if (key := hashlib.sha256(screen.image).hexdigest()) not in seen:
            seen.add(key)
            screens.append(screen)
        if not close_menu(env, popup, document, bar):
            document = _restart(lease, spec)
    return screens


def _restart(lease, spec: TaskSpec) -> int:
    """Reset to the task's start (a menu that would not close); the new document window."""
    lease.reset(spec)
    _park(lease.env.x)
    return _document(lease.env.x)[0]
