"""Canonical GUI actions -> one ``xdotool`` command line each.

Coordinates arrive on the 0-999 grid and are mapped to pixels with ``to_pixels``. ``key``
and ``hotkey`` both press their keys together as one chord (``["ctrl", "s"]`` is Ctrl+S);
an element may itself be a chord (``"ctrl+shift+s"``). Press keys one after another with
several actions.
"""

from __future__ import annotations

import re

from guiforge.envs.actions import Action, to_pixels
from guiforge.envs.keys import CANONICAL, FUNCTION, canonical_key, canonical_keys

TYPE_DELAY_MS = 4  # per character; 0 lets LibreOffice reorder keys under load
DOUBLE_CLICK_MS = 80

# canonical key (guiforge.envs.keys) -> X keysym; a character's keysym is looked up below
KEYSYMS = {
    "ctrl": "ctrl", "alt": "alt", "shift": "shift", "meta": "super", "enter": "Return", "escape": "Escape",
    "tab": "Tab", "space": "space", "backspace": "BackSpace", "delete": "Delete", "insert": "Insert",
    "home": "Home", "end": "End", "pageup": "Prior", "pagedown": "Next", "up": "Up", "down": "Down",
    "left": "Left", "right": "Right", "capslock": "Caps_Lock", "printscreen": "Print", "menu": "Menu",
    **{f: f.upper() for f in FUNCTION},
}
assert set(KEYSYMS) == CANONICAL, "every canonical key has an X keysym"
# characters xdotool cannot take by themselves inside a chord ("ctrl++" is no chord)
CHAR_KEYSYMS = {"+": "plus", "-": "minus", " ": "space", ",": "comma", ".": "period", "/": "slash",
                "\\": "backslash", ";": "semicolon", "=": "equal", "'": "apostrophe", "`": "grave",
                "[": "bracketleft", "]": "bracketright"}
BUTTONS = {"left": "1", "middle": "2", "right": "3"}
SCROLL_BUTTONS = {"up": "4", "down": "5", "left": "6", "right": "7"}


def key_name(key: str) -> str:
    """One key (canonical or an alias) -> its X keysym; UnknownKey (a ValueError) for a name
    X would ignore: ``xdotool key arrowdown`` exits 0 and presses nothing."""
    name = canonical_key(key)
    return KEYSYMS.get(name) or CHAR_KEYSYMS.get(name, name)


def chord(keys: list[str]) -> str:
    return "+".join(KEYSYMS.get(k) or CHAR_KEYSYMS.get(k, k) for k in canonical_keys(keys))


def xdotool_args(action: Action, width: int, height: int) -> list[str]:
    """The xdotool arguments that perform ``action`` on a ``width`` x ``height`` screen."""
    t = action.type

    def at(x: int | None, y: int | None) -> list[str]:
        px, py = to_pixels(x, y, width, height)  # type: ignore[arg-type]
        return ["mousemove", str(px), str(py)]

    if t in ("click", "right_click", "double_click"):
        button = "3" if t == "right_click" else BUTTONS[action.button or "left"]
        repeat = ["--repeat", "2", "--delay", str(DOUBLE_CLICK_MS)] if t == "double_click" else []
        return [*at(action.x, action.y), "click", *repeat, button]
    if t == "drag":
        px, py = to_pixels(action.x, action.y, width, height)  # type: ignore[arg-type]
        qx, qy = to_pixels(action.x2, action.y2, width, height)  # type: ignore[arg-type]
        mid = [str((px + qx) // 2), str((py + qy) // 2)]
        # intermediate motion and pauses: apps only start a drag after seeing movement
        return ["mousemove", str(px), str(py), "mousedown", BUTTONS[action.button or "left"],
                "sleep", "0.05", "mousemove", *mid, "sleep", "0.05",
                "mousemove", str(qx), str(qy), "sleep", "0.05", "mouseup",
                BUTTONS[action.button or "left"]]
    if t == "scroll":
        move = at(action.x, action.y) if action.x is not None and action.y is not None else []
        clicks = max(1, min(action.amount or 3, 50))
        return [*move, "click", "--repeat", str(clicks), "--delay", "20",
                SCROLL_BUTTONS[action.direction or "down"]]
    if t == "type":
        return ["type", "--delay", str(TYPE_DELAY_MS), "--", action.text or ""]
    if t in ("key", "hotkey"):
        return ["key", "--delay", "20", "--", chord(action.keys or [])]
    raise ValueError(f"{t} is not a GUI action")


def xdotool_commands(action: Action, width: int, height: int) -> list[list[str]]:
    """One or more xdotool invocations for ``action``. Typed text is split at newlines and
    tabs, which are pressed as Return and Tab: ``xdotool type`` sends a newline as the
    Linefeed key, which Writer ignores, and ``type`` cannot be chained with ``key``."""
    if action.type != "type" or not re.search(r"[\n\t]", action.text or ""):
        return [xdotool_args(action, width, height)]
    commands: list[list[str]] = []
    for piece in re.split(r"([\n\t])", (action.text or "").replace("\r\n", "\n")):
        if piece in ("\n", "\t"):
            commands.append(["key", "Return" if piece == "\n" else "Tab"])
        elif piece:
            commands.append(["type", "--delay", str(TYPE_DELAY_MS), "--", piece])
    return commands
