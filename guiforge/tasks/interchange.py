"""Tasks in and out of the lake: guiforge's own JSON (lossless) and OSWorld's task JSON
(``id, snapshot, instruction, source, config, related_apps, evaluator``).

OSWorld's evaluator names a metric: a rubric whose every check has an OSWorld metric maps
onto OSWorld's ``func`` / ``result`` / ``expected`` (``tasks/osworld_eval.py``); any other is
carried as the function ``guiforge_rubric`` with the criteria as its expected rule, and
infeasible tasks use OSWorld's own ``infeasible`` evaluator. Desktop files are written into
the export folder and reach the VM through OSWorld's ``upload_file`` config step
(``local_path`` on the host, ``path`` in the VM), then ``open``. The full guiforge task
rides along under ``guiforge`` so that an export imports back exactly.
"""

from __future__ import annotations

import json
from typing import Any

from guiforge.errors import GuiforgeError
from guiforge.lake.ids import check_id
from guiforge.tasks.osworld_eval import osworld_evaluator

FORMAT = "guiforge.task/1"
JSON_COLUMNS = ("setup", "rubric", "reference", "binding", "gate", "presentation")
SCALARS = ("task_id", "world_id", "skill_id", "skill_version", "domain", "variant", "apps", "instruction", "answer",
           "feasible", "difficulty", "max_steps", "parent_task_id", "round", "author_model", "prompt_hash",
           "diagnosis_id")
SNAPSHOTS = {"web": "guiforge-web", "mobile": "guiforge-mobile", "tools": "guiforge-tools"}
DESKTOP_APPS = {"calc": "libreoffice_calc", "impress": "libreoffice_impress", "writer": "libreoffice_writer",
                "terminal": "terminal"}


def to_guiforge_json(row: dict[str, Any]) -> dict[str, Any]:
    out = {"format": FORMAT, **{k: row.get(k) for k in SCALARS}}
    for name in JSON_COLUMNS:
        raw = row.get(f"{name}_json")
        out[name] = json.loads(raw) if raw else None
    out["apps"] = list(out["apps"] or [])
    return out


def from_guiforge_json(data: dict[str, Any], source: str = "<json>") -> dict[str, Any]:
    if data.get("format") != FORMAT:
        raise GuiforgeError(f"{source}: format: expected {FORMAT!r}, got {data.get('format')!r}")
    missing = [k for k in ("task_id", "domain", "instruction") if not data.get(k)]
    if missing:
        raise GuiforgeError(f"{source}: {missing[0]}: required field is missing")
    for field in ("task_id", "world_id", "parent_task_id"):
        if data.get(field) is not None:
            check_id(data[field], field, source)
    _check_setup(data.get("setup"), source)
    row = {k: data.get(k) for k in SCALARS}
    for name in JSON_COLUMNS:
        row[f"{name}_json"] = json.dumps(data[name]) if data.get(name) is not None else None
    return row


def _check_setup(setup: Any, source: str) -> None:
    """A task file's setup is data: it may not name host files (a ``copy_from`` would put
    ``/etc/shadow`` or an SSH key into the agent's workspace), and its files are the
    preparers' recipe over the world, literal text included (``files.extra``)."""
    if setup is None:
        return
    if not isinstance(setup, dict):
        raise GuiforgeError(f"{source}: setup: expected an object, got {type(setup).__name__}")
    where = _host_reference(setup, "setup")
    if where:
        raise GuiforgeError(f"{source}: {where}: a task file cannot name host files; carry the content in "
                            "the task (setup.files.extra for text) or let the preparers build it from the world")
    if setup.get("files") is not None:
        # heavy (openpyxl, reportlab, python-docx): only a task file with files pays for it
        from guiforge.preparers.files import parse_spec

        try:
            parse_spec(setup["files"])
        except ValueError as exc:
            raise GuiforgeError(f"{source}: setup.files: {exc}") from None


