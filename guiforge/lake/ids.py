"""The shape of the ids the lake stores and names files by, and paths built from them.

Ids the pipeline makes (``tsk_<hex>``, ``w-berlin-01``, OSWorld's UUIDs) all fit
:data:`ID_PATTERN`; an id read from outside (an imported task file) must fit it too, since
exports name files and folders after it. :func:`within` is the check every path built
from data goes through before anything is written there.
"""

from __future__ import annotations

import re
from pathlib import Path

from guiforge.errors import GuiforgeError

# letters, digits, '_', '.', '-'; starts with a letter or digit (so never '.' or '..'), no '/'
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def check_id(value: object, field: str, source: str) -> str:
    """``value`` when it is a valid id; else a one-line error naming the file and field."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise GuiforgeError(f"{source}: {field}: {value!r} is not a valid id (letters, digits, '_', '.', '-'; "
                            "starting with a letter or digit; at most 128 characters)")
    return value


def within(root: Path, *parts: str) -> Path:
    """``root / parts`` after checking that, resolved, it stays inside ``root``."""
    base = Path(root).resolve()
    path = base.joinpath(*parts).resolve()
    if not path.is_relative_to(base) or path == base:
        raise GuiforgeError(f"{'/'.join(parts)!r} would be written outside {base}; refusing")
    return path
