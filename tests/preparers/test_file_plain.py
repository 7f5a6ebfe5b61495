"""CSV exports (clean and dirty), Markdown notes and the sum script of terminal tasks."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest

from guiforge.preparers.file_code import BUGS
from guiforge.preparers.files import build_workspace
from guiforge.worlds.consistency import quotes
from guiforge.worlds.sources import data_rows


def _sheet_doc(world):
    return next(d for d in world.documents if d.kind == "spreadsheet" and d.sheets[0].total_column)


def test_clean_csv_is_the_sheet(worlds):
    world = worlds["expense_report"]
    doc = _sheet_doc(world)
    sheet = doc.sheets[0]
    files = build_workspace(world, {"csv": [{"document": doc.document_id, "name": "a.csv"}]}).files
    rows = list(csv.reader(io.StringIO(files["a.csv"].decode())))
    assert rows[0] == sheet.columns
    assert len(rows) == len(sheet.rows) + 1
    for got, want in zip(rows[1:], sheet.rows, strict=True):
        for g, w in zip(got, want, strict=True):
            if isinstance(w, int | float):
                assert float(g) == pytest.approx(w)
            else:
                assert g == (w or "")


def _fix(text: str, dirt) -> str:
    """Undo exactly the reported dirt: what a correct agent would do."""
    lines = text.split("\n")
    drop = {d.line for d in dirt if d.kind in ("duplicate_row", "blank_line")}
    for d in dirt:
        if d.kind in ("number_format", "date_format"):
            row = next(csv.reader([lines[d.line - 1]]))
            row = [d.clean if cell == d.dirty else cell for cell in row]
            out = io.StringIO()
            csv.writer(out, lineterminator="").writerow(row)
            lines[d.line - 1] = out.getvalue()
    return "\n".join(line for i, line in enumerate(lines, start=1) if i not in drop)


@pytest.mark.parametrize("sid", ["expense_report", "freelance_invoicing", "shop_inventory"])
def test_dirty_csv_reports_exactly_what_it_changed(worlds, sid):
    world = worlds[sid]
    doc = _sheet_doc(world)
    spec = {
        "csv": [
            {"document": doc.document_id, "name": "clean.csv"},
            {"document": doc.document_id, "name": "dirty.csv", "dirty": True, "seed": 5},
        ]
    }
    ws = build_workspace(world, spec)
    clean, dirty = ws.files["clean.csv"].decode(), ws.files["dirty.csv"].decode()
    dirt = ws.manifest["dirty.csv"].dirt
    kinds = [d.kind for d in dirt]
    assert kinds.count("duplicate_row") == 1 and kinds.count("blank_line") == 1
    assert kinds.count("number_format") == 2
    lines = dirty.split("\n")
    for d in dirt:
        line = lines[d.line - 1]
        if d.kind == "blank_line":
            assert line == ""
        elif d.kind == "duplicate_row":
            assert line == d.dirty and lines.count(line) == 2
        else:
            assert d.dirty in next(csv.reader([line])) and d.dirty != d.clean
    assert dirty != clean
    assert _fix(dirty, dirt) == clean  # the report is complete and exact


def test_dirt_is_deterministic_per_seed(worlds):
    world = worlds["expense_report"]
    doc = _sheet_doc(world)

    def dirty(seed: int):
        ws = build_workspace(
            world, {"csv": [{"document": doc.document_id, "dirty": True, "seed": seed}]}
        )
        ((name, data),) = ws.files.items()
        return data, ws.manifest[name].dirt

    assert dirty(1) == dirty(1)
    assert {dirty(s)[0] for s in range(4)}.__len__() > 1


def _run(script_dir, script: str) -> str:
    proc = subprocess.run(
        [sys.executable, script],
        cwd=script_dir,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return proc.stdout.strip()


def test_sum_script_prints_the_total_and_each_bug_breaks_it(worlds, tmp_path):
    world = worlds["expense_report"]
    doc = _sheet_doc(world)
    sheet = doc.sheets[0]
    spec = {
        "folder": "work",
        "csv": [{"document": doc.document_id, "name": "data/x.csv"}],
        "code": [{"csv": "data/x.csv", "name": "ok.py"}]
        + [{"csv": "data/x.csv", "name": f"{b}.py", "bug": b} for b in BUGS],
    }
    ws = build_workspace(world, spec)
    for name, data in ws.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    total = sum(r[-1] for r in data_rows(sheet))
    ok = ws.manifest["work/ok.py"].code
    assert ok.expected_output == f"Total {sheet.total_column}: {total:.2f}"
    assert _run(tmp_path, "work/ok.py") == ok.expected_output and ok.bug is None
    for bug in BUGS:
        info = ws.manifest[f"work/{bug}.py"].code
        assert info.command == f"python3 work/{bug}.py"
        printed = _run(tmp_path / "work", f"{bug}.py")  # runs from any folder
        assert printed == info.buggy_output != info.expected_output == ok.expected_output
        script = ws.files[f"work/{bug}.py"].decode().splitlines()
        assert info.bug_line is not None and script[info.bug_line - 1].strip()


def test_random_bug_is_seeded(worlds):
    world = worlds["shop_inventory"]
    doc = _sheet_doc(world)

    def bug(seed: int) -> str:
        ws = build_workspace(
            world,
            {
                "csv": [{"document": doc.document_id, "name": "s.csv"}],
                "code": [{"csv": "s.csv", "bug": "random", "seed": seed}],
            },
        )
        return ws.manifest["compute_total.py"].code.bug

    assert bug(3) == bug(3) in BUGS
    assert len({bug(s) for s in range(8)}) > 1


def test_notes_as_markdown_state_their_cited_facts(worlds):
    for world in worlds.values():
        ws = build_workspace(world, {"notes": "all"})
        assert len(ws.files) == len(world.notes)
        for name, data in ws.files.items():
            note = next(n for n in world.notes if ws.manifest[name].source == f"note:{n.note_id}")
            text = data.decode()
            assert name.startswith("notes/") and text.startswith(f"# {note.title}\n")
            for key in note.cites:
                assert quotes(text, world.fact(key)), f"{name}: {key}"
