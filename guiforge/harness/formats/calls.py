"""Python-style call expressions as text formats write them: ``click(start_box='(1,2)')``,
``pyautogui.hotkey('ctrl', 's')``; and the literals they are written with."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

_CALL_START = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\(")
_LOOSE_KWARG = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\(\s*(\w+)\s*=\s*(['\"])(.*)\3\s*\)\s*$", re.S)


@dataclass
class Call:
    name: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)


def _literal(node: ast.AST) -> Any:
    return ast.literal_eval(node)


def parse_call(text: str) -> Call | None:
    """One call expression, or None when ``text`` is not one. Arguments must be literals."""
    text = text.strip().rstrip(";")
    if not _CALL_START.match(text):
        return None
    try:
        node = ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Call):
            return None
        name = ast.unparse(node.func)
        return Call(name, [_literal(a) for a in node.args], {k.arg: _literal(k.value) for k in node.keywords if k.arg})
    except (SyntaxError, ValueError, TypeError):
        pass
    # One string argument with unescaped quotes inside (type(content='it's done')): take it whole.
    m = _LOOSE_KWARG.match(text)
    if m:
        return Call(m.group(1), [], {m.group(2): m.group(4).replace("\\n", "\n")})
    return None


def call_lines(text: str) -> list[tuple[str, Call | None]]:
    """Each logical line of ``text`` with its call (None where the line is not a call);
    a call may span lines (a string argument with a newline in it)."""
    out: list[tuple[str, Call | None]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _CALL_START.match(line):
            for j in range(i, min(len(lines), i + 20)):  # a call spans until it parses
                chunk = "\n".join(lines[i:j + 1])
                call = parse_call(chunk)
                if call is not None:
                    out.append((chunk, call))
                    i = j + 1
                    break
            else:
                out.append((line, None))
                i += 1
            continue
        out.append((line, None))
        i += 1
    return out


def quote(value: str) -> str:
    """A single-quoted Python string literal."""
    body = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{body}'"


def literal(value: Any) -> str:
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def write_call(name: str, /, *args: Any, **kwargs: Any) -> str:
    parts = [literal(a) for a in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"
