"""Thoughts for LibreOffice steps: what is on screen (the document, the dialog in front, the
menu item under the pointer) and why the next action follows.

The desktop has no element scan; what the teacher "sees" is the window list of the
observation (a dialog's title) and the text OCR already read from this frame for the
step's target (:meth:`guiforge.envs.desktop.ocr.ScreenText.text_at`: no new OCR here).
"""

from __future__ import annotations

import random
from typing import Any

from guiforge.envs.actions import Action, to_pixels
from guiforge.envs.base import Observation
from guiforge.envs.screen_facts import readable

# What a shortcut does in LibreOffice, as a person would say it.
SHORTCUTS = {
    "ctrl+shift+f5": "puts the cursor in the Name Box, where a cell address can be typed",
    "ctrl+a": "selects everything in the box, so what I type replaces it",
    "ctrl+s": "saves the document",
    "ctrl+f": "opens the find toolbar",
    "ctrl+h": "opens Find & Replace",
    "ctrl+o": "opens the Open dialog",
    "ctrl+w": "closes this document",
    "alt+d": "opens the Data menu",
    "alt+v": "opens the View menu",
    "alt+p": "moves to the Replace field",
    "alt+l": "presses Replace All",
    "delete": "drops the text Calc suggested to complete the cell",
    "escape": "closes what is open now",
    "tab": "moves to the next field",
    "down": "moves one entry down the list",
    "home": "moves the cursor to the start of the box",
    "pagedown": "moves on to the next slide",
    "ctrl+pagedown": "moves to the next sheet tab",
}

# What a reference verb is for, to give a reason.
PURPOSES = {
    "save": "save the file so the change is kept", "sort": "sort the rows the task is about",
    "cell": "get to the cell the task needs", "find": "find the text the task mentions",
    "replace_all": "replace the text everywhere", "open": "open the file I need",
    "close": "get back to the other document", "outline": "edit the slides' text directly",
}


def dialog_title(obs: Observation) -> str | None:
    """The title of the window in front when it is not a document (a dialog)."""
    windows = obs.debug.get("windows") or []
    if len(windows) > 1 and "LibreOffice" not in (windows[-1].get("title") or ""):
        return windows[-1].get("title") or None
    return None


MENU_BAR_H = 24  # px (guiforge.teacher.desktop_mouse)


def _clicked(action: Action, obs: Observation):
    screen = obs.debug.get("screen")
    if screen is None or action.x is None or not obs.width:
        return None
    px, py = to_pixels(action.x, action.y, obs.width, obs.height)
    return screen.line_at(px, py)


def desktop_intent(action: Action, obs: Observation, step: dict[str, Any], rng: random.Random,
                   last: bool = False) -> str | None:
    """The reason part of a desktop thought, or None where the generic writer does better."""
    verb = str(step.get("do") or "")
    goal = PURPOSES.get(verb, "finish the task" if last else "get on with the task")
    dialog = dialog_title(obs)
    where = f"The “{dialog}” dialog is open" if dialog else "The document has the focus"
    if action.type == "click":
        line = _clicked(action, obs)
        text = readable(line.text, ocr=True) if line else None  # OCR noise ("en.") is never quoted
        if text is None:
            return rng.choice([f"{where}; I'll click the document's window so my keys go there, then {goal}.",
                               f"{where}, but my keys would go elsewhere; a click on the window brings them back so I can {goal}."])
        if dialog:
            return rng.choice([f"{where}, and “{text}” is the button I need; I'll click it to {goal}.",
                               f"In the “{dialog}” dialog I'll click “{text}”, which is the way to {goal}."])
        if line is not None and line.box[1] < MENU_BAR_H:
            return rng.choice([f"{where}. To {goal} I need the {text} menu, so I'll click “{text}” in the menu bar.",
                               f"The menu bar is at the top; what I need to {goal} is under “{text}”, so I'll click it."])
        return rng.choice([f"The menu is open and “{text}” is in it; I'll click it to {goal}.",
                           f"I can see “{text}” in the open menu, which is how I {goal}, so I'll click it."])
    if action.type in ("key", "hotkey"):
        keys = "+".join(k.lower() for k in action.keys or [])
        does = SHORTCUTS.get(keys)
        shown = "+".join(k.capitalize() if len(k) > 1 else k.upper() for k in action.keys or [])
        if keys == "enter":
            if dialog:
                return f"{where} with the right settings, and Enter presses its default button, so I'll press Enter."
            return f"{where}; Enter confirms what I typed and moves on, so I'll press Enter to {goal}."
        if does:
            return rng.choice([f"{where}; {shown} {does}, which is what I need to {goal}.",
                               f"I'll press {shown}: it {does}, and that is the next bit of the way to {goal}."])
        return None
    if action.type == "type":
        text = (action.text or "").rstrip("\n")
        enter = " and Enter" if (action.text or "").endswith("\n") else ""
        into = f"into the “{dialog}” dialog" if dialog else "where the cursor is"
        return rng.choice([f"{where}; I'll type {text[:60]!r}{enter} {into} to {goal}.",
                           f"Next I type {text[:60]!r}{enter} {into}, the value this step needs to {goal}."])
    if action.type == "wait":
        return f"{where}; LibreOffice needs a moment to react, so I'll wait before I {goal.split(' so ')[0]}."
    return None
