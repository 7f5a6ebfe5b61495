"""Canonical key names: one vocabulary for every model's spelling of a key, so ``arrowdown``
(UI-TARS, OpenAI's CUA), ``Down`` / ``Page_Down`` (Claude, which writes xdotool keysyms),
``pgdn`` (pyautogui) and ``ArrowDown`` (Playwright) all mean one key, and each executor
maps the canonical name to its own (xdotool keysym, Playwright key).

A key is a canonical name (``ctrl``, ``enter``, ``pagedown``, ``f5``, ...) or one printable
character. Anything else is unknown, and an unknown key is an error: a key the executor
passes through unchecked is a step that silently does nothing (``xdotool key arrowdown``
exits 0 and presses nothing).
"""

from __future__ import annotations

MODIFIERS = ("ctrl", "alt", "shift", "meta")
NAMED = ("enter", "escape", "tab", "space", "backspace", "delete", "insert", "home", "end", "pageup",
         "pagedown", "up", "down", "left", "right", "capslock", "printscreen", "menu")
FUNCTION = tuple(f"f{i}" for i in range(1, 25))
CANONICAL: frozenset[str] = frozenset(MODIFIERS + NAMED + FUNCTION)

# Every spelling seen in the published formats, lower-cased, without spaces, "-" or "_".
_ALIASES: dict[str, str] = {
    "control": "ctrl", "ctrlleft": "ctrl", "ctrlright": "ctrl", "controll": "ctrl", "controlr": "ctrl",
    "lctrl": "ctrl", "rctrl": "ctrl", "cmd": "meta", "command": "meta", "super": "meta", "win": "meta",
    "windows": "meta", "winleft": "meta", "winright": "meta", "superl": "meta", "superr": "meta",
    "metal": "meta", "metar": "meta", "option": "alt", "altleft": "alt", "altright": "alt", "altl": "alt",
    "altr": "alt", "altgr": "alt", "shiftleft": "shift", "shiftright": "shift", "shiftl": "shift",
    "shiftr": "shift",
    "return": "enter", "kpenter": "enter", "esc": "escape", "spacebar": "space", " ": "space",
    "back": "backspace", "del": "delete", "ins": "insert", "pgup": "pageup", "prior": "pageup",
    "pgdn": "pagedown", "next": "pagedown", "arrowup": "up", "arrowdown": "down", "arrowleft": "left",
    "arrowright": "right", "uparrow": "up", "downarrow": "down", "leftarrow": "left", "rightarrow": "right",
    "capital": "capslock", "caps": "capslock", "print": "printscreen", "prntscrn": "printscreen",
    "prtsc": "printscreen", "prtscr": "printscreen", "apps": "menu", "contextmenu": "menu",
    # punctuation spelled out (pyautogui, xdotool keysyms) -> the character
    "plus": "+", "minus": "-", "comma": ",", "period": ".", "dot": ".", "slash": "/", "backslash": "\\",
    "semicolon": ";", "colon": ":", "equal": "=", "equals": "=", "apostrophe": "'", "quote": "'",
    "quotedbl": '"', "grave": "`", "backtick": "`", "bracketleft": "[", "bracketright": "]",
    "braceleft": "{", "braceright": "}", "parenleft": "(", "parenright": ")", "asterisk": "*",
    "underscore": "_", "question": "?", "exclam": "!", "at": "@", "numbersign": "#", "dollar": "$",
    "percent": "%", "asciicircum": "^", "ampersand": "&", "less": "<", "greater": ">", "bar": "|",
    "asciitilde": "~",
}
HINT = "use names like ctrl, alt, shift, enter, escape, tab, backspace, up, down, pagedown, f5, or one character"


class UnknownKey(ValueError):
    """A key name no executor knows."""


def canonical_key(name: str) -> str:
    """One key as its canonical name (or its character); raises UnknownKey."""
    if not isinstance(name, str) or name == "":
        raise UnknownKey(f"a key must be a name, got {name!r}; {HINT}")
    if len(name) == 1:
        return name.lower() if name.isalpha() else (" " if name == " " else name)
    squeezed = name.strip().lower().replace(" ", "").replace("_", "").replace("-", "")
    if len(name.strip()) == 1:
        return canonical_key(name.strip())
    if squeezed in CANONICAL:
        return squeezed
    if squeezed in _ALIASES:
        return _ALIASES[squeezed]
    raise UnknownKey(f"unknown key {name!r}; {HINT}")


def _known(name: str) -> bool:
    try:
        canonical_key(name)
    except UnknownKey:
        return False
    return True


def split_chord(keys: list[str] | str) -> list[str]:
    """Keys written as one chord string (``"ctrl+s"``, ``"ctrl s"``) or a list whose items may
    themselves be chords (``["ctrl+shift+s"]``), as one list of key names (not yet canonical)."""
    if not isinstance(keys, str | list | tuple):
        raise UnknownKey(f"keys must be key names, got {keys!r}; {HINT}")
    items = [keys] if isinstance(keys, str) else list(keys)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UnknownKey(f"a key must be a name, got {item!r}; {HINT}")
        if len(item) <= 1 or _known(item):  # "+", "a", "Page Down"
            out.append(item)
            continue
        parts = item.replace("++", "+plus").split("+") if "+" in item else item.split()
        out.extend(p for p in parts if p)
    return out


def canonical_keys(keys: list[str] | str) -> list[str]:
    """A chord as canonical names, in order; raises UnknownKey naming the first bad key."""
    names = [canonical_key(k) for k in split_chord(keys)]
    if not names:
        raise UnknownKey(f"no key given; {HINT}")
    return names
