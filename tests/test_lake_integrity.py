"""`lake check` finds every kind of damage, `lake gc` cannot be led into deleting a shard a
manifest names, and `run` and `export` stop with one line on a shard that does not match its
manifest: each case from the issue, through the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.lake.check import check_lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

SMALL = {"name": "integrity", "seed": 3, "workers": 2,
         "models": {"world_builder": {"provider": "offline"}},
         "stages": {"personas": {"count": 12, "shard_size": 4}, "worlds": {}}}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=300)


def one_line(done: subprocess.CompletedProcess, code: int = 2) -> str:
    """The one error line (`run` prints its header first), which ends the output."""
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == code, text
    assert "Traceback" not in text, text
    lines = [x for x in text.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error")]
    assert len(errors) == 1 and errors[0] == lines[-1], text
    return lines[-1]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pristine") / "lake"
    run_pipeline(build_pipeline(SMALL, "t.yaml", lake=str(root), run_id="r"), executor="local")
    return root


@pytest.fixture
def lake_dir(pristine, tmp_path) -> Path:
    copy = tmp_path / "lake"
    shutil.copytree(pristine, copy)
    return copy


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(SMALL))
    return path


def manifests(lake_dir: Path, stage: str) -> list[Path]:
    return sorted((lake_dir / "_manifest" / "run=r" / stage).glob("*.json"))


def rows(lake_dir: Path) -> dict[str, list]:
    lake = Lake(lake_dir)
    return {t: sorted(map(str, lake.read_table(t).to_pylist())) for t in ("personas", "worlds")}


def test_two_entries_naming_one_file_are_reported_and_gc_deletes_no_shard(lake_dir, pristine):
    first, second = manifests(lake_dir, "personas")[:2]
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    own = lake_dir / b["outputs"]["personas"]["path"]
    b["outputs"]["personas"]["path"] = a["outputs"]["personas"]["path"]  # a hand edit, or a bad copy
    second.write_text(json.dumps(b))

    check = cli("lake", "check", "--lake", str(lake_dir))
    assert check.returncode == 1, check.stdout
    assert "duplicate reference" in check.stdout and second.name in check.stdout, check.stdout
    assert "orphan" not in check.stdout, check.stdout  # its own file is named by its fingerprint
    assert "--repair" in check.stdout

    gc = cli("lake", "gc", "--lake", str(lake_dir))
    assert gc.returncode == 2 and "nothing was deleted" in gc.stdout + gc.stderr, gc.stdout + gc.stderr
    assert own.exists(), "gc deleted a shard a manifest names"

    repair = cli("lake", "check", "--repair", "--lake", str(lake_dir))
    assert repair.returncode == 0 and "pointed 1 back" in repair.stdout, repair.stdout
    assert json.loads(second.read_text())["outputs"]["personas"]["path"] == b["outputs"]["personas"]["path"].replace(
        a["fingerprint"], b["fingerprint"])
    assert rows(lake_dir) == rows(pristine)


def test_a_hand_edited_row_count_is_found(lake_dir):
    entry_path = manifests(lake_dir, "worlds")[0]
    entry = json.loads(entry_path.read_text())
    entry["outputs"]["worlds"]["rows"] += 1
    entry_path.write_text(json.dumps(entry))
    report = check_lake(Lake(lake_dir))
    assert any(p.startswith("row count differs") and "the manifest recorded" in p for p in report.problems), \
        report.problems


def test_a_truncated_manifest_is_named_by_check_run_and_gc(lake_dir, tmp_path):
    entry_path = manifests(lake_dir, "personas")[0]
    entry_path.write_text(entry_path.read_text()[:40])
    check = cli("lake", "check", "--lake", str(lake_dir))
    assert check.returncode == 1 and f"unreadable manifest: _manifest/run=r/personas/{entry_path.name}" in check.stdout
    assert "JSONDecodeError" not in check.stdout + check.stderr
    line = one_line(cli("run", str(config_file(tmp_path)), "--lake", str(lake_dir), "--run-id", "r",
                        "--executor", "local"))
    assert entry_path.name in line and "unreadable" in line and "lake check" in line, line
    gc = one_line(cli("lake", "gc", "--lake", str(lake_dir)))
    assert "nothing was deleted" in gc and entry_path.name in gc, gc
    # --repair removes the manifest; a rerun computes its shard again, and gc collects the old file
    assert cli("lake", "check", "--repair", "--lake", str(lake_dir)).returncode == 1  # the orphan is left for gc
    assert cli("run", str(config_file(tmp_path)), "--lake", str(lake_dir), "--run-id", "r",
               "--executor", "local").returncode == 0
    assert check_lake(Lake(lake_dir)).ok, check_lake(Lake(lake_dir)).problems


def test_check_and_gc_on_a_lake_that_does_not_exist(tmp_path):
    for command in ("check", "gc"):
        line = one_line(cli("lake", command, "--lake", str(tmp_path / "no-such-lake")))
        assert "no such lake" in line and "no-such-lake" in line, line
    assert not (tmp_path / "no-such-lake").exists()


def test_run_on_a_corrupted_shard_stops_with_one_line_and_repair_recovers(lake_dir, pristine, tmp_path):
    shard = next((lake_dir / "personas" / "run=r").glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    line = one_line(cli("run", str(config_file(tmp_path)), "--lake", str(lake_dir), "--run-id", "r",
                        "--executor", "local"))
    assert line.startswith("error: run: lake ") and "content differs" in line and shard.name in line, line
    assert "guiforge lake check" in line, line
    assert cli("lake", "check", "--repair", "--lake", str(lake_dir)).returncode == 0
    assert cli("run", str(config_file(tmp_path)), "--lake", str(lake_dir), "--run-id", "r",
               "--executor", "local").returncode == 0
    assert rows(lake_dir) == rows(pristine)
    assert check_lake(Lake(lake_dir)).ok


def test_export_of_a_run_whose_shard_was_replaced_stops_with_one_line(tmp_path):
    """A shard swapped for another valid Parquet file (a bad copy): export used to read it."""
    lake = Lake(tmp_path / "lake")
    task = {"task_id": "t1", "domain": "web", "instruction": "Open the inbox."}
    trajectories = [{"trajectory_id": f"j{i}", "task_id": "t1", "sample_index": i, "success": True, "score": 1.0,
                     "env_failure": False, "n_steps": 1} for i in range(3)]
    commit_shard(lake, ShardCommit("tasks", "r", "ftasks", "k"), {"tasks": [task]})
    entry = commit_shard(lake, ShardCommit("rollouts", "r", "frollouts", "k"), {"trajectories": trajectories})
    path = tmp_path / "lake" / entry["outputs"]["trajectories"]["path"]
    pq.write_table(pq.read_table(path).slice(0, 2), path)  # still Parquet, one trajectory fewer
    line = one_line(cli("export", "--out", str(tmp_path / "out"), "--lake", str(tmp_path / "lake")))
    assert line.startswith("error: export: lake ") and "run r" in line and "trajectories" in line, line
    assert "differs" in line and "lake check" in line, line
    assert not (tmp_path / "out").exists()


def test_gc_never_deletes_a_file_a_kept_or_other_entry_names(lake_dir):
    """A `_kept` entry whose file another entry also names: collecting the kept entry must
    leave the file (another manifest needs it)."""
    first = manifests(lake_dir, "personas")[0]
    body = json.loads(first.read_text())
    kept = {**body, "stage": "_kept", "fingerprint": "personas-x", "key": "kept personas", "kept_from": "personas"}
    target = lake_dir / "_manifest" / "run=r" / "_kept" / "personas-x.json"
    target.parent.mkdir()
    target.write_text(json.dumps(kept))
    path = lake_dir / body["outputs"]["personas"]["path"]
    from guiforge.lake.gc import delete_entries
    from guiforge.lake.manifests import all_entries

    (doomed,) = [e for e in all_entries(Lake(lake_dir), "r") if e.stage == "_kept"]
    delete_entries(Lake(lake_dir), [doomed])
    assert path.exists() and not target.exists()
