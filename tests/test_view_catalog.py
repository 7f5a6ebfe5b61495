"""The DuckDB catalog names paths relative to its lake: a copied lake's catalog reads the
copy (the original deleted, it still answers, and never with the original's rows); a lake
on an S3-compatible store (moto on loopback) gets its catalog written beside its tables by
`guiforge run`, and it reads there and in a copy under another prefix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from guiforge.catalog import connect_catalog, write_catalog
from guiforge.lake import Lake
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.view.server import Viewer


def _fill(lake: Lake, n: int, run: str = "r1") -> None:
    commit_shard(lake, ShardCommit("personas", run, f"fp-{n}", "k"),
                 {"personas": [{"persona_id": f"p{i}"} for i in range(n)]})
    commit_shard(lake, ShardCommit("worlds", run, f"fw-{n}", "k"),
                 {"worlds": [{"world_id": f"w{i}", "persona_id": f"p{i}", "scenario": "s"} for i in range(n)]})


def _counts(con) -> tuple[int, int, int]:
    return con.execute("SELECT (SELECT count(*) FROM personas), (SELECT count(*) FROM worlds), "
                       "(SELECT count(*) FROM steps)").fetchone()


def test_a_copied_lake_reads_its_own_files(tmp_path):
    original = tmp_path / "original"
    _fill(Lake(original), 5)
    write_catalog(Lake(original))
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(original, copy)
    _fill(Lake(original), 7, run="r2")  # the original grows: the copy must not see it
    con = connect_catalog(Lake(copy))
    try:
        assert _counts(con) == (5, 5, 0)
    finally:
        con.close()
    shutil.rmtree(original)  # and it needs nothing from the original
    con = connect_catalog(Lake(copy))
    try:
        assert _counts(con) == (5, 5, 0)
        assert con.execute("SELECT count(*) FROM funnel").fetchone()[0] == 0  # the ready-made views bind too
    finally:
        con.close()
    duckdb_cli = shutil.which("duckdb", path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    if duckdb_cli:  # the plain CLI, in the copied lake's folder
        out = subprocess.run([duckdb_cli, "-readonly", "catalog.duckdb", "-csv", "-noheader", "-c",
                              "SELECT (SELECT count(*) FROM personas), (SELECT count(*) FROM worlds);"],
                             capture_output=True, text=True, cwd=copy, env={"PATH": "/usr/bin:/bin"}, check=True)
        assert out.stdout.strip() == "5,5"


def test_catalog_of_an_s3_lake_written_by_run_and_read_in_a_copy(s3_uri, monkeypatch):
    uri, opts = s3_uri
    endpoint = opts["client_kwargs"]["endpoint_url"]
    for name, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test",
                        "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    uri = f"{uri}-catalog"
    config = {"name": "s3cat", "seed": 3, "workers": 1,
              "stages": {"personas": {"count": 6, "shard_size": 3}, "worlds": {}}}
    run_pipeline(build_pipeline(config, "s3cat.yaml", lake=uri), executor="local")
    lake = Lake(uri)
    assert lake.exists(lake.path("catalog.duckdb"))  # on the store, beside the tables
    con = connect_catalog(lake)
    try:
        assert _counts(con) == (6, 6, 0)
    finally:
        con.close()
    viewer = Viewer(lake)  # the viewer reads the same store (DuckDB over its filesystem)
    try:
        index = viewer.handle("/", {})[2].decode()
        status, _, run_page = viewer.handle(f"/run/{build_pipeline(config, 's3cat.yaml', lake=uri).run_id}", {})
    finally:
        viewer.close()
    assert "s3cat-" in index and status == 200 and "personas" in run_page.decode()
    copy = Lake(f"{uri}-copy")
    lake.fs.copy(lake.root, copy.root, recursive=True)
    lake.fs.rm(lake.path("personas"), recursive=True)  # the original loses a table: the copy keeps it
    con = connect_catalog(copy)
    try:
        assert _counts(con) == (6, 6, 0)
    finally:
        con.close()


def test_catalog_of_an_empty_lake_still_binds(tmp_path):
    lake = Lake(tmp_path / "empty")
    where = write_catalog(lake)
    assert Path(where).exists()
    con = connect_catalog(lake)
    try:
        assert _counts(con) == (0, 0, 0)
    finally:
        con.close()


def test_catalog_views_name_no_absolute_path(tmp_path):
    lake = Lake(tmp_path / "lake")
    _fill(lake, 2)
    write_catalog(lake)
    con = connect_catalog(lake)
    try:
        sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'personas'").fetchone()[0]
    finally:
        con.close()
    assert str(tmp_path) not in sql and "'personas/*/*.parquet'" in sql
