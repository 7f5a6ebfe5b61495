"""`guiforge lake compact`: a run's small shard files merged into one per table, every row read
as before (whole tables, and each stage shard by the path its entry recorded), a resumed run
skipping every shard, pruning and interrupted merges handled, other runs' files and live runs
left alone; a finished run merges by itself past a threshold."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from guiforge.lake import Lake
from guiforge.lake.check import check_lake, verify_run
from guiforge.lake.compact import compact_lake
from guiforge.lake.gc import delete_entries
from guiforge.lake.lock import RunLock
from guiforge.lake.manifests import all_entries
from guiforge.orchestration import runner
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

SMALL = {"name": "compact", "seed": 5, "workers": 2,
         "models": {"world_builder": {"provider": "offline"}},
         "stages": {"personas": {"count": 12, "shard_size": 2}, "worlds": {}}}
TABLES = ("personas", "worlds")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=300)


def run(root: Path) -> list:
    return run_pipeline(build_pipeline(SMALL, "t.yaml", lake=str(root), run_id="r"), executor="local")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pristine") / "lake"
    run(root)
    return root


@pytest.fixture
def lake_dir(pristine, tmp_path) -> Path:
    copy = tmp_path / "lake"
    shutil.copytree(pristine, copy)
    return copy


def rows(root: Path) -> dict[str, list[str]]:
    lake = Lake(root)
    return {t: sorted(json.dumps(r, sort_keys=True, default=str) for r in lake.read_table(t).to_pylist())
            for t in TABLES}


def per_shard(root: Path) -> dict[str, list]:
    """Each stage entry's rows, read by the path the entry recorded."""
    lake = Lake(root)
    return {f"{e.stage}/{e.body['fingerprint']}/{t}": lake.read_shard(p).to_pylist()
            for e in all_entries(lake, "r") if not e.stage.startswith("_") for t, p in e.files().items()}


def files(root: Path, table: str) -> list[Path]:
    return sorted((root / table / "run=r").glob("*.parquet"))


def glob_count(root: Path, table: str) -> int:
    with duckdb.connect() as db:
        return db.execute(f"select count(*) from read_parquet('{root}/{table}/*/*.parquet')").fetchone()[0]


def test_compact_merges_each_table_and_every_row_reads_as_before(lake_dir):
    before, shards = rows(lake_dir), per_shard(lake_dir)
    assert len(files(lake_dir, "personas")) == 6
    done = cli("lake", "compact", "--lake", str(lake_dir), "--min-files", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("lake compact: merged 12 file(s) into 2"), done.stdout
    assert [len(files(lake_dir, t)) for t in TABLES] == [1, 1]
    assert rows(lake_dir) == before and per_shard(lake_dir) == shards
    assert glob_count(lake_dir, "personas") == 12  # what the catalog and stats read
    assert check_lake(Lake(lake_dir)).ok
    verify_run(Lake(lake_dir), "r", "run")


def test_a_resumed_run_after_compaction_skips_every_shard(lake_dir):
    before = rows(lake_dir)
    compact_lake(Lake(lake_dir), min_files=2)
    summaries = run(lake_dir)
    assert [s.ran for s in summaries] == [0, 0] and all(s.skipped for s in summaries)
    assert rows(lake_dir) == before


def test_pruning_a_merged_shard_drops_only_its_rows(lake_dir):
    lake = Lake(lake_dir)
    compact_lake(lake, min_files=2)
    doomed = next(e for e in all_entries(lake, "r") if e.stage == "personas")
    gone = {json.dumps(r, sort_keys=True, default=str) for r in lake.read_shard(doomed.files()["personas"]).to_pylist()}
    before = rows(lake_dir)["personas"]
    delete_entries(lake, [doomed])
    after = rows(lake_dir)["personas"]
    assert sorted(set(before) - gone) == after and len(after) == 10
    assert check_lake(Lake(lake_dir)).ok


def test_a_compaction_stopped_after_its_commit_is_finished_by_the_next(lake_dir, tmp_path):
    small = files(lake_dir, "personas")[0]
    saved = tmp_path / small.name
    shutil.copy(small, saved)
    compact_lake(Lake(lake_dir), min_files=2)
    shutil.copy(saved, small)  # as if the deletes after the commit never ran
    assert glob_count(lake_dir, "personas") == 14
    compact_lake(Lake(lake_dir), min_files=2)
    assert not small.exists() and glob_count(lake_dir, "personas") == 12
    assert check_lake(Lake(lake_dir)).ok


def test_files_another_run_names_and_live_runs_are_left_alone(lake_dir):
    lake = Lake(lake_dir)
    entry = next(e for e in all_entries(lake, "r") if e.stage == "personas")
    borrowed = lake_dir / entry.files()["personas"]
    other = lake_dir / "_manifest" / "run=other" / "personas" / "x.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({**entry.body, "run_id": "other"}))  # another run's entry names r's file
    with RunLock(lake, "r"):
        held = compact_lake(lake, run_id="r", min_files=2)
    assert held.merged == [] and "being written" in held.skipped[0]
    assert len(files(lake_dir, "personas")) == 6
    compact_lake(lake, min_files=2)
    assert borrowed.exists() and len(files(lake_dir, "personas")) == 2  # the borrowed file, and one merged
    assert glob_count(lake_dir, "personas") == 12


def test_a_finished_run_merges_past_the_threshold(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "AUTO_MIN_FILES", 4)
    root = tmp_path / "lake"
    run(root)
    assert [len(files(root, t)) for t in TABLES] == [1, 1]
    assert glob_count(root, "personas") == 12 and check_lake(Lake(root)).ok
