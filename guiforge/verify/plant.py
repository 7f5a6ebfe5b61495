"""Planted side errors: the package gate's proof that a verifier sees side damage.

From the final state the reference solution left, :func:`plant_side_error` makes the state an
agent would leave with one careless extra: a digit changed in a record the task must not touch
(another email, another contact, another product), a record added where none should be (an
extra email), a spreadsheet cell, paragraph, slide or line edited in a place the task does not
concern, or a file that should not be there. The verifier must fail it.
"""

from __future__ import annotations

import copy
import io
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from guiforge.verify.contract import FinalState
from guiforge.verify.file_diff import diff_file, workspace_files
from guiforge.verify.side_effects import allowed, resolve_allowances, side_damage
from guiforge.verify.state_diff import Change, identity_key

_DIGIT = re.compile(r"\d")
MAX_TRIES = 40


@dataclass
class Planted:
    state: FinalState
    description: str
    scratch: Path | None = None  # a copy of the workspace holding the error: remove when done

    def cleanup(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _bumped(value: Any) -> Any:
    """The value with one digit changed (a number: one more), or None if it has no digit."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str) and (m := _DIGIT.search(value)):
        return value[: m.start()] + str((int(m.group()) + 1) % 10) + value[m.end():]
    return None


def plant_side_error(state: FinalState, allowances: list[Any]) -> Planted | None:
    """``state`` with one change no allowance covers, or None when none can be made (a task
    with neither app state nor files)."""
    rules = [{"path": a} if isinstance(a, str) else dict(a) for a in allowances]
    if state.initial_apps is not None:
        for apps, what in _app_edits(state.apps, state.initial_apps):
            # held against s0 exactly as the verifier holds it: an edit inside a record the task
            # added, or one whose only trace outside the allowances is the record's save stamp, is no plant
            if side_damage(replace(state, apps=apps, initial_files=None), rules):
                return Planted(replace(state, apps=apps), what)
    if state.initial_files is not None and state.workspace is not None:
        return _plant_in_files(state, rules)
    return None


# -- app state ---------------------------------------------------------------------------------
def _collections(apps: dict[str, Any], initial: dict[str, Any]) -> Iterator[tuple[list, str]]:
    """Every record list of the seeded apps (app order), with its path."""
    def walk(value: Any, path: str) -> Iterator[tuple[list, str]]:
        if isinstance(value, dict):
            for k in sorted(value, key=str):
                yield from walk(value[k], f"{path}.{k}")
        elif isinstance(value, list) and value and identity_key(value, value):
            yield value, path
            for record in value:
                for k in sorted(record, key=str):
                    yield from walk(record[k], f"{path}[{record[identity_key(value, value)]}].{k}")

    for app in sorted(initial):
        if app in apps:
            yield from walk(apps[app], app)


def _app_edits(apps: dict[str, Any], initial: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Candidate states, each with one extra change: first a digit in a record's field (the
    middle record of each collection, then the others), then a copied record added."""
    tries = 0
    found = list(_collections(apps, initial))
    for records, path in found:
        key = identity_key(records, records)
        middle = len(records) // 2
        for i in [middle, *range(len(records))]:
            record = records[i]
            for field in sorted(record, key=str):
                bumped = _bumped(record[field])
                if bumped is None or field == key:
                    continue
                tries += 1
                if tries > MAX_TRIES:
                    break
                edited = copy.deepcopy(apps)
                _locate(edited, path)[i][field] = bumped
                yield edited, f"{path}[{record[key]}].{field}: {record[field]!r} -> {bumped!r}"
                break
    for records, path in found:
        key = identity_key(records, records)
        extra = copy.deepcopy(records[-1])
        extra[key] = f"{extra[key]}-extra" if isinstance(extra[key], str) else max(r[key] for r in records) + 1
        edited = copy.deepcopy(apps)
        _locate(edited, path).append(extra)
        yield edited, f"an extra record in {path} (a copy of {records[-1][key]!r})"


def _locate(apps: dict[str, Any], path: str) -> list:
    value: Any = apps
    for token in re.findall(r"[^.\[\]]+|\[[^\]]*\]", path):
        if token.startswith("["):
            ident = token[1:-1]
            key = identity_key(value, value)
            value = next(r for r in value if str(r[key]) == ident)
        else:
            value = value[token]
    return value


# -- files ---------------------------------------------------------------------------------------
def _plant_in_files(state: FinalState, rules: list[dict[str, Any]]) -> Planted | None:
    scratch = Path(tempfile.mkdtemp(prefix="guiforge-planted-"))
    workspace = scratch / "workspace"
    shutil.copytree(state.workspace, workspace, symlinks=True)
    final = workspace_files(workspace)
    initial = state.initial_files or {}
    # files of s0 only: inside a file the task may add, any content is the task's own
    for rel in sorted(set(final) & set(initial), key=lambda r: (Path(r).suffix.lower() not in _EDITORS, r)):
        editor = _EDITORS.get(Path(rel).suffix.lower(), _edit_text)
        for data, what in editor(final[rel]):
            (workspace / rel).write_bytes(data)
            edited = replace(state, workspace=workspace)
            # held as the verifier holds it: a range whose rows may only move is read in the edit
            resolved = resolve_allowances(edited, rules)
            if any(not allowed(c, resolved) for c in diff_file(rel, initial[rel], data)):
                return Planted(edited, f"{rel}: {what}", scratch)
            (workspace / rel).write_bytes(final[rel])
    name = "notes-extra.txt"  # an extra action: a file nobody asked for
    if allowed(Change("added", (), name, file=name), rules):
        shutil.rmtree(scratch, ignore_errors=True)
        return None
    (workspace / name).write_text("an extra file nobody asked for\n")
    return Planted(replace(state, workspace=workspace), f"an extra file {name}", scratch)


def _edit_text(data: bytes) -> Iterator[tuple[bytes, str]]:
    try:
        lines = data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return
    order = [len(lines) // 2, *range(len(lines))]
    for i in order[:MAX_TRIES]:
        bumped = _bumped(lines[i])
        if bumped is not None:
            yield "".join([*lines[:i], bumped, *lines[i + 1:]]).encode(), f"line {i + 1} {lines[i].strip()!r}"


def _edit_xlsx(data: bytes) -> Iterator[tuple[bytes, str]]:
    # heavy: PIL, lxml, numpy, openpyxl, imported when this runs
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(data))
    cells = [(ws.title, c.coordinate) for ws in wb.worksheets for row in ws.iter_rows() for c in row
             if _bumped(c.value) is not None and not str(c.value).startswith("=")]
    for sheet, coord in [*cells[len(cells) // 2:], *cells[: len(cells) // 2]][:MAX_TRIES]:
        wb = load_workbook(io.BytesIO(data))
        cell = wb[sheet][coord]
        old, cell.value = cell.value, _bumped(cell.value)
        out = io.BytesIO()
        wb.save(out)
        yield out.getvalue(), f"{sheet}!{coord} {old!r} -> {cell.value!r}"


def _edit_docx(data: bytes) -> Iterator[tuple[bytes, str]]:
    """A run of a paragraph or a table cell edited: a digit changed, or (a run with none, such
    as a form's names) words added."""
    # heavy: docx, lxml, imported when this runs
    from docx import Document

    def runs(doc) -> list[tuple[str, Any]]:
        found = [(f"paragraph {p + 1}", run) for p, para in enumerate(doc.paragraphs) for run in para.runs]
        found += [(f"table {t + 1} row {r + 1} cell {c + 1}", run) for t, table in enumerate(doc.tables)
                  for r, row in enumerate(table.rows) for c, cell in enumerate(row.cells)
                  for para in cell.paragraphs for run in para.runs]
        return [(where, run) for where, run in found if run.text.strip()]

    found = runs(Document(io.BytesIO(data)))
    # digits first (the careless slip), then any text, each from the middle of the document on
    order = sorted(range(len(found)), key=lambda i: (not _DIGIT.search(found[i][1].text), i < len(found) // 2, i))
    for i in order[:MAX_TRIES]:
        doc = Document(io.BytesIO(data))
        where, run = runs(doc)[i]
        old = run.text
        run.text = _bumped(old) or old + " (edited)"
        out = io.BytesIO()
        doc.save(out)
        yield out.getvalue(), f"{where} {old!r} -> {run.text!r}"


def _edit_pptx(data: bytes) -> Iterator[tuple[bytes, str]]:
    # heavy: PIL, lxml, pptx, imported when this runs
    from pptx import Presentation

    def runs(deck):
        return [run for slide in deck.slides for shape in slide.shapes if shape.has_text_frame
                for para in shape.text_frame.paragraphs for run in para.runs if run.text.strip()]

    count = len(runs(Presentation(io.BytesIO(data))))
    for i in [*range(count // 2, count), *range(count // 2)][:MAX_TRIES]:
        deck = Presentation(io.BytesIO(data))
        run = runs(deck)[i]
        old = run.text
        run.text = _bumped(old) or old + " (edited)"
        out = io.BytesIO()
        deck.save(out)
        yield out.getvalue(), f"slide text {old!r} -> {run.text!r}"


_EDITORS = {".xlsx": _edit_xlsx, ".docx": _edit_docx, ".pptx": _edit_pptx, ".csv": _edit_text, ".txt": _edit_text,
            ".md": _edit_text}
