"""The grounding stage inside a pipeline run (a battery: a run with tasks takes about a
minute): one shard per (domain, app), rows and screenshots in the lake, a rerun that skips
every committed shard, ``guiforge stats`` by domain and ``guiforge export --kind grounding``
(web, mobile and desktop).
CI runs the pieces on real screens in tests/test_grounding.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from guiforge.grounding.desktop import OFFICE_APPS
from guiforge.lake.store import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

CLI = str(Path(sys.executable).with_name("guiforge"))


@pytest.mark.battery
def test_grounding_stage_in_a_run_then_stats_and_export(tmp_path):
    data = {"name": "grounding-run", "seed": 5, "workers": 2,
            "stages": {"personas": {"count": 2, "shard_size": 2}, "worlds": {}, "skills": {},
                       "task_candidates": {"per_world": 6}, "task_gates": {"package_gate": False},
                       "grounding": {"tasks_per_app": 1, "screens_per_task": 2, "refusals_per_screen": 2}}}
    lake_dir = tmp_path / "lake"
    pipeline = build_pipeline(data, "grounding.yaml", lake=str(lake_dir))
    run_pipeline(pipeline, executor="local")
    lake = Lake(str(lake_dir))
    rows = lake.read_table("grounding", run_id=pipeline.run_id).to_pylist()
    tasks = lake.read_table("tasks", run_id=pipeline.run_id, columns=["task_id", "domain", "apps"]).to_pylist()
    first_app = {t["task_id"]: (t["domain"], t["apps"][0]) for t in tasks if t["apps"]}
    # web and mobile pages, and LibreOffice's documents (a terminal task has no screen)
    cells = {c for c in first_app.values() if c[0] in ("web", "mobile") or c[1] in OFFICE_APPS}
    assert {first_app[r["task_id"]] for r in rows} == cells  # a shard per (domain, app), a task each
    assert {"web", "mobile", "desktop"} <= {r["domain"] for r in rows}
    shas = {r["image_sha256"] for r in rows}
    stored = set(lake.read_table("images", run_id=pipeline.run_id, columns=["sha256"]).column("sha256").to_pylist())
    assert shas <= stored and any(r["refusal"] for r in rows)

    again = build_pipeline(data, "grounding.yaml", lake=str(lake_dir))
    run_pipeline(again, executor="local")
    assert lake.read_table("grounding", run_id=pipeline.run_id).num_rows == len(rows)  # nothing twice

    stats = subprocess.run([CLI, "stats", "--lake", str(lake_dir)], capture_output=True, text=True, timeout=300)
    assert stats.returncode == 0 and "grounding rows by domain" in stats.stdout
    out = tmp_path / "out"
    proc = subprocess.run([CLI, "export", "--kind", "grounding", "--lake", str(lake_dir), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(rows)} rows" in proc.stdout
    ds = datasets.load_dataset(str(out), "grounding", split="train")
    assert ds[0]["images"][0].size == (ds[0]["image_width"], ds[0]["image_height"])
    bad = subprocess.run([CLI, "export", "--kind", "pairs", "--lake", str(lake_dir), "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--kind" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr
