"""Canonical key names (:mod:`guiforge.envs.keys`) -> Playwright's."""

from __future__ import annotations

from guiforge.envs.keys import CANONICAL, FUNCTION, canonical_key, canonical_keys

_PLAYWRIGHT = {
    "ctrl": "Control", "alt": "Alt", "shift": "Shift", "meta": "Meta", "enter": "Enter", "escape": "Escape",
    "tab": "Tab", "space": " ", "backspace": "Backspace", "delete": "Delete", "insert": "Insert", "home": "Home",
    "end": "End", "pageup": "PageUp", "pagedown": "PageDown", "up": "ArrowUp", "down": "ArrowDown",
    "left": "ArrowLeft", "right": "ArrowRight", "capslock": "CapsLock", "printscreen": "PrintScreen",
    "menu": "ContextMenu", **{f: f.upper() for f in FUNCTION},
}
assert set(_PLAYWRIGHT) == CANONICAL, "every canonical key has a Playwright name"


def playwright_key(name: str) -> str:
    """One canonical key (or an alias of one) -> Playwright's name; ValueError naming a bad key."""
    key = canonical_key(name)
    return _PLAYWRIGHT.get(key, key)  # a character is its own name


def chord(keys: list[str]) -> str:
    """["ctrl", "a"] -> "Control+a" (a hotkey pressed together)."""
    return "+".join(_PLAYWRIGHT.get(k, k) for k in canonical_keys(keys))
