"""The file gate passes a prepared workspace and catches a missing file, a corrupt or
truncated file of each format, and a file lacking a fact."""

from __future__ import annotations

import io
import zipfile

import pytest

from guiforge.gates.file_gate import check_files
from guiforge.preparers.files import build_workspace
from guiforge.worlds.model import Fact


@pytest.fixture(scope="module")
def prepared(worlds, stated_facts):
    """A workspace with every document of the expense world in its own format, plus the
    facts each file states: (world, files, [(path, Fact)])."""
    world = worlds["expense_report"]
    ws = build_workspace(
        world,
        {
            "documents": "all",
            "notes": "all",
            "csv": [{"document": "exp_claim", "name": "claim.csv"}],
        },
    )
    refs = []
    for name, info in ws.manifest.items():
        if info.source.startswith("doc:"):
            refs += [(name, f) for f in stated_facts(world, info.source[4:])]
    assert len(refs) >= 4
    return world, ws.files, refs


def test_prepared_workspace_passes(prepared):
    world, files, refs = prepared
    note = next(n for n in files if n.startswith("notes/"))
    cited = [world.fact(k) for k in world.notes[0].cites]
    assert check_files(files, [*refs, *cited, (note, "to do")], list(files)) == []


def test_missing_file(prepared):
    _, files, refs = prepared
    name = refs[0][0]
    rest = {k: v for k, v in files.items() if k != name}
    problems = check_files(rest, refs, [name])
    assert problems == [f"{name}: missing (the task refers to it but the workspace lacks it)"]


def _flip_member(data: bytes, member_suffix: str) -> bytes:
    """Corrupt one zip member's compressed bytes without touching the zip directory."""
    z = zipfile.ZipFile(io.BytesIO(data))
    info = next(i for i in z.infolist() if i.filename.endswith(member_suffix))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    mid = start + info.compress_size // 2
    return data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1 :]


@pytest.mark.parametrize("how", ["truncated", "flipped", "garbage"])
def test_corrupt_files_of_every_format(prepared, worlds, how):
    world, files, _ = prepared
    slides = build_workspace(worlds["conference_trip"], {"documents": ["talk_slides"]}).files
    all_files = {**files, **slides}
    targets = [n for n in all_files if n.endswith((".xlsx", ".docx", ".pptx", ".pdf"))]
    assert {n.rsplit(".", 1)[1] for n in targets} == {"xlsx", "docx", "pptx", "pdf"}
    for name in targets:
        data = all_files[name]
        if how == "truncated":
            bad = data[: len(data) * 2 // 3]
        elif how == "garbage":
            bad = b"this is not a document\n" * 20
        elif name.endswith(".pdf"):  # one byte of the first compressed stream
            at = data.find(b"stream\n", data.find(b"/FlateDecode")) + 60
            bad = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
        else:
            bad = _flip_member(
                data,
                "document.xml"
                if name.endswith(".docx")
                else "slide1.xml"
                if name.endswith(".pptx")
                else "sheet1.xml",
            )
        problems = check_files({name: bad}, [], [name])
        assert len(problems) == 1 and problems[0].startswith(f"{name}: "), (how, name, problems)
        assert "\n" not in problems[0]


def test_file_lacking_a_fact(prepared):
    world, files, refs = prepared
    name, fact = refs[0]
    wrong = fact.model_copy(update={"value": 987654.32, "kind": "money"})
    assert check_files(files, [(name, wrong)], [name]) == [
        f"{name}: does not state fact {fact.key} = 987654.32 (money)"
    ]
    assert check_files(files, [(name, "no such words")], []) == [
        f"{name}: does not contain 'no such words'"
    ]
    stray = Fact(key="stray", value="Flux capacitor", kind="text")
    (problem,) = check_files(files, [stray], [name])
    assert problem == f"{name}: none states fact stray = 'Flux capacitor'"


def test_unknown_extension_and_empty_file():
    problems = check_files({"a.bin": b"\x00\x01", "b.csv": b""}, [], ["a.bin", "b.csv"])
    assert problems == ["a.bin: no reader for .bin", "b.csv: the file is empty"]