def _host_reference(value: Any, where: str) -> str | None:
    """Where in ``value`` a host file is named (a ``copy_from`` key), if anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "copy_from":
                return f"{where}.{key}"
            found = _host_reference(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _host_reference(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _config(task: dict[str, Any], files: dict[str, str] | None) -> list[dict[str, Any]]:
    setup = task.get("setup") or {}
    if task["domain"] == "desktop" and files:
        steps: list[dict[str, Any]] = [{"type": "upload_file", "parameters": {"files": [
            {"local_path": local, "path": f"/home/user/{name}"} for name, local in sorted(files.items())]}}]
        if setup.get("open"):
            steps.append({"type": "open", "parameters": {"path": f"/home/user/{setup['open']}"}})
        return steps
    return [{"type": "guiforge_setup", "parameters": {"domain": task["domain"], "world_id": task.get("world_id"),
                                                       "setup": setup}}]


def to_osworld(row: dict[str, Any], files: dict[str, str] | None = None) -> dict[str, Any]:
    """``files``: the task's workspace files, name -> where the export wrote it on the host."""
    task = to_guiforge_json(row)
    mapped = osworld_evaluator(task["rubric"]) if task["domain"] == "desktop" else None
    if task["feasible"] is False:
        evaluator: dict[str, Any] = {"func": "infeasible"}
    elif mapped is not None:
        evaluator = mapped
    else:
        evaluator = {"func": "guiforge_rubric", "result": {"type": "guiforge_final_state"},
                     "expected": {"type": "rule", "rules": {"rubric": task["rubric"], "answer": task["answer"]}}}
    apps = [DESKTOP_APPS.get(a, a) for a in task["apps"]] if task["domain"] == "desktop" else task["apps"]
    return {
        "id": task["task_id"],
        "snapshot": SNAPSHOTS.get(task["domain"], apps[0] if apps else "desktop"),
        "instruction": task["instruction"],
        "source": f"guiforge:{task['skill_id']}@{task['skill_version']}",
        "config": _config(task, files),
        "trajectory": "trajectories/",
        "related_apps": apps,
        "evaluator": evaluator,
        "proxy": False,
        "fixed_ip": False,
        "possibility_of_env_change": "low",
        "guiforge": task,
    }


def from_osworld(data: dict[str, Any], source: str = "<osworld>") -> dict[str, Any]:
    """An OSWorld task exported by guiforge imports exactly; a foreign one imports when its
    evaluator is ``infeasible`` (its other evaluators are OSWorld functions guiforge's
    verifier does not run)."""
    for key in ("id", "instruction", "evaluator"):
        if key not in data:
            raise GuiforgeError(f"{source}: {key}: required OSWorld field is missing")
    if isinstance(data.get("guiforge"), dict):
        row = from_guiforge_json(data["guiforge"], source)
        if row["task_id"] != data["id"] or row["instruction"] != data["instruction"]:
            raise GuiforgeError(f"{source}: id/instruction differ from the embedded guiforge task; edit one, not both")
        return row
    func = data["evaluator"].get("func")
    if func != "infeasible":
        raise GuiforgeError(f"{source}: evaluator.func: {func!r} is an OSWorld function guiforge cannot verify; "
                            "only guiforge exports and infeasible tasks import")
    apps = list(data.get("related_apps") or [])
    return from_guiforge_json({
        "format": FORMAT, "task_id": data["id"], "world_id": None, "skill_id": f"osworld.{data.get('snapshot', 'task')}",
        "skill_version": "1", "domain": "desktop", "variant": "gui", "apps": apps, "instruction": data["instruction"],
        "answer": None, "feasible": False, "difficulty": "medium", "max_steps": 15, "parent_task_id": None,
        "round": 0, "author_model": None, "prompt_hash": None, "setup": {"osworld_config": data.get("config", [])},
        "rubric": [], "reference": [{"do": "terminate", "status": "infeasible"}], "binding": None, "gate": None,
    }, source)
