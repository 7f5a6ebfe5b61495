"""Check functions a rubric criterion can name. Each reads the final state (app state JSON,
workspace files, the agent's answer) and returns True or False; never the screen.

Register new checks with ``@check("name")``; skill cards refer to them by that name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from guiforge.envs.base import FinalState
from guiforge.verify.paths import select

CHECKS: dict[str, Callable[..., bool]] = {}


def check(name: str):
    def register(fn: Callable[..., bool]) -> Callable[..., bool]:
        CHECKS[name] = fn
        return fn

    return register


def normalize(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value)).strip().casefold()


def _number(text: Any) -> float | None:
    if isinstance(text, int | float):
        return float(text)
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", str(text))
    return float(m.group().replace(",", "")) if m else None


def _same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(b, int | float) and not isinstance(b, bool):
        n = _number(a)
        return n is not None and abs(n - float(b)) <= tolerance
    return normalize(a) == normalize(b)


def _workspace_file(state: FinalState, path: str) -> Path:
    if state.workspace is None:
        raise ValueError("this task has no workspace")
    full = (state.workspace / path).resolve()
    if not full.is_relative_to(state.workspace.resolve()):
        raise ValueError(f"{path} is outside the workspace")
    return full


@check("state_equals")
def state_equals(state: FinalState, path: str, value: Any, any_match: bool = True, tolerance: float = 0.005) -> bool:
    found = select(state.apps, path)
    hits = [_same(v, value, tolerance) for v in found]
    return bool(found) and (any(hits) if any_match else all(hits))


@check("state_contains")
def state_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    """Some value at ``path`` contains every one of ``text`` (case-insensitive)."""
    needles = [text] if isinstance(text, str) else text
    return any(all(normalize(n) in normalize(v) for n in needles) for v in select(state.apps, path))


@check("state_count")
def state_count(state: FinalState, path: str, min: int = 1, max: int | None = None) -> bool:  # noqa: A002
    n = len(select(state.apps, path))
    return n >= min and (max is None or n <= max)


@check("state_absent")
def state_absent(state: FinalState, path: str) -> bool:
    return not select(state.apps, path)


@check("answer_matches")
def answer_matches(state: FinalState, value: Any, mode: str = "contains", tolerance: float = 0.005) -> bool:
    if state.answer is None:
        return False
    if mode == "number":
        n = _number(state.answer)
        return n is not None and abs(n - float(value)) <= tolerance
    if mode == "exact":
        return normalize(state.answer) == normalize(value)
    return normalize(value) in normalize(state.answer)


@check("status_is")
def status_is(state: FinalState, status: str) -> bool:
    return state.status == status


@check("file_exists")
def file_exists(state: FinalState, path: str) -> bool:
    return _workspace_file(state, path).is_file()


@check("file_contains")
def file_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    content = normalize(f.read_text(errors="replace"))
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("xlsx_cell_equals")
def xlsx_cell_equals(state: FinalState, path: str, cell: str, value: Any, sheet: str | None = None, tolerance: float = 0.005) -> bool:
    from openpyxl import load_workbook

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    # data_only reads the values LibreOffice cached when it saved; formulas alone have none.
    wb = load_workbook(f, data_only=True, read_only=True)
    ws = wb[sheet] if sheet else wb.worksheets[0]
    got = ws[cell].value
    wb.close()
    return got is not None and _same(got, value, tolerance)


@check("pptx_contains")
def pptx_contains(state: FinalState, path: str, text: str | list[str], slide: int | None = None) -> bool:
    from pptx import Presentation

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    slides = list(Presentation(str(f)).slides)
    if slide is not None:
        slides = slides[slide : slide + 1] if -len(slides) <= slide < len(slides) else []
    content = normalize(" ".join(sh.text_frame.text for s in slides for sh in s.shapes if sh.has_text_frame))
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("docx_contains")
def docx_contains(state: FinalState, path: str, text: str | list[str]) -> bool:
    from docx import Document

    f = _workspace_file(state, path)
    if not f.is_file():
        return False
    doc = Document(str(f))
    content = normalize(" ".join(p.text for p in doc.paragraphs))
    needles = [text] if isinstance(text, str) else text
    return all(normalize(n) in content for n in needles)


@check("terminal_output_contains")
def terminal_output_contains(state: FinalState, text: str) -> bool:
    return any(normalize(text) in normalize(r.get("output", "")) for r in state.terminal)


@check("state_mentions_number")
def state_mentions_number(state: FinalState, path: str, value: float) -> bool:
    """Some text at ``path`` quotes ``value`` in any usual format (1234.5, 1,234.50, 1.234,50 €)."""
    from guiforge.worlds.formats import find_number

    return any(find_number(str(v), float(value)) for v in select(state.apps, path))


@check("file_mentions_number")
def file_mentions_number(state: FinalState, path: str, value: float) -> bool:
    from guiforge.worlds.formats import find_number

    f = _workspace_file(state, path)
    return f.is_file() and find_number(f.read_text(errors="replace"), float(value))


@check("answer_mentions_number")
def answer_mentions_number(state: FinalState, value: float) -> bool:
    from guiforge.worlds.formats import find_number

    return state.answer is not None and find_number(state.answer, float(value))
