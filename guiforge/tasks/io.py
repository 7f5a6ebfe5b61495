"""Export tasks from the lake to JSON files, and import JSON task files into the lake."""

from __future__ import annotations

import json
from pathlib import Path

from guiforge.errors import ConfigError
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.ids import within
from guiforge.lake.store import Lake
from guiforge.lake.writer import SchemaViolation, ShardCommit, commit_shard, to_arrow
from guiforge.tasks.interchange import (
    from_guiforge_json,
    from_osworld,
    to_guiforge_json,
    to_osworld,
)
from guiforge.yamlfile import read_text


def _world(lake: Lake, world_id: str | None, cache: dict[str, str]):
    """The task's world (its files are rebuilt from it); worlds are read once."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.model import World

    if not cache:
        table = lake.read_table("worlds", columns=["world_id", "world_json"])
        cache.update(zip(table.column("world_id").to_pylist(), table.column("world_json").to_pylist(), strict=True))
    js = cache.get(world_id or "")
    return World.model_validate_json(js) if js else None


def _write_files(folder: Path, workspace: dict) -> dict[str, str]:
    """The task's workspace files in the export folder: name -> absolute host path (what
    OSWorld's upload_file step reads)."""
    out = {}
    for name, data in sorted(workspace.items()):
        if isinstance(data, str):
            data = data.encode()
        if not isinstance(data, bytes) or ".." in Path(name).parts or Path(name).is_absolute():
            continue  # only plain files inside the task's folder
        path = within(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out[name] = str(path.resolve())
    return out


def export_tasks(lake: Lake, out: Path, fmt: str = "guiforge", run_id: str | None = None) -> int:
    rows = lake.read_table("tasks", run_id=run_id).to_pylist()
    out.mkdir(parents=True, exist_ok=True)
    worlds: dict[str, str] = {}
    index: dict[str, list[str]] = {}
    for row in rows:
        if fmt == "guiforge":
            path = within(out, f"{row['task_id']}.json")
            path.write_text(json.dumps(to_guiforge_json(row), indent=1, ensure_ascii=False))
            continue
        files = None
        setup = json.loads(row["setup_json"] or "{}")
        if row["domain"] == "desktop" and setup.get("files"):
            world = _world(lake, row["world_id"], worlds)
            if world is not None:
                # heavy: the file preparers (openpyxl, python-pptx, python-docx, reportlab)
                from guiforge.preparers.files import prepare_workspace

                files = _write_files(within(out, "files", row["task_id"]), prepare_workspace(world, setup["files"]))
        task = to_osworld(row, files)
        folder = within(out, "examples", task["snapshot"])
        folder.mkdir(parents=True, exist_ok=True)
        within(folder, f"{task['id']}.json").write_text(json.dumps(task, indent=1, ensure_ascii=False))
        index.setdefault(task["snapshot"], []).append(task["id"])
    if fmt == "osworld":
        (out / "test_all.json").write_text(json.dumps(index, indent=1))
    return len(rows)


MAX_TASK_BYTES = 8 << 20  # a task JSON carries its setup spec, not its files' bytes
DOMAINS = ("web", "mobile", "desktop", "tools")


def read_task_file(path: Path) -> dict:
    """One task JSON file, refused in one line naming the file (and the line or field)."""
    text = read_text(path, "JSON task file", MAX_TASK_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(str(path), "", f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise ConfigError(str(path), "", "nested too deeply to be a task") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", f"a task is a JSON object, not {type(data).__name__}")
    return data


def task_row(path: Path) -> dict:
    """The tasks row of one JSON task file (guiforge or OSWorld shape), checked against the
    tasks table's columns so that nothing malformed reaches the lake."""
    data = read_task_file(path)
    try:
        row = from_osworld(data, str(path)) if "evaluator" in data else from_guiforge_json(data, str(path))
    except (AttributeError, TypeError, KeyError) as exc:  # a field of the wrong shape
        raise ConfigError(str(path), "", f"a field has the wrong shape ({type(exc).__name__}: {exc}); "
                                         "compare it with `guiforge tasks export`") from None
    if row.get("domain") not in DOMAINS:
        raise ConfigError(str(path), "domain", f"{row.get('domain')!r} is not one of {', '.join(DOMAINS)}")
    try:
        to_arrow("tasks", [row], "check")
    except SchemaViolation as exc:
        raise ConfigError(str(path), "", str(exc)) from None
    return row


def import_tasks(lake: Lake, files: list[Path], run_id: str = "imported") -> int:
    rows = [task_row(path) for path in files]
    if rows:
        fp = fingerprint(sorted(r["task_id"] for r in rows))
        # the same ids imported again (edited files): the new rows replace the old, never beside them
        commit_shard(lake, ShardCommit("import", run_id, fp, f"import[{len(rows)}]"), {"tasks": rows}, replace=True)
    return len(rows)
