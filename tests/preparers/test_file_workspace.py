"""Workspace specs: same world -> same bytes, whatever the clock says; bad specs fail with
one line that names the entry."""

from __future__ import annotations

import hashlib
import time

import pytest

from guiforge.preparers.files import WorkspaceSpec, build_workspace, prepare_workspace

EVERYTHING = {
    "documents": [
        "reg_invoice",
        "itinerary",
        "travel_budget",
        {"document": "talk_slides", "figures": [{"document": "travel_budget"}]},
        {"document": "reg_invoice", "format": "xlsx"},
        {"document": "reg_invoice", "format": "docx"},
        {"document": "itinerary", "format": "md"},
        {"document": "schedule", "format": "txt"},
    ],
    "csv": [{"document": "travel_budget", "dirty": True, "seed": 2}],
    "notes": "all",
    "code": [{"csv": "travel_budget.csv", "column": "Amount", "name": "tools/total.py"}],
    "extra": {"README.txt": "Budget files for the trip.\n"},
}


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}


def test_same_world_gives_same_bytes(worlds):
    world = worlds["conference_trip"]
    first = _digests(prepare_workspace(world, EVERYTHING))
    # zip entry dates have 2-second resolution: a leaked clock would show after this pause
    time.sleep(2.1)
    second = _digests(prepare_workspace(world, WorkspaceSpec.model_validate(EVERYTHING)))
    assert first == second
    exts = {name.rsplit(".", 1)[1] for name in first}
    assert exts == {"pdf", "xlsx", "pptx", "docx", "md", "txt", "csv", "py"}


def test_all_documents_never_collide(worlds):
    """Two documents of one world may share a filename (two contractors named alike)."""
    world = worlds["renovation_quotes"]
    twin = world.documents[0].model_copy(update={"document_id": "twin", "title": "Copy"})
    world = world.model_copy(update={"documents": [*world.documents, twin]})
    files = prepare_workspace(world, {"documents": "all"})
    stem, ext = twin.filename.rsplit(".", 1)
    assert len(files) == len(world.documents) and f"{stem}_twin.{ext}" in files


def test_another_world_gives_other_bytes(worlds):
    spec = {"documents": "all"}
    a = _digests(prepare_workspace(worlds["team_offsite"], spec))
    b = _digests(prepare_workspace(worlds["renovation_quotes"], spec))
    assert not set(a.values()) & set(b.values())


def test_folder_and_default_names(worlds):
    world = worlds["expense_report"]
    ws = build_workspace(
        world,
        {
            "folder": "Documents",
            "documents": "all",
            "notes": "all",
            "csv": [{"document": "exp_claim", "sheet": "Details"}],
        },
    )
    names = set(ws.files)
    assert {f"Documents/{d.filename}" for d in world.documents} <= names
    assert any(n.startswith("Documents/notes/") and n.endswith(".md") for n in names)
    stem = next(d for d in world.documents if d.document_id == "exp_claim").filename[:-5]
    assert f"Documents/{stem}_details.csv" in names


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"documents": ["nope"]}, "documents[0] (nope): world "),
        (
            {"documents": [{"document": "doc_policy", "format": "xlsx"}]},
            "cannot be written as xlsx; use one of docx, md, pdf, txt",
        ),
        ({"documents": [{"document": "exp_claim", "name": "../x.xlsx"}]}, "must be relative"),
        ({"documents": ["exp_claim", "exp_claim"]}, "a second file named"),
        ({"csv": [{"document": "exp_claim", "sheet": "Nope"}]}, "has no sheet 'Nope'"),
        ({"code": [{"csv": "missing.csv"}]}, "is not a csv entry of this spec"),
        ({"notes": ["nope"]}, "has no note 'nope'"),
        (
            {"documents": [{"document": "exp_claim", "fromat": "pdf"}]},
            "documents.0.fromat: Extra inputs are not permitted",
        ),
    ],
)
def test_bad_specs_fail_with_one_line(worlds, spec, message):
    with pytest.raises(ValueError) as err:
        build_workspace(worlds["expense_report"], spec)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
