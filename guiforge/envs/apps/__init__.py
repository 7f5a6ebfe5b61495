"""The local web apps: framework-less HTML/CSS/JS served from ``static/``.

One page (``index.html``) loads every app; the path picks the app (``/mail/inbox``) and
``window.guiforge`` loads and reads back the whole state as JSON. ``APPS`` is the list the
adapter, the preparer and the tests agree on.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

STATIC_DIR = Path(__file__).parent / "static"


@dataclass(frozen=True)
class AppInfo:
    name: str
    title: str
    home: str  # the route an episode starts on when a task names this app


APPS: tuple[AppInfo, ...] = (
    AppInfo("mail", "Mail", "/mail/inbox"),
    AppInfo("calendar", "Calendar", "/calendar"),
    AppInfo("contacts", "Contacts", "/contacts"),
    AppInfo("shop", "Shop", "/shop"),
    AppInfo("notes", "Notes", "/notes"),
    AppInfo("bank", "Bank", "/bank"),
    AppInfo("travel", "Travel", "/travel"),
    AppInfo("chat", "Chat", "/chat"),
)
APP_NAMES: tuple[str, ...] = tuple(a.name for a in APPS)


def app_info(name: str) -> AppInfo:
    for a in APPS:
        if a.name == name:
            return a
    raise KeyError(f"unknown web app {name!r}; known apps: {', '.join(APP_NAMES)}")


@lru_cache(maxsize=1)
def assets() -> dict[str, tuple[bytes, str]]:
    """Every static file by URL path (``/static/core.js``), read once per process."""
    out: dict[str, tuple[bytes, str]] = {}
    for f in sorted(STATIC_DIR.rglob("*")):
        if f.is_file():
            kind = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind.endswith("javascript"):
                kind += "; charset=utf-8"
            out["/static/" + f.relative_to(STATIC_DIR).as_posix()] = (f.read_bytes(), kind)
    return out


def shell() -> tuple[bytes, str]:
    """The one HTML page every app route serves (the router in core.js picks the app)."""
    return assets()["/static/index.html"]
