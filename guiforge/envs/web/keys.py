"""Canonical key names (what a model writes: "ctrl", "enter", "pagedown") -> Playwright's."""

from __future__ import annotations

_ALIASES = {
    "ctrl": "Control", "control": "Control", "alt": "Alt", "option": "Alt", "shift": "Shift",
    "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta", "super": "Meta",
    "enter": "Enter", "return": "Enter", "esc": "Escape", "escape": "Escape", "tab": "Tab",
    "space": " ", "spacebar": " ", "backspace": "Backspace", "delete": "Delete", "del": "Delete",
    "insert": "Insert", "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "page_up": "PageUp", "page_down": "PageDown", "up": "ArrowUp", "down": "ArrowDown",
    "left": "ArrowLeft", "right": "ArrowRight", "arrowup": "ArrowUp", "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft", "arrowright": "ArrowRight", "capslock": "CapsLock",
}
_NAMED = set(_ALIASES.values()) | {f"F{i}" for i in range(1, 13)}


def playwright_key(name: str) -> str:
    """One key name -> Playwright's, or ValueError naming the bad key."""
    raw = name.strip()
    if len(raw) == 1:
        return raw
    key = _ALIASES.get(raw.lower().replace(" ", ""))
    if key:
        return key
    if raw in _NAMED:
        return raw
    if raw.upper() in {f"F{i}" for i in range(1, 13)}:
        return raw.upper()
    raise ValueError(f"unknown key {name!r}; use names like ctrl, shift, enter, esc, tab, up, pagedown, f5 or one character")


def chord(keys: list[str]) -> str:
    """["ctrl", "a"] -> "Control+a" (a hotkey pressed together)."""
    return "+".join(playwright_key(k) for k in keys)
