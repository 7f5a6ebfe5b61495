"""Side damage: whatever changed outside the task's expected change fails the rubric.

Every task's rubric gets one more required criterion, ``no_side_damage``
(:func:`side_damage_criterion`): the final state is compared with s0 (the app state the world
seeded, the workspace files as the preparers wrote them; both carried by
:class:`~guiforge.verify.contract.FinalState`) per app, record and field and per file, cell,
paragraph, slide and line, and every change must be one the task may make. A changed digit in
another record, an extra email, an edited other cell: each is a change nobody asked for.

What a task may change (its *allowances*) is derived from the rubric's own checks (a check on
``mail.sent where {to: X}`` lets sent mail to X appear; ``record_equals ... field: phone`` lets
that record's phone change; ``xlsx_cell_equals`` that cell), plus what the card declares in
``changes:`` for the consequences no check names (a transfer moves account balances; sorting
moves whole rows). An allowance is
- app state: ``"bank.accounts"`` or ``{path, where, fields}`` (``where`` as in the record
  checks, ``fields`` the record fields that may change; a path may end in a field);
- a file: ``{file: <glob>}`` (any change), narrowed by ``cells`` ("Sheet!B3", "B2:B9"),
  ``sheets``, ``slides`` (1-based), ``text`` (each changed unit then states one of these) and
  ``gone`` (or held one of these before), ``added: true`` (new units, e.g. slides, may appear),
  ``rows`` ("Sheet!A2:D9": the range's rows may change order, and only that: its cells may
  change when the final range holds the same rows as s0's, a digit changed in one of them is
  damage; a sort), ``blank: true`` (empty lines may go; a CSV's cleanup).
Changes the environment makes on its own are allowed everywhere: a message marked read when
opened, a thread's unread count cleared, the time stamp of a record the task may change,
LibreOffice's lock files.
"""

from __future__ import annotations

import csv
import fnmatch
import re
from typing import Any

from guiforge.verify.checks import check, mentions, normalize, record_matches
from guiforge.verify.contract import FinalState
from guiforge.verify.file_diff import diff_files, workspace_files, xlsx_units
from guiforge.verify.state_diff import Change, diff_apps

CRITERION_ID = "no_side_damage"
_INDEX = re.compile(r"\[(?:-?\d+|\*)\]")
_KEY = re.compile(r"\[[^\]]*\]")
_STAMPS = frozenset({"updated", "updated_at", "modified", "modified_at", "last_modified", "edited"})


def side_damage_criterion(allowances: list[dict[str, Any]]) -> dict[str, Any]:
    """The automatic rubric criterion (as a rubric dict) with the task's allowances."""
    return {"id": CRITERION_ID, "description": "nothing outside the task's expected change was changed",
            "weight": 1.0, "required": True, "check": {"fn": CRITERION_ID, "changes": allowances}}


# -- what a task may change ----------------------------------------------------------------
_RECORD_CHECKS = ("record_count", "record_equals", "record_mentions")
_STATE_CHECKS = ("state_equals", "state_contains", "state_count", "state_absent", "state_mentions_number")
_TEXT_ARGS = ("text", "value", "label", "row")


def _pattern(path: str) -> str:
    return _INDEX.sub("[*]", path)


def _as_list(value: Any) -> list[Any]:
    return [v for v in (value if isinstance(value, list | tuple) else [value]) if v is not None and v != ""]


