"""Reference steps on the desktop: LibreOffice's keyboard recipes, and the choice between
them and the mouse recipes of :mod:`guiforge.teacher.desktop_mouse`.

A task's presentation draws ``style: mouse|keyboard`` (seeded, recorded in
``tasks.presentation_json``; the desktop observation carries it as ``debug["style"]``). A
mouse task opens menus and presses dialog buttons by clicking the text OCR finds; a
keyboard task (and any verb with no mouse recipe: cell, find, typing) uses the short
keyboard recipes here, measured to work in LibreOffice 7.4 under xdotool with no window
manager. What they rely on:

- Calc's Name Box (Ctrl+Shift+F5, then Ctrl+A: the box keeps its old text) jumps to a cell
  or selects a range; AutoInput completes text from the column above, so a typed text
  value is followed by Delete, which drops the suggested rest.
- A workbook opens on its first sheet; Ctrl+PageDown moves to the next sheet tab (the
  keyboard way to another sheet: the Name Box would need the sheet's name quoted).
- Ctrl+S on an xlsx/docx/pptx/csv asks "Keep current format?"; its default button keeps it.
- The find toolbar (Ctrl+F, text, Enter, Escape) leaves the first match selected, so typing
  replaces it; Writer's Find & Replace dialog answers Alt+P (Replace field) and Alt+L
  (Replace All).
- Impress's Outline view (View > Outline: Alt+V, O) is the whole deck as text: Enter adds a
  line, Shift+Tab turns it into a new slide's title, Tab into a bullet.
- A second document opened with Ctrl+O takes the keyboard; once it is closed, LibreOffice
  leaves the first window inactive until it is clicked (an empty spot of the menu bar). The
  Open dialog's file name box completes names case-insensitively while the cursor is at its
  end, rewriting the case of what was typed; a path typed in front of a placeholder is not.

Each ``_desktop_<verb>`` yields (action, thought) pairs, like the ``_do_<verb>`` methods of
:class:`guiforge.teacher.reference.ReferenceProgram`, which dispatches to these first when
the domain is ``desktop``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Generator, Iterator
from typing import Any

from guiforge.envs.actions import Action
from guiforge.teacher.desktop_mouse import DesktopMouse, MouseError

# mouse recipes that fell back to the keyboard in this process, by verb (bench/desktop_styles.py)
FALLBACKS: Counter[str] = Counter()
WORKDIR = "/workspace"  # the workspace as LibreOffice and the terminal see it
MENU_BAR = (600, 12)  # grid point on the empty right end of every LibreOffice menu bar
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?$")

Steps = Iterator[tuple[Action, str]]


def _key(*keys: str) -> Action:
    return Action(type="hotkey" if len(keys) > 1 else "key", keys=list(keys))


def _type(text: str) -> Action:
    return Action(type="type", text=text)


def _autocompletes(value: str) -> bool:
    """Text Calc may complete from the column (numbers and formulas it does not)."""
    return not (value.startswith("=") or _NUMBER.match(value.strip()))


class DesktopSteps(DesktopMouse):
    """Desktop verbs for the reference program (a mixin: ``self.variant`` is set). A task
    whose presentation says ``style: mouse`` (the observation carries it) gets the mouse
    recipe of a verb where there is one (guiforge.teacher.desktop_mouse)."""

    def _by_mouse(self, verb: str) -> bool:
        return self.obs.debug.get("style") == "mouse" and hasattr(self, f"_mouse_{verb}")

    def _mouse_first(self, verb: str, step: dict[str, Any]) -> Generator[tuple[Action, str], None, bool]:
        """The verb's mouse recipe; False once something it needs could not be read off the
        screen (then Escape has closed the menu or dialog, and the keyboard recipe follows)."""
        try:
            yield from getattr(self, f"_mouse_{verb}")(step)
            return True
        except MouseError as exc:
            FALLBACKS[verb] += 1
            yield _key("escape"), (f"I can't make out what I need on screen ({exc}); I'll close what is open "
                                   "and use the keyboard instead.")
            yield _key("escape"), "Once more, so the menu bar lets go of the keyboard too."
            return False

    def _desktop_cell(self, step: dict[str, Any]) -> Steps:
        """``{do: cell, ref: B9}`` goes to a cell (or selects a range, ``ref: A2:D7``);
        ``value`` types one value there and presses Enter; ``values`` types a row of them,
        Tab between."""
        ref = str(step["ref"])
        yield _key("ctrl", "shift", "F5"), step.get("thought") or f"I'll go to cell {ref} through the Name Box."
        yield _key("ctrl", "a"), "I'll replace the address that is in the Name Box."
        yield _type(f"{ref}\n"), f"I'll enter {ref} to jump there."
        values = step.get("values")
        if values is None and "value" in step:
            values = [step["value"]]
        for i, raw in enumerate(values or []):
            value, last = str(raw), i == len(values) - 1
            end = "\n" if last else "\t"
            if not value:
                yield _key("enter" if last else "tab"), "I'll leave this cell empty."
            elif _autocompletes(value):
                yield _type(value), f"I'll type {value[:60]!r}."
                yield _key("delete"), "I'll drop anything Calc suggests to complete it."
                yield _key("enter" if last else "tab"), "I'll confirm the cell." if last else "Next cell."
            else:
                yield _type(value + end), f"I'll type {value[:60]!r} into the cell."

    def _desktop_sheet(self, step: dict[str, Any]) -> Steps:
        """``{do: sheet, index: 2, name: Monthly}``: from the first sheet (where a workbook
        opens) to the ``index``-th one (0-based), one Ctrl+PageDown per tab; the first
        sheet needs nothing."""
        index, name = int(step.get("index", 0)), str(step.get("name") or "the sheet I need")
        if index and self._by_mouse("sheet") and (yield from self._mouse_first("sheet", step)):
            return
        for k in range(index):
            yield _key("ctrl", "pagedown"), (f"The workbook opened on its first sheet; I'll move to the {name} "
                                            "sheet with Ctrl+PageDown." if k == 0 else "One more tab to the right.")

    def _desktop_slide(self, step: dict[str, Any]) -> Steps:
        """``{do: slide, index: 2, title: Sales}``: from the first slide (where a deck opens)
        to the ``index``-th one (0-based), one Page Down per slide: a look at the slide a
        question is about before answering it."""
        index, title = int(step.get("index", 0)), str(step.get("title") or "")
        name = f"the “{title}” slide" if title else f"slide {index + 1}"
        if not index:
            yield Action(type="wait", amount=1), (f"The deck opened on {name}, the one the question is about; "
                                                  "I'll give it a moment to draw fully before I read it.")
        for k in range(index):
            yield _key("pagedown"), (f"The deck opened on its first slide, but the question is about {name}; "
                                     "Page Down moves one slide on." if k == 0 else
                                     f"Not at {name} yet; one more Page Down.")

    def _desktop_sort(self, step: dict[str, Any]) -> Steps:
        """``{do: sort, range: A2:D7, column: 3, descending: true}``: select the range and sort
        its rows by its ``column``-th column (0-based) with Data > Sort."""
        if self._by_mouse("sort") and (yield from self._mouse_first("sort", step)):
            return
        rng, column = str(step["range"]), int(step.get("column", 0))
        descending = bool(step.get("descending", False))
        yield from self._desktop_cell({"ref": rng, "thought": f"I'll select the rows {rng} through the Name Box."})
        yield _key("alt", "d"), "I'll open the Data menu."
        yield _key("s"), "I'll open the Sort dialog."
        yield from self._await_window("Sort")
        for _ in range(column):
            yield _key("down"), "I'll pick the column to sort by."
        if descending:
            yield _key("tab"), "Now the sort order."
            yield _key("down"), "I want descending order."
        yield _key("enter"), "I'll sort."

    def _desktop_save(self, step: dict[str, Any]) -> Steps:
        if self._by_mouse("save") and (yield from self._mouse_first("save", step)):
            return
        yield _key("ctrl", "s"), "I'll save the file."
        yield Action(type="wait", amount=1), "I'll wait for the format question."
        yield _key("enter"), "I'll keep the file's current format."

    def _desktop_find(self, step: dict[str, Any]) -> Steps:
        """``{do: find, text}``: select the first match after the cursor."""
        text = str(step["text"])
        yield _key("ctrl", "f"), f"I'll search for {text[:60]!r}."
        yield _type(text + "\n"), f"I'll look for {text[:60]!r}."
        yield _key("escape"), "Found it; I'll close the search bar and work on the selection."

    def _desktop_replace_all(self, step: dict[str, Any]) -> Steps:
        """``{do: replace_all, find, replace}``: Writer's Find & Replace, Replace All."""
        if self._by_mouse("replace_all") and (yield from self._mouse_first("replace_all", step)):
            return
        old, new = str(step["find"]), str(step["replace"])
        yield _key("ctrl", "h"), "I'll open Find & Replace."
        yield from self._await_window("Find and Replace")
        yield _type(old), f"I'll search for {old[:60]!r}."
        yield from self._replace_rest(new)

    def _replace_rest(self, new: str, close: bool = True) -> Steps:
        """The Find & Replace dialog after its Find text: the replacement, Replace All, close.
        Its buttons sit in frames OCR does not read, so these are its access keys in either
        style."""
        yield _key("alt", "p"), "Now the replacement."
        yield _type(new), f"I'll replace it with {new[:60]!r}."
        yield _key("alt", "l"), "I'll replace every occurrence."
        if close:
            yield _key("escape"), "I'll close the dialog."

    def _desktop_open(self, step: dict[str, Any]) -> Steps:
        """``{do: open, file}``: open a workspace file in LibreOffice (a new window, or the
        empty one the app started with); a CSV's Text Import dialog is accepted as it is."""
        name = str(step["file"])
        if not (self._by_mouse("open") and (yield from self._mouse_first("open", step))):
            yield _key("ctrl", "o"), step.get("thought") or f"I'll open {name}."
        yield from self._open_dialog(name)

    def _open_dialog(self, name: str) -> Steps:
        """The Open dialog, once it is up: the path typed into its name box, then Enter."""
        yield from self._await_window("Open")
        # the dialog completes a name as it is typed at the end of the box, taking the letter
        # case of the first file that starts alike (INV-1.docx after income.xlsx becomes
        # inV-1.docx): type the path in front of a placeholder, then delete the placeholder
        yield _type("#"), "The dialog auto-completes names (and their case); a placeholder stops that."
        yield _key("home"), "Back to the start of the box."
        yield _type(f"{WORKDIR}/{name}"), f"I'll type the path: {WORKDIR}/{name}."
        yield _key("delete"), "I'll delete the placeholder."
        yield _key("enter"), "Open it."
        yield Action(type="wait", amount=1), f"I'll wait for {name} to open."
        if name.lower().endswith((".csv", ".tsv")):
            yield _key("enter"), "The import settings (UTF-8, comma-separated) are right; OK."
            yield Action(type="wait", amount=1), "I'll wait for the table to load."
        x, y = MENU_BAR
        # a window LibreOffice reused for the file stays inactive until clicked
        yield Action(type="click", x=x, y=y), f"I'll click {name}'s window to work in it."

    def _desktop_close(self, step: dict[str, Any]) -> Steps:
        """Close the document in front and give the keyboard back to the one behind it."""
        if self._by_mouse("close") and (yield from self._mouse_first("close", step)):
            return
        yield _key("ctrl", "w"), "I have what I need; I'll close this document."
        yield Action(type="wait", amount=1), "I'll let it close."
        yield from self._desktop_focus_back()

    def _desktop_focus_back(self) -> Steps:
        x, y = MENU_BAR
        yield Action(type="click", x=x, y=y), "I'll click the other window to work in it again."

    def _desktop_outline(self, step: dict[str, Any]) -> Steps:
        if self._by_mouse("outline") and (yield from self._mouse_first("outline", step)):
            return
        yield _key("alt", "v"), "I'll open the View menu."
        yield _key("o"), "The Outline view lets me edit every slide's text directly."
