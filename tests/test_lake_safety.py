"""Nothing lost: relocatable and copy-safe lakes, lakes of schema 1 still open, complete
fingerprints, one writer per run, safe deletes, `lake check` and `lake gc`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from guiforge.errors import GuiforgeError
from guiforge.lake import Lake
from guiforge.lake.check import check_lake
from guiforge.lake.gc import collect
from guiforge.lake.lock import RunLock
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import DATA_DIR, PROJECT_ROOT

SMALL = {"name": "safe", "seed": 3, "workers": 2,
         "models": {"world_builder": {"provider": "offline"}},
         "stages": {"personas": {"count": 12, "shard_size": 4}, "worlds": {}}}
RESHARDED = {**SMALL, "stages": {"personas": {"count": 12, "shard_size": 6}, "worlds": {}}}


def rows(lake: Lake) -> dict[str, list]:
    return {t: sorted(lake.read_table(t).drop_columns(["run_id"]).to_pylist(), key=lambda r: r[k])
            for t, k in (("personas", "persona_id"), ("worlds", "world_id"))}


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run(config: dict, lake: Path | str, run_id: str = "r"):
    return {s.stage: s for s in run_pipeline(build_pipeline(config, "t.yaml", lake=str(lake), run_id=run_id),
                                             executor="local")}


def test_moved_and_copied_lakes_read_their_own_files(tmp_path):
    original = tmp_path / "original"
    run(SMALL, original)
    expected = rows(Lake(original))
    manifest = next((original / "_manifest").rglob("personas/*.json"))
    assert not json.loads(manifest.read_text())["outputs"]["personas"]["path"].startswith("/")

    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    before = files(original)
    # Resharding the copy reruns and prunes in the copy only; the original is byte for byte untouched.
    summaries = run(RESHARDED, copy)
    assert summaries["personas"].pruned == 3 and summaries["personas"].ran == 2
    run(RESHARDED, tmp_path / "resharded-from-scratch")
    assert rows(Lake(copy)) == rows(Lake(tmp_path / "resharded-from-scratch"))
    assert rows(Lake(copy))["personas"] == expected["personas"]
    assert files(original) == before
    assert check_lake(Lake(copy)).ok, check_lake(Lake(copy)).problems

    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    original.rename(moved)
    again = run(SMALL, moved)  # a rerun in the new place reads its inputs there
    assert again["worlds"].ran == 0 and again["personas"].ran == 0
    assert rows(Lake(moved)) == expected
    assert check_lake(Lake(moved)).ok


def _downgrade_to_schema_1(lake_root: Path) -> None:
    """Rewrite manifests as today's code wrote them before schema 2: absolute paths, no
    size or hash, under a root the lake has since left."""
    for manifest in (lake_root / "_manifest").rglob("*.json"):
        entry = json.loads(manifest.read_text())
        for written in entry["outputs"].values():
            if written.get("path"):
                written["path"] = f"/old/place/lake/{written['path']}"
                written.pop("bytes"), written.pop("sha256")
        entry.pop("schema_version")
        manifest.write_text(json.dumps(entry))


def test_a_schema_1_lake_still_opens_and_resumes(tmp_path):
    lake_dir = tmp_path / "lake"
    run(SMALL, lake_dir)
    expected = rows(Lake(lake_dir))
    _downgrade_to_schema_1(lake_dir)
    report = check_lake(Lake(lake_dir))
    assert report.ok and report.unverified == report.files > 0, report.problems
    summaries = run(SMALL, lake_dir)
    assert summaries["personas"].ran == 0  # personas have no inputs: the same fingerprints
    assert rows(Lake(lake_dir)) == expected
    assert check_lake(Lake(lake_dir)).ok


def test_an_edited_scenario_reruns_the_worlds(tmp_path, monkeypatch):
    scenarios = tmp_path / "data" / "scenarios"
    shutil.copytree(DATA_DIR / "scenarios", scenarios)
    shutil.copy(DATA_DIR / "persona_seeds.yaml", scenarios.parent)
    monkeypatch.setattr("guiforge.stages.worlds.SCENARIOS_DIR", scenarios)
    lake_dir = tmp_path / "lake"
    run(SMALL, lake_dir)
    worlds = Lake(lake_dir).read_table("worlds").to_pylist()
    titles = {w["title"] for w in worlds}
    path = scenarios / f"{sorted(w['scenario'] for w in worlds)[0]}.yaml"  # one the personas were paired with
    path.write_text(path.read_text().replace('title: "', 'title: "Expenses claim for ', 1))
    summaries = run(SMALL, lake_dir)
    assert summaries["personas"].ran == 0 and summaries["worlds"].ran == 3 and summaries["worlds"].pruned == 3
    after = {w["title"] for w in Lake(lake_dir).read_table("worlds").to_pylist()}
    assert any(t.startswith("Expenses claim for") for t in after) and after != titles


def test_a_second_writer_on_the_same_run_is_refused(tmp_path):
    lake = Lake(tmp_path / "lake")
    with RunLock(lake, "r"):
        with pytest.raises(GuiforgeError, match="is being written by another guiforge process"):
            RunLock(lake, "r").acquire()
        with RunLock(lake, "other"):  # another run id writes beside it
            pass
    # A lock whose process is gone is stale: the next writer takes it over.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"run_id": "r", "pid": int(dead.stdout), "host": os.uname().nodename, "token": "x", "heartbeat_at": 0}
    (tmp_path / "lake" / "_locks" / "run=r.json").write_text(json.dumps(stale))
    with RunLock(lake, "r"):
        pass


def test_the_cli_refuses_a_second_run_and_fresh_keeps_the_other_run(tmp_path):
    """`guiforge run` on a run being written says so in one line; `--fresh` on one run never
    touches another run's files."""
    lake_dir = tmp_path / "lake"
    run(SMALL, lake_dir, run_id="a")
    run(RESHARDED, lake_dir, run_id="b")
    other = {k: v for k, v in files(lake_dir).items() if "run=b" in k}
    config = tmp_path / "p.yaml"
    config.write_text(json.dumps(SMALL))
    with RunLock(Lake(lake_dir), "a"):
        done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", str(lake_dir),
                               "--run-id", "a", "--executor", "local"], cwd=PROJECT_ROOT, capture_output=True,
                              text=True, timeout=300)
    lines = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert done.returncode == 2 and "run a is being written by another guiforge process" in lines[-1]
    assert not any("Traceback" in x for x in lines)
    run_pipeline(build_pipeline(SMALL, "t.yaml", lake=str(lake_dir), run_id="a"), executor="local", fresh=True)
    assert {k: v for k, v in files(lake_dir).items() if "run=b" in k} == other
    assert check_lake(Lake(lake_dir)).ok


