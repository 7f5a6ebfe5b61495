"""Reference steps on the desktop with the mouse: menus and dialog controls found by reading
the screen, as a person works LibreOffice.

The desktop has no element tree, so targets come from what is on screen: the menu bar's
titles and a menu's items are OCR'd (:class:`guiforge.envs.desktop.ocr.ScreenText`, only
for a step that needs a target), dialogs are the windows the observation lists. Typing
stays typing. What tesseract cannot read reliably is done from the keyboard, as people
also do: a button labelled only "OK" inside its frame (Enter presses the default button),
Calc's Name Box (Ctrl+Shift+F5: its "A1" in a frame does not OCR), the Sort dialog's
column list (it has the keyboard when the dialog opens). Calc's sheet tabs are read in the
row above its status bar and clicked.

Each ``_mouse_<verb>`` yields (action, thought) pairs like DesktopSteps' keyboard recipes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from guiforge.envs.actions import Action, to_grid
from guiforge.teacher.grounding import GroundingError

MENU_BAR_H = 24  # px: LibreOffice's menu bar, the same in every look and screen size
MENU_W = 260  # px: a menu's items (its shortcuts column may be cut: the labels are what count)
# px: the labels alone; over an empty white sheet a wide crop is mostly white, and tesseract's
# threshold then swallows the grey menu with its text
MENU_LABELS_W = 150
# px: item labels start this far right of their menu's title; the icon column to their left
# makes tesseract drop whole lines, so it stays out of the crop
ITEM_INDENT = 22
MENU_H = 560  # px: down to the last item of the longest menu a recipe uses
PAINT_TRIES = 4
BUTTON_ROW_H = 56  # px: a message dialog's button row, from its bottom edge
WINDOW_TRIES = 5  # one-second waits for a dialog to come up before typing into it
SHEET_TABS = (46, 24)  # px: Calc's sheet tabs: this far above the bottom edge (over the status bar), this tall

Steps = Iterator[tuple[Action, str]]


class MouseError(GroundingError):
    """What a mouse step needs is not on screen."""


def _screen(obs) -> Any:
    screen = obs.debug.get("screen")
    if screen is None:
        raise MouseError("the desktop observation has no screen to read (LibreOffice is not running)")
    return screen


def dialog(obs, title: str | None = None) -> dict[str, Any] | None:
    """The topmost window other than the documents (a dialog), or the one with ``title``."""
    windows = obs.debug.get("windows") or []
    document = "LibreOffice"
    for window in reversed(windows):
        name = window.get("title") or ""
        if title is not None and title.casefold() in name.casefold():
            return window
        if title is None and document not in name:
            return window
    return None


def _is_dialog(name: str, title: str) -> bool:
    """Is the window called ``name`` the dialog ``title``? Documents' windows name their app
    ("report.odt - LibreOffice Writer"), dialogs do not."""
    name, title = name.casefold().strip(), title.casefold()
    return name == title or (title in name and "libreoffice" not in name)


class DesktopMouse:
    """Mouse recipes for the reference program (a mixin: ``self.obs`` is the latest frame)."""

    def _click_at(self, line, what: str, thought: str) -> Steps:
        screen = _screen(self.obs)
        gx, gy = to_grid(*line.centre, screen.width, screen.height)
        yield Action(type="click", x=gx, y=gy), thought

    def _menu(self, menu: str, item: str, why: str) -> Steps:
        """Open ``menu`` in the menu bar, then click its ``item`` ("Sort...")."""
        for _ in range(PAINT_TRIES):  # a window just opened may not have drawn its menu bar yet
            screen = _screen(self.obs)
            title = screen.find(menu, (0, 0, screen.width, MENU_BAR_H))
            if title is not None:
                break
            yield Action(type="wait", amount=1), "LibreOffice is still drawing its window; I'll wait for the menu bar.", True
        else:
            raise MouseError(f"no {menu!r} in the menu bar")
        yield from self._click_at(title, menu, f"{why} It is in the {menu} menu, so I'll click “{menu}” in the menu bar.")
        found = self._menu_item(title, item)
        if found is None:
            # a window a dialog just gave back takes its first click as a focus click
            yield from self._click_at(title, menu, f"The {menu} menu did not open; I'll click “{menu}” again.")
            found = self._menu_item(title, item)
        if found is None:
            raise MouseError(f"the {menu} menu has no {item!r}")
        yield from self._click_at(found, item, f"The {menu} menu is open; I'll click “{item}”.")

    def _menu_item(self, title, item: str):
        screen = _screen(self.obs)
        height = min(MENU_H, screen.height - MENU_BAR_H)
        # tesseract's reading shifts with the crop: the labels alone first, then with the icons
        for x, width in ((title.box[0] + ITEM_INDENT, MENU_W), (max(0, title.box[0] - 12), MENU_W + 40),
                         (title.box[0] + ITEM_INDENT, MENU_LABELS_W)):
            found = screen.find(item, (x, MENU_BAR_H - 6, width, height))
            if found is not None:
                return found
        return None

    def _dialog_button(self, words: str, exclude: str | None, fallback: str) -> Steps:
        """Click the button of the dialog in front that reads ``words``; Enter (its default
        button) where the text cannot be read."""
        box = dialog(self.obs)
        if box is None:
            return
        x, y, w, h = box["box"]
        screen = _screen(self.obs)
        found = screen.find(words, (x, y + h - BUTTON_ROW_H, w, BUTTON_ROW_H), exclude=exclude, row=True)
        title = box.get("title") or "a dialog"
        if found is None:
            yield Action(type="key", keys=["enter"]), f"The “{title}” dialog is open; {fallback}"
            return
        yield from self._click_at(found, words, f"The “{title}” dialog asks which format to keep; "
                                                f"I'll click “{found.text}” to keep the file as it is.")

    def _await_window(self, title: str) -> Steps:
        """Wait until the window called ``title`` is up: on a busy machine a dialog can take a
        few seconds, and what is typed before it lands in the document. Where the screen
        lists no windows there is nothing to wait on."""
        for _ in range(WINDOW_TRIES):
            windows = self.obs.debug.get("windows")
            if windows is None or any(_is_dialog(w.get("title") or "", title) for w in windows):
                return
            yield Action(type="wait", amount=1), f"The {title} dialog is not up yet; I'll wait for it.", True

    # -- verbs ---------------------------------------------------------------------------
    def _mouse_save(self, step: dict[str, Any]) -> Steps:
        yield from self._menu("File", "Save", "The change is made; now I'll save the file.")
        yield Action(type="wait", amount=1), "I'll wait for LibreOffice to ask about the format."
        yield from self._dialog_button("Use", "ODF", "its default button keeps the current format, so I'll press Enter.")

    def _mouse_sort(self, step: dict[str, Any]) -> Steps:
        rng, column = str(step["range"]), int(step.get("column", 0))
        descending = bool(step.get("descending", False))
        yield from self._desktop_cell({"ref": rng, "thought": f"I'll select the rows {rng} through the Name Box."})
        yield from self._menu("Data", "Sort...", f"The rows {rng} are selected and need sorting.")
        yield from self._await_window("Sort")
        # the first sort key's column list has the keyboard when the dialog opens
        for _ in range(column):
            yield Action(type="key", keys=["down"]), "The Sort dialog is open; I'll move the first sort key to the column I need."
        if descending:
            box = dialog(self.obs, "Sort") or dialog(self.obs)
            screen = _screen(self.obs)
            region = tuple(box["box"]) if box else None
            found = screen.find("Descending", region)
            if found is None:
                raise MouseError("the Sort dialog shows no 'Descending'")
            yield from self._click_at(found, "Descending", "The order should run from largest to smallest, "
                                                           "so I'll click “Descending” for the first key.")
        yield Action(type="key", keys=["enter"]), "The sort key is set; OK is the dialog's default button, so I'll press Enter to sort."

    def _mouse_sheet(self, step: dict[str, Any]) -> Steps:
        """Click the sheet's tab in the tab row above Calc's status bar."""
        index, name = int(step.get("index", 0)), str(step.get("name") or "")
        if index == 0 or not name:
            return  # a workbook opens on its first sheet
        screen = _screen(self.obs)
        above, height = SHEET_TABS
        found = screen.find(name, (0, screen.height - above, screen.width, height))
        if found is None:
            raise MouseError(f"no sheet tab reads {name!r}")
        yield from self._click_at(found, name, f"The workbook opened on its first sheet; the task is about the "
                                               f"{name} sheet, so I'll click its tab at the bottom.")

    def _mouse_open(self, step: dict[str, Any]) -> Steps:
        name = str(step["file"])
        yield from self._menu("File", "Open...", f"The task needs {name} as well.")

    def _mouse_outline(self, step: dict[str, Any]) -> Steps:
        yield from self._menu("View", "Outline", "Editing every slide's text is easiest in the Outline view.")

    def _mouse_close(self, step: dict[str, Any]) -> Steps:
        yield from self._menu("File", "Close", "I have what I need from this document.")
        yield Action(type="wait", amount=1), "I'll let it close."
        yield from self._desktop_focus_back()

    def _mouse_replace_all(self, step: dict[str, Any]) -> Steps:
        old, new = str(step["find"]), str(step["replace"])
        yield from self._menu("Edit", "Find and Replace...", f"Every {old!r} has to become {new!r}.")
        yield from self._await_window("Find and Replace")
        yield Action(type="type", text=old), f"The Find and Replace dialog is open with the cursor in Find; I'll type {old[:60]!r}."
        yield from self._replace_rest(new, close=False)
        box = dialog(self.obs, "Find and Replace")
        found = _screen(self.obs).find("Close", tuple(box["box"])) if box else None
        if found is None:
            yield Action(type="key", keys=["escape"]), "Everything is replaced; Escape closes the dialog."
            return
        yield from self._click_at(found, "Close", "Everything is replaced; I'll click “Close” to get back to the document.")
