"""A tiny path language over app state JSON: ``mail.sent[-1].to``, ``cart.items[*].sku``.

``select`` returns every value the path reaches (a ``[*]`` fans out); a missing key or
index reaches nothing rather than raising, so a check on absent state simply fails.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_\-]*)|\[(-?\d+|\*)\]")


def parse(path: str) -> list[str | int]:
    tokens: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            raise ValueError(f"bad state path {path!r} at position {pos}")
        name, index = m.groups()
        tokens.append(name if name is not None else ("*" if index == "*" else int(index)))
        pos = m.end()
    return tokens


def select(obj: Any, path: str) -> list[Any]:
    current = [obj]
    for token in parse(path):
        nxt: list[Any] = []
        for value in current:
            if token == "*":
                if isinstance(value, list):
                    nxt.extend(value)
                elif isinstance(value, dict):
                    nxt.extend(value.values())
            elif isinstance(token, int):
                if isinstance(value, list) and -len(value) <= token < len(value):
                    nxt.append(value[token])
            elif isinstance(value, dict) and token in value:
                nxt.append(value[token])
        current = nxt
    return current
