"""Small code files for terminal tasks: a Python script that adds up one column of a CSV the
workspace holds, optionally with one deliberate bug. The preparer knows what the correct
script prints and what the buggy one prints, so a rubric can check the fix by running it."""

from __future__ import annotations

import json
import posixpath
import random
from typing import Literal

from pydantic import BaseModel

from guiforge.preparers.file_common import total_label_column
from guiforge.worlds.model import Document, Sheet
from guiforge.worlds.sources import data_rows

Bug = Literal["skips_first_row", "counts_total_row", "truncates_cents"]
BUGS: dict[str, str] = {
    "skips_first_row": "the loop starts at the second data row, so the first row is never added",
    "counts_total_row": "the sheet's own total row is not skipped, so the total is counted twice",
    "truncates_cents": "each amount goes through int(), so the cents are dropped",
}


class CodeInfo(BaseModel):
    name: str
    csv: str
    column: str
    command: str  # how to run it from the workspace root
    expected_output: str  # what the correct script prints
    bug: Bug | None = None
    bug_description: str = ""
    bug_line: int | None = None  # 1-based line of the bug in the script
    buggy_output: str | None = None  # what this script prints as written


TEMPLATE = '''\
"""Add up the "{column}" column of {csv_base} and print the total."""

import csv
import sys
from pathlib import Path

CSV_PATH = Path(__file__).parent / {csv_lit}
COLUMN = {column_lit}
{label_block}

def read_amounts(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    amounts = []
    for row in {rows_expr}:
{skip_block}        if not row[COLUMN]:
            continue
        amounts.append({convert})
    return amounts


def main():
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else CSV_PATH
    total = sum(read_amounts(path))
    print(f"Total {{COLUMN}}: {{total:.2f}}")


if __name__ == "__main__":
    main()
'''


def sum_script(
    doc: Document,
    sheet: Sheet,
    column: str,
    script: str,
    csv_name: str,
    bug: Bug | Literal["random"] | None,
    seed: int = 0,
    total_row: bool = True,
) -> tuple[bytes, CodeInfo]:
    """The script at workspace path ``script`` summing ``column`` of the CSV at ``csv_name``
    (written from ``sheet``; ``total_row`` says whether that CSV kept the total row)."""
    if column not in sheet.columns:
        raise ValueError(
            f"sheet {sheet.name!r} of {doc.document_id} has no column {column!r} "
            f"(have: {', '.join(sheet.columns)})"
        )
    col = sheet.columns.index(column)
    values = [r[col] for r in data_rows(sheet) if r[col] is not None]
    if not values or not all(isinstance(v, int | float) for v in values):
        raise ValueError(f"column {column!r} of {doc.document_id}/{sheet.name} is not all numbers")
    nums = [float(v) for v in values]  # type: ignore[arg-type]
    label_col = total_label_column(sheet)
    has_total = total_row and sheet.total_column is not None and label_col is not None
    total_cell = float(sheet.rows[-1][col] or 0) if has_total else 0.0  # type: ignore[arg-type]
    outputs = {
        None: _printed(column, nums),
        "skips_first_row": _printed(column, nums[1:]),
        "counts_total_row": _printed(column, [*nums, total_cell]) if has_total else None,
        "truncates_cents": _printed(column, [float(int(x)) for x in nums]),
    }
    expected = outputs[None]
    if bug == "random":
        usable = sorted(b for b in BUGS if outputs[b] not in (None, expected))
        if not usable:
            raise ValueError(f"no bug changes the output of {column!r} in {doc.document_id}")
        bug = random.Random(f"{seed}:{doc.document_id}:{sheet.name}:{column}").choice(usable)
    if bug is not None and outputs[bug] in (None, expected):
        raise ValueError(
            f"bug {bug!r} would not change what the script prints for this sheet; "
            "pick another bug or 'random'"
        )
    label_block = ""
    skip_block = ""
    if has_total:
        assert label_col is not None
        label_block = (
            f"LABEL_COLUMN = {json.dumps(sheet.columns[label_col], ensure_ascii=False)}\n"
            f"TOTAL_LABEL = {json.dumps(sheet.rows[-1][label_col], ensure_ascii=False)}  # the total row\n"
        )
        if bug != "counts_total_row":
            skip_block = "        if row[LABEL_COLUMN] == TOTAL_LABEL:\n            continue\n"
    rel = posixpath.relpath(csv_name, posixpath.dirname(script) or ".")
    text = TEMPLATE.format(
        column=column,
        column_lit=json.dumps(column, ensure_ascii=False),
        csv_base=posixpath.basename(csv_name),
        csv_lit=json.dumps(rel, ensure_ascii=False),
        label_block=label_block,
        skip_block=skip_block,
        rows_expr="rows[1:]" if bug == "skips_first_row" else "rows",
        convert="int(float(row[COLUMN]))" if bug == "truncates_cents" else "float(row[COLUMN])",
    )
    info = CodeInfo(
        name=script,
        csv=csv_name,
        column=column,
        command=f"python3 {script}",
        expected_output=expected,
        bug=bug,
        bug_description=BUGS.get(bug or "", ""),
        bug_line=_bug_line(text, bug),
        buggy_output=outputs[bug] if bug else None,
    )
    return text.encode("utf-8"), info


def _printed(column: str, nums: list[float]) -> str:
    return f"Total {column}: {sum(nums):.2f}"  # the same float arithmetic the script does


def _bug_line(text: str, bug: str | None) -> int | None:
    marker = {
        "skips_first_row": "rows[1:]",
        "truncates_cents": "int(float(",
        "counts_total_row": "if not row[COLUMN]",
    }.get(bug or "")
    if marker is None:
        return None
    return next(i for i, line in enumerate(text.splitlines(), start=1) if marker in line)