def _content_lake(tmp_path: Path) -> Lake:
    """Two runs whose steps refer to images; run b's steps use an image only run a stores
    (as lakes of schema 1 did: dedup spanned runs)."""
    import io

    from PIL import Image

    from guiforge.lake import ShardCommit, ShardContent, commit_shard
    from guiforge.lake.blobs import ContentStore

    def png(colour: str) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
        return buf.getvalue()

    lake = Lake(tmp_path / "lake")
    content = ShardContent(ContentStore(lake, "images", "a"))
    red, blue = content.add_image(png("red"))[0], content.add_image(png("blue"))[0]
    step = {"trajectory_id": "t", "step_index": 0}
    commit_shard(lake, ShardCommit("rollouts", "a", "fa", "k"), {
        "images": content.rows, "steps": [{**step, "image_sha256": red}, {**step, "step_index": 1,
                                                                           "image_sha256": blue}]})
    commit_shard(lake, ShardCommit("rollouts", "b", "fb", "k"), {"images": [], "steps": [{**step, "image_sha256": red}]})
    return lake


def test_fresh_keeps_images_another_run_refers_to(tmp_path):
    lake = _content_lake(tmp_path)
    assert check_lake(lake).ok
    lake.remove_run("a")
    report = check_lake(lake)
    assert report.ok, report.problems  # b's step still finds its image
    kept = lake.read_table("images")
    assert kept.num_rows == 2 and lake.read_table("steps", "a").num_rows == 0
    # Once run b is gone too, gc removes the kept file: nothing refers to it any more.
    lake.remove_run("b")
    assert lake.read_table("images").num_rows == 2  # still listed as kept until collected
    collect(lake)
    assert lake.read_table("images").num_rows == 0 and check_lake(lake).ok


def test_check_finds_missing_corrupt_and_orphan_files_and_gc_removes_orphans(tmp_path):
    lake = _content_lake(tmp_path)
    root = tmp_path / "lake"
    steps = next(root.glob("steps/run=a/*.parquet"))
    original = steps.read_bytes()
    data = bytearray(original)
    data[len(data) // 2] ^= 0xFF
    steps.write_bytes(bytes(data))
    (root / "steps" / "run=a" / "part-stray.parquet").write_bytes(b"left by a killed run")
    images = next(root.glob("images/run=a/*.parquet"))
    images.unlink()
    problems = check_lake(lake).problems
    text = "\n".join(problems)
    assert "content differs" in text and "missing file" in text and "orphan" in text, text
    assert any("images missing" in p for p in problems), text
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "lake", "check", "--lake", str(root)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.startswith("lake check FAILED")
    if any(p.startswith("unreadable") for p in problems):  # what it refers to is unknown: gc deletes nothing
        with pytest.raises(GuiforgeError, match="nothing was deleted"):
            collect(lake)
        steps.write_bytes(original)
    dry = collect(lake, dry_run=True)
    assert [Path(p).name for p in dry.deleted] == ["part-stray.parquet"]
    assert (root / "steps" / "run=a" / "part-stray.parquet").exists()
    collect(lake)
    assert not (root / "steps" / "run=a" / "part-stray.parquet").exists()