def derive_allowances(rubric: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the rubric's checks say may change (see the module docstring); checks that read the
    answer, the terminal or the tool calls allow nothing."""
    out: list[dict[str, Any]] = []
    for criterion in rubric:
        args = dict(criterion.get("check") or {})
        fn = args.pop("fn", "")
        out.extend(_allowances_of(fn, args))
    unique: list[dict[str, Any]] = []
    for a in out:
        if a not in unique:
            unique.append(a)
    return unique


def _allowances_of(fn: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    path = args.get("path")
    if fn in _RECORD_CHECKS and path:
        a: dict[str, Any] = {"path": _pattern(path)}
        if args.get("where"):
            a["where"] = args["where"]
        if args.get("field"):
            a["fields"] = [re.split(r"[.\[]", args["field"], maxsplit=1)[0]]
        return [a]
    if fn in _STATE_CHECKS and path:
        return [{"path": _pattern(path)}]
    if fn == "record_is_extreme" and args.get("target"):
        return [{"path": _pattern(args["target"])}]
    if fn in ("files_exist", "files_absent"):
        return [{"file": p} for p in _as_list(args.get("paths"))]
    if fn == "glob_count":
        return [{"file": p} for p in _as_list(args.get("pattern"))]
    if not path or fn.startswith(("answer_", "terminal_")) or fn in ("status_is", "file_exists"):
        return [{"file": path}] if fn == "file_exists" and path else []
    a = {"file": path}
    if fn in ("xlsx_cell_equals", "xlsx_cell_formula"):
        a["cells"] = [f"{args['sheet']}!{args['cell']}" if args.get("sheet") else str(args["cell"])]
    elif fn == "xlsx_column_equals":
        start = int(args.get("start_row", 2))
        end = start + max(len(args.get("values") or []), 1) - 1
        column = args["column"]
        a["cells"] = [f"{args['sheet'] + '!' if args.get('sheet') else ''}{column}{start}:{column}{end}"]
    elif fn in ("pptx_title_equals", "pptx_chart_values") or (args.get("slide") is not None and fn.startswith(
            ("pptx_", "document_"))):
        a["slides"] = [int(args["slide"]) + 1]
    elif fn == "pptx_slide_count":
        a["added"] = True
    elif fn == "file_lacks":
        a["gone"] = _as_list(args.get("text"))
    elif fn == "csv_dirt_fixed":
        return _dirt_allowances(path, args)
    elif fn == "csv_cell_equals":
        a["text"] = _as_list(args.get("value"))  # the line that holds the cell states its value
    elif fn.startswith(("csv_", "xlsx_")):
        pass  # a cleaned CSV or a new row: the file as a whole; the check reads every row
    else:  # documents, text files: each changed paragraph or line states what the check asks for
        a["text"] = [t for key in _TEXT_ARGS for t in _as_list(args.get(key))]
    return [a]


def _dirt_allowances(path: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """A CSV's cleanup: the lines that held the preparer's dirt (a restyled number or date, a
    duplicated row) may change or go, a changed line may state a clean value, blank lines may
    go; every other line stays as it was."""
    kinds = args.get("kinds")
    dirt = [d for d in args.get("dirt") or [] if isinstance(d, dict) and (kinds is None or d.get("kind") in kinds)]
    a: dict[str, Any] = {"file": path, "gone": [d["dirty"] for d in dirt if str(d.get("dirty") or "").strip()],
                         "text": [d["clean"] for d in dirt if str(d.get("clean") or "").strip()]}
    a["blank"] = any(d.get("kind") == "blank_line" for d in dirt)
    a = {k: v for k, v in a.items() if v}
    return [a] if len(a) > 1 else []  # no dirt of these kinds: the file stays as it is


# -- holding changes against them ------------------------------------------------------------
def _env_change(change: Change) -> bool:
    """Changes the apps make on their own: a message marked read on opening, a thread's unread
    count cleared."""
    if change.kind != "changed" or not change.levels or change.levels[-1].field is None:
        return False
    name = change.path.rsplit(".", 1)[-1]
    return (name == "read" and change.after is True) or (name == "unread" and change.after in (0, False))


def _bookkeeping(change: Change) -> bool:
    return change.kind == "changed" and bool(change.levels) and change.levels[-1].field in _STAMPS


def _state_allows(a: dict[str, Any], change: Change) -> bool:
    allowed = _pattern(a["path"])
    where, fields = a.get("where"), a.get("fields")
    at = _KEY.sub("[*]", change.path)
    whole_record = change.kind in ("added", "removed") and allowed.startswith(at + ".")  # it holds the field
    if not (whole_record or at == allowed or at.startswith((allowed + ".", allowed + "["))):
        return False
    level = next((lv for lv in change.levels if lv.pattern == allowed), None)
    if where and (level is None or not any(r is not None and record_matches(r, where)
                                           for r in (level.before, level.after))):
        return False
    # an existing record may change only in the fields the checks name; a new one is new throughout
    return not (fields and level is not None and level.field is not None and level.field not in fields)


def _in_range(unit: str, spec: str) -> bool:
    sheet, _, cell = unit.rpartition("!")
    want_sheet, _, want = spec.rpartition("!")
    if want_sheet and normalize(want_sheet) != normalize(sheet):
        return False
    if not cell:
        return False
    if ":" not in want:
        return cell.upper() == want.upper()
    (c1, r1), (c2, r2), (c, r) = (_split(x) for x in (*want.split(":", 1), cell))
    return min(c1, c2) <= c <= max(c1, c2) and min(r1, r2) <= r <= max(r1, r2)


def _split(cell: str) -> tuple[int, int]:
    m = re.fullmatch(r"\$?([A-Za-z]+)\$?(\d+)", cell.strip())
    if not m:
        return (-1, -1)
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return col, int(m.group(2))


def _states(text: Any, needle: Any) -> bool:
    if text is None:
        return False
    if isinstance(needle, int | float) and not isinstance(needle, bool):
        return mentions(text, needle, "number")
    return normalize(needle) in normalize(text)


# the keys of a file allowance that narrow it to some of the file (none: the whole file)
NARROWING = ("cells", "sheets", "slides", "text", "gone", "added", "blank")


def _file_allows(a: dict[str, Any], change: Change) -> bool:
    pattern = str(a["file"])
    if not (fnmatch.fnmatch(change.file, pattern) or change.file == pattern):
        return False
    narrowing = [k for k in NARROWING if a.get(k)]
    if not narrowing or change.unit in (None, "file"):
        return True  # the file may change as a whole, or was added or removed as a whole
    unit = change.unit
    if any(_in_range(unit, c) for c in a.get("cells") or []):
        return True
    if any(normalize(unit.split("!", 1)[0]) == normalize(s) for s in a.get("sheets") or []):
        return True
    if any(unit == f"slide {int(s)}" for s in a.get("slides") or []):
        return True
    if a.get("added") and change.kind == "added":
        return True
    if a.get("blank") and change.kind == "removed" and not str(change.before or "").strip():
        return True
    if any(_states(change.after, t) for t in a.get("text") or []):
        return True
    return any(_states(change.before, t) for t in a.get("gone") or [])


def _cells(line: Any) -> list[Any]:
    cells = next(csv.reader([str(line)]), [])
    out: list[Any] = []
    for cell in cells:
        try:
            out.append(float(cell))
        except ValueError:
            out.append(cell.strip())
    return out


def _restyled(change: Change) -> bool:
    """A CSV line that holds the same values written another way ("50.00" as "50", a cell's
    padding gone): a cleanup's restyling, no change of what the file says."""
    if change.kind != "changed" or not str(change.file).lower().endswith(".csv"):
        return False
    a, b = _cells(change.before), _cells(change.after)
    return len(a) == len(b) and all(
        abs(x - y) <= 1e-9 if isinstance(x, float) and isinstance(y, float) else x == y for x, y in zip(a, b, strict=True))


def allowed(change: Change, allowances: list[dict[str, Any]]) -> bool:
    if change.file is not None:
        return _restyled(change) or any(_file_allows(a, change) for a in allowances if "file" in a)
    return _env_change(change) or any(_state_allows(a, change) for a in allowances if "path" in a)


def state_changes(state: FinalState) -> list[Change]:
    """Every change from s0 to the final state: app state where the environment gave its s0,
    workspace files where it gave theirs."""
    if state.initial_apps is None and state.initial_files is None:
        raise ValueError("the environment gave no initial state to compare the final state with")
    changes: list[Change] = []
    if state.initial_apps is not None:
        changes += diff_apps(state.initial_apps, state.apps)
    if state.initial_files is not None:
        final = workspace_files(state.workspace) if state.workspace is not None else {}
        changes += diff_files(state.initial_files, final)
    return changes


def _reordered(state: FinalState, file: str, spec: str) -> bool:
    """Whether range ``spec`` ("Sheet!A2:D9") of xlsx ``file`` holds the same rows in the final
    state as in s0, in any order (a formula's references to its own row read as one)."""
    before = (state.initial_files or {}).get(file)
    path = state.workspace / file if state.workspace is not None else None
    if before is None or path is None or not path.is_file():
        return False
    sheet, _, cells = spec.rpartition("!")
    (c1, r1), (c2, r2) = (_split(x) for x in cells.split(":", 1))

    def rows(data: bytes) -> list[tuple]:
        units = xlsx_units(data)
        if not sheet:  # a range without its sheet is on the first
            first = next((k[:-1] for k in units if k.endswith("!")), "")
            units = {k.removeprefix(first): v for k, v in units.items()}
        out = []
        for r in range(min(r1, r2), max(r1, r2) + 1):
            row = []
            for c in range(min(c1, c2), max(c1, c2) + 1):
                value = units.get(f"{sheet}!{_column(c)}{r}")
                if isinstance(value, str) and value.startswith("="):
                    value = re.sub(rf"(?<=[A-Za-z]){r}(?!\d)", "#", value)
                row.append(round(value, 6) if isinstance(value, float) else value)
            out.append(tuple(row))
        return sorted(out, key=repr)

    return rows(before) == rows(path.read_bytes())


def _column(n: int) -> str:
    letters = ""
    while n:
        n, rest = divmod(n - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def resolve_allowances(state: FinalState, allowances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Allowances with each ``rows`` range read against the files: a range whose rows only
    changed order lets its cells change; one that holds other rows lets nothing."""
    out = []
    for a in allowances:
        if "file" in a and a.get("rows"):
            a = dict(a)
            moved = [spec for spec in a.pop("rows") if _reordered(state, str(a["file"]), spec)]
            if not moved:
                if not any(a.get(k) for k in NARROWING):
                    continue  # nothing else narrows it: without the rows it would allow the whole file
            else:
                a["cells"] = [*(a.get("cells") or []), *moved]
        out.append(a)
    return out


def side_damage(state: FinalState, changes: list[Any] | None = None) -> list[Change]:
    """The changes no allowance covers (``changes``: the criterion's allowances)."""
    allowances = resolve_allowances(state, [{"path": a} if isinstance(a, str) else dict(a) for a in changes or []])
    found = state_changes(state)
    verdicts = [allowed(c, allowances) for c in found]
    # an app stamps a record it saves: its time stamp may change with any allowed change to it
    touched = {c.levels[-1].key for c, ok in zip(found, verdicts, strict=True) if ok and c.levels}
    return [c for c, ok in zip(found, verdicts, strict=True)
            if not ok and not (_bookkeeping(c) and c.levels[-1].key in touched)]


@check(CRITERION_ID)
def no_side_damage(state: FinalState, changes: list[Any] | None = None) -> bool:
    """Nothing changed outside ``changes`` (the task's allowances, see the module docstring)."""
    return not side_damage(state, changes)
