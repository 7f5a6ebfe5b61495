"""Tasks round-trip through guiforge's JSON and OSWorld's task JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guiforge.errors import GuiforgeError
from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.tasks.interchange import (
    from_guiforge_json,
    from_osworld,
    to_guiforge_json,
    to_osworld,
)
from guiforge.tasks.io import export_tasks, import_tasks


def row(task_id: str, domain: str = "desktop", feasible: bool = True) -> dict:
    return {
        "task_id": task_id, "world_id": "wld_1", "skill_id": "calc.fill_total", "skill_version": "2",
        "domain": domain, "variant": "gui" if domain == "desktop" else None, "apps": ["calc"],
        "instruction": "Put the total into B9 of report.xlsx and save it.", "answer": None,
        "setup_json": json.dumps({"files": {"documents": ["report"]}, "open": "report.xlsx"}),
        "rubric_json": json.dumps([{"id": "total", "description": "", "weight": 1.0, "required": True,
                                    "check": {"fn": "xlsx_cell_equals", "path": "report.xlsx", "cell": "B9", "value": 412.5}}]),
        "reference_json": json.dumps([{"do": "hotkey", "keys": ["ctrl", "s"]}]),
        "binding_json": json.dumps({"binding": {"doc": "document_id=report"}}), "gate_json": json.dumps({"package": {"passed": True}}),
        "feasible": feasible, "difficulty": "easy", "max_steps": 10, "parent_task_id": None, "round": 0,
        "author_model": None, "prompt_hash": None, "diagnosis_id": None, "presentation_json": None,
    }


def test_guiforge_json_is_lossless():
    original = row("tsk_1")
    assert from_guiforge_json(json.loads(json.dumps(to_guiforge_json(original)))) == original


def test_osworld_shape_and_round_trip():
    original = row("tsk_2")
    task = to_osworld(original, files={"report.xlsx": "/exports/files/tsk_2/report.xlsx"})
    assert set(task) >= {"id", "snapshot", "instruction", "source", "config", "related_apps", "evaluator"}
    assert task["snapshot"] == "libreoffice_calc" and task["related_apps"] == ["libreoffice_calc"]
    upload, opened = task["config"]
    assert upload == {"type": "upload_file", "parameters": {"files": [
        {"local_path": "/exports/files/tsk_2/report.xlsx", "path": "/home/user/report.xlsx"}]}}
    assert opened == {"type": "open", "parameters": {"path": "/home/user/report.xlsx"}}
    # the cell check has an OSWorld metric: compare_table's check_cell rule on the VM's file
    evaluator = task["evaluator"]
    assert evaluator["func"] == "compare_table" and evaluator["result"] == {
        "type": "vm_file", "path": "/home/user/report.xlsx", "dest": "report.xlsx"}
    assert evaluator["options"]["rules"] == [{"type": "check_cell", "sheet_idx": 0, "coordinate": "B9",
                                              "props": {"value": {"method": "approx:0.005", "ref": 412.5}}}]
    assert from_osworld(json.loads(json.dumps(task))) == original


def test_infeasible_tasks_use_osworlds_own_evaluator():
    assert to_osworld(row("tsk_3", feasible=False))["evaluator"] == {"func": "infeasible"}
    foreign = {"id": "abc", "snapshot": "chrome", "instruction": "Install the moon.", "config": [],
               "related_apps": ["chrome"], "evaluator": {"func": "infeasible"}}
    imported = from_osworld(foreign)
    assert imported["feasible"] is False and json.loads(imported["reference_json"]) == [{"do": "terminate", "status": "infeasible"}]


def test_foreign_evaluators_are_refused_with_the_field():
    foreign = {"id": "x", "instruction": "y", "evaluator": {"func": "compare_table"}}
    with pytest.raises(GuiforgeError, match="evaluator.func: 'compare_table'"):
        from_osworld(foreign, "task.json")


def test_export_and_import_through_the_lake(tmp_path):
    lake = Lake(tmp_path / "lake")
    rows = [row("tsk_a", "web"), row("tsk_b", "web", feasible=False)]
    commit_shard(lake, ShardCommit("task_gates", "r1", "fp", "k"), {"tasks": rows})
    for fmt in ("guiforge", "osworld"):
        out = tmp_path / fmt
        assert export_tasks(lake, out, fmt) == 2
        files = sorted(out.rglob("tsk_*.json"))
        other = Lake(tmp_path / f"lake-{fmt}")
        assert import_tasks(other, files) == 2
        back = sorted(other.read_table("tasks").drop(["run_id"]).to_pylist(), key=lambda r: r["task_id"])
        assert back == sorted(rows, key=lambda r: r["task_id"])
    assert json.loads((tmp_path / "osworld" / "test_all.json").read_text()) == {"guiforge-web": ["tsk_a", "tsk_b"]}


def test_rubrics_map_onto_osworld_metrics_only_when_every_check_has_one():
    from guiforge.tasks.osworld_eval import osworld_evaluator

    cell = {"id": "total", "required": True, "check": {"fn": "xlsx_cell_equals", "path": "a.xlsx", "cell": "B2",
                                                        "value": "Paid"}}
    text = {"id": "note", "required": True, "check": {"fn": "file_contains", "path": "notes/todo.md",
                                                       "text": ["Call Ana"]}}
    both = osworld_evaluator([cell, text])
    assert both["func"] == ["compare_table", "check_include_exclude"] and both["conj"] == "and"
    assert both["options"][0]["rules"][0]["props"]["value"] == {"method": "eq", "ref": "Paid"}
    assert both["result"][1] == {"type": "vm_command_line", "command": ["bash", "-c", "cat /home/user/notes/todo.md"]}
    assert both["expected"][1] == {"type": "rule", "rules": {"include": ["Call Ana"], "exclude": []}}
    slides = {"id": "title", "required": True, "check": {"fn": "pptx_title_equals", "path": "d.pptx", "value": "Q3"}}
    assert osworld_evaluator([cell, slides]) is None  # a partial mapping would change what success means
    desktop = to_osworld({**row("tsk_4"), "rubric_json": json.dumps([slides])})
    assert desktop["evaluator"]["func"] == "guiforge_rubric"


def test_osworld_export_puts_a_desktop_tasks_files_in_the_folder(tmp_path):
    from guiforge.skills.check import sample_worlds

    world = sample_worlds(1)[0]
    sheet = next(d for d in world.documents if d.filename.endswith(".xlsx"))
    lake = Lake(tmp_path / "lake")
    commit_shard(lake, ShardCommit("worlds", "r1", "fpw", "w"), {"worlds": [
        {"world_id": world.world_id, "persona_id": world.persona_id, "scenario": world.scenario,
         "world_json": world.model_dump_json()}]})
    task = {**row("tsk_d"), "world_id": world.world_id,
            "setup_json": json.dumps({"files": {"documents": [sheet.document_id]}, "open": sheet.filename})}
    commit_shard(lake, ShardCommit("task_gates", "r1", "fpt", "t"), {"tasks": [task]})
    out = tmp_path / "osworld"
    assert export_tasks(lake, out, "osworld") == 1
    exported = json.loads((out / "examples" / "libreoffice_calc" / "tsk_d.json").read_text())
    upload, opened = exported["config"]
    files = upload["parameters"]["files"]
    assert upload["type"] == "upload_file" and files
    for f in files:  # every file the config names exists, inside the export folder, and opens
        local = Path(f["local_path"])
        assert local.is_file() and local.is_relative_to(out.resolve() / "files" / "tsk_d")
        assert f["path"] == f"/home/user/{local.relative_to(out.resolve() / 'files' / 'tsk_d')}"
    from openpyxl import load_workbook

    assert load_workbook(out / "files" / "tsk_d" / sheet.filename).sheetnames
    assert opened == {"type": "open", "parameters": {"path": f"/home/user/{sheet.filename}"}}


# -- task files are data: no host files, no paths out of the export folder ----------------


def _task_file(tmp_path: Path, **changes) -> Path:
    data = {**to_guiforge_json(row("tsk_ok", "tools")), **changes}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(data))
    return path


def test_importing_edited_tasks_again_replaces_them(tmp_path):
    lake = Lake(tmp_path / "lake")
    assert import_tasks(lake, [_task_file(tmp_path)]) == 1
    assert import_tasks(lake, [_task_file(tmp_path, instruction="Put the new total into B9.")]) == 1
    assert lake.read_table("tasks").column("instruction").to_pylist() == ["Put the new total into B9."]


@pytest.mark.parametrize("bad", ["../../x", "/etc/x", "a/b", "..", ".hidden", "x" * 200, ""])
def test_import_refuses_ids_that_are_not_lake_ids(tmp_path, bad):
    lake = Lake(tmp_path / "lake")
    with pytest.raises(GuiforgeError, match=r"task\.json: task_id: .*(not a valid id|required field)"):
        import_tasks(lake, [_task_file(tmp_path, task_id=bad)])
    with pytest.raises(GuiforgeError, match=r"task\.json: (world_id|parent_task_id): .*not a valid id"):
        import_tasks(lake, [_task_file(tmp_path, world_id=bad or "..", parent_task_id=bad or "..")])
    osworld = tmp_path / "osworld.json"
    osworld.write_text(json.dumps({"id": bad or "..", "instruction": "x", "evaluator": {"func": "infeasible"}}))
    with pytest.raises(GuiforgeError, match=r"osworld\.json: task_id: .*not a valid id"):
        import_tasks(lake, [osworld])
    assert not (tmp_path / "lake" / "tasks").exists()


def test_import_refuses_a_task_that_names_host_files(tmp_path):
    lake = Lake(tmp_path / "lake")
    for setup in ({"files": {"key": {"copy_from": "/root/.ssh/id_rsa"}}},
                  {"files": {"documents": [], "extra": {"a.txt": "x"}}, "more": [{"copy_from": "/etc/shadow"}]}):
        with pytest.raises(GuiforgeError, match=r"task\.json: setup\.[a-z.\[\]0-9]*copy_from: a task file cannot name host files"):
            import_tasks(lake, [_task_file(tmp_path, setup=setup)])
    with pytest.raises(GuiforgeError, match=r"task\.json: setup\.files: workspace spec"):
        import_tasks(lake, [_task_file(tmp_path, setup={"files": {"key": {"path": "/etc/shadow"}}})])
    # inline text rides in the preparers' recipe and imports
    assert import_tasks(lake, [_task_file(tmp_path, setup={"files": {"extra": {"notes.txt": "hello"}}})]) == 1


def test_export_never_writes_outside_its_folder(tmp_path):
    """Rows that reached the lake some other way (an older import, a plugin stage) still
    cannot steer an export out of OUT: neither by task_id nor by an app name."""
    lake = Lake(tmp_path / "lake")
    commit_shard(lake, ShardCommit("task_gates", "r1", "fp1", "a"), {"tasks": [row("../../escaped", "web")]})
    out = tmp_path / "deep" / "out"
    for fmt in ("guiforge", "osworld"):
        with pytest.raises(GuiforgeError, match="outside"):
            export_tasks(lake, out, fmt)
    evil_app = {**row("tsk_app"), "apps": ["../../../escaped-app"]}
    other = Lake(tmp_path / "lake2")
    commit_shard(other, ShardCommit("task_gates", "r1", "fp2", "b"), {"tasks": [evil_app]})
    with pytest.raises(GuiforgeError, match="outside"):
        export_tasks(other, out, "osworld")
    assert not [p for p in tmp_path.rglob("*escaped*")], "an export wrote outside its folder"
