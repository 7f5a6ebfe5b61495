"""The DAG end to end on the engine (local executor): personas -> worlds into a real lake,
resume, pruning of superseded shards, and the DuckDB catalog."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from guiforge.catalog import counts, write_catalog
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

SMALL = {"name": "small", "seed": 11, "workers": 2,
         "models": {"world_builder": {"provider": "offline"}},
         "stages": {"personas": {"count": 24, "shard_size": 8}, "worlds": {"per_persona": 1}}}


def rows(lake: Lake, table: str) -> list[dict]:
    key = {"personas": "persona_id", "worlds": "world_id", "exclusions": "subject_id"}[table]
    return sorted(lake.read_table(table).to_pylist(), key=lambda r: r[key])


def test_run_writes_personas_and_consistent_worlds(tmp_path):
    lake = Lake(tmp_path / "lake")
    pipeline = build_pipeline(SMALL, "small.yaml", lake=str(tmp_path / "lake"))
    summaries = {s.stage: s for s in run_pipeline(pipeline, executor="local")}
    assert summaries["personas"].ran == 3 and summaries["personas"].rows == {"personas": 24}
    worlds = rows(lake, "worlds")
    assert len(worlds) + summaries["worlds"].rows.get("exclusions", 0) == 24
    assert len(worlds) == 24, rows(lake, "exclusions")
    # Every world belongs to a persona of this run; personas are paired with scenarios that
    # suit them (occupation_scenario), so scenarios spread but need not rotate evenly.
    persona_ids = {p["persona_id"] for p in rows(lake, "personas")}
    assert {w["persona_id"] for w in worlds} == persona_ids
    per_scenario = {}
    for w in worlds:
        per_scenario[w["scenario"]] = per_scenario.get(w["scenario"], 0) + 1
    assert len(per_scenario) >= 5 and max(per_scenario.values()) <= len(worlds) // 4
    assert all(w["run_id"] == pipeline.run_id for w in worlds)


def test_rerun_skips_committed_shards_and_never_duplicates(tmp_path):
    pipeline = build_pipeline(SMALL, "small.yaml", lake=str(tmp_path / "lake"))
    run_pipeline(pipeline, executor="local")
    first = rows(Lake(tmp_path / "lake"), "worlds")
    again = {s.stage: s for s in run_pipeline(pipeline, executor="local")}
    assert again["personas"].ran == 0 and again["personas"].skipped == 3
    assert again["worlds"].ran == 0
    assert rows(Lake(tmp_path / "lake"), "worlds") == first


def test_changed_sharding_under_the_same_run_prunes_old_shards(tmp_path):
    lake_uri = str(tmp_path / "lake")
    run_pipeline(build_pipeline(SMALL, "a.yaml", lake=lake_uri, run_id="fixed"), executor="local")
    before = rows(Lake(lake_uri), "personas")
    resharded = {**SMALL, "stages": {**SMALL["stages"], "personas": {"count": 24, "shard_size": 5}}}
    summaries = {s.stage: s for s in run_pipeline(build_pipeline(resharded, "b.yaml", lake=lake_uri, run_id="fixed"),
                                                   executor="local")}
    assert summaries["personas"].pruned == 3 and summaries["personas"].ran == 5
    # Same personas (each depends only on seed and index), none twice.
    assert rows(Lake(lake_uri), "personas") == before
    assert len(rows(Lake(lake_uri), "worlds")) == 24


def test_catalog_opens_in_the_plain_duckdb_cli(tmp_path):
    lake = Lake(tmp_path / "lake")
    run_pipeline(build_pipeline(SMALL, "small.yaml", lake=str(tmp_path / "lake")), executor="local")
    catalog = write_catalog(lake)
    by_table = {c.table: c.rows for c in counts(lake)}
    assert by_table["personas"] == 24 and by_table["worlds"] == 24
    duckdb_cli = shutil.which("duckdb", path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    if not duckdb_cli:
        pytest.skip("duckdb CLI (pip duckdb-cli) not installed")
    # The CLI is a separate binary: no Python, no guiforge; in the lake's folder (its views are relative).
    out = subprocess.run(
        [duckdb_cli, "-readonly", str(catalog), "-csv", "-noheader", "-c",
         "SELECT (SELECT count(*) FROM personas), (SELECT count(*) FROM worlds), (SELECT count(*) FROM steps);"],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, check=True, cwd=tmp_path / "lake",
    )
    assert out.stdout.strip() == "24,24,0"


def test_default_pipeline_writes_at_least_50_personas_and_worlds(tmp_path):
    from guiforge.paths import DEFAULT_PIPELINE
    from guiforge.yamlfile import load_yaml

    data, _ = load_yaml(DEFAULT_PIPELINE)
    data["stages"] = {k: v for k, v in data["stages"].items() if k in ("personas", "worlds")}  # the first two stages
    pipeline = build_pipeline(data, str(DEFAULT_PIPELINE), lake=str(tmp_path / "lake"))
    run_pipeline(pipeline, executor="local")
    by_table = {c.table: c.rows for c in counts(Lake(tmp_path / "lake"))}
    assert by_table["personas"] >= 50 and by_table["worlds"] >= 50


@pytest.mark.parametrize("where", ["memory", "s3"])
def test_pipeline_on_a_remote_filesystem(where, request, monkeypatch):
    if where == "s3":
        uri, opts = request.getfixturevalue("s3_uri")
        endpoint = opts["client_kwargs"]["endpoint_url"]
        # The standard AWS variables are how a user points guiforge at S3-compatible storage.
        for name, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test",
                            "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}.items():
            monkeypatch.setenv(name, value)
        uri = f"{uri}-pipeline"
    else:
        uri = "memory://pipeline-lake"
    config = {**SMALL, "stages": {"personas": {"count": 12, "shard_size": 6}, "worlds": {}}}
    run_pipeline(build_pipeline(config, "remote.yaml", lake=uri), executor="local")
    lake = Lake(uri)
    by_table = {c.table: c.rows for c in counts(lake)}  # DuckDB over the fsspec filesystem
    assert by_table["personas"] == 12 and by_table["worlds"] == 12
    assert lake.read_table("worlds").num_rows == 12


def test_training_job_reads_a_table_with_hugging_face_datasets(tmp_path):
    from datasets import load_dataset

    from guiforge.schemas import hf_features

    run_pipeline(build_pipeline(SMALL, "small.yaml", lake=str(tmp_path / "lake")), executor="local")
    ds = load_dataset("parquet", data_files=str(tmp_path / "lake" / "worlds" / "**" / "*.parquet"),
                      split="train", features=hf_features("worlds"), cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 24
    assert set(ds.column_names) >= {"world_id", "persona_id", "scenario", "world_json"}
