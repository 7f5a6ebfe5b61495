"""The local web apps: framework-less HTML/CSS/JS served from ``static/``.

One page (``index.html``) loads every app; the path picks the app (``/mail/inbox``) and
``window.guiforge`` loads and reads back the whole state as JSON. Which apps there are
(``APPS``: names, titles, home routes) is guiforge.worlds.apps, read by the preparers too.
"""

from __future__ import annotations

import mimetypes
from functools import lru_cache
from pathlib import Path

from guiforge.worlds.apps import APP_NAMES, APPS, AppInfo, app_info  # noqa: F401 - the apps served here

STATIC_DIR = Path(__file__).parent / "static"


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
