"""The lake on a local path, in memory, and on S3 (a moto server on loopback)."""

from __future__ import annotations

import io
import uuid

import pyarrow.parquet as pq
import pytest
from PIL import Image

from guiforge.lake import (
    ContentStore,
    Lake,
    SchemaViolation,
    ShardCommit,
    ShardContent,
    commit_shard,
    to_arrow,
)
from guiforge.schemas import SCHEMA_VERSION, TABLES, hf_features


def persona(i: int) -> dict:
    return {"persona_id": f"per_{i}", "name": f"Person {i}", "traits": ["calm"], "goals": ["ship"], "age": 30 + i}


@pytest.fixture(params=["local", "memory", "s3"])
def lake(request, tmp_path):
    if request.param == "local":
        return Lake(tmp_path / "lake")
    if request.param == "memory":
        return Lake(f"memory://lake-{uuid.uuid4().hex[:8]}")
    uri, opts = request.getfixturevalue("s3_uri")
    return Lake(f"{uri}-{uuid.uuid4().hex[:8]}", storage_options=opts)


def test_commit_and_read_back(lake):
    commit = ShardCommit(stage="personas", run_id="r1", fingerprint="abc123", key="personas[0:3]")
    entry = commit_shard(lake, commit, {"personas": [persona(i) for i in range(3)]})
    assert entry["outputs"]["personas"]["rows"] == 3
    table = lake.read_table("personas")
    assert sorted(table.column("persona_id").to_pylist()) == ["per_0", "per_1", "per_2"]
    assert set(table.column("run_id").to_pylist()) == {"r1"}
    # The schema version travels in every file's metadata.
    with lake.fs.open(lake.shard_path("personas", "r1", "abc123"), "rb") as fh:
        meta = pq.read_schema(fh).metadata
    assert meta[b"guiforge.schema_version"] == SCHEMA_VERSION.encode()
    assert meta[b"guiforge.table"] == b"personas"
    assert [e["fingerprint"] for e in lake.manifest_entries("r1", "personas")] == ["abc123"]


def test_recommitting_a_shard_never_duplicates_rows(lake):
    commit = ShardCommit(stage="personas", run_id="r1", fingerprint="fp1", key="k")
    commit_shard(lake, commit, {"personas": [persona(1), persona(2)]})
    commit_shard(lake, commit, {"personas": [persona(1), persona(2)]})
    assert lake.read_table("personas").num_rows == 2
    assert len(lake.shard_files("personas")) == 1


def test_temporary_files_are_invisible_and_cleaned(lake):
    commit_shard(lake, ShardCommit("personas", "r1", "fp1", "k"), {"personas": [persona(1)]})
    # A writer killed mid-write leaves a temporary name that does not end in .parquet.
    tmp = lake.shard_path("personas", "r1", "fp2") + ".tmp-deadbeef"
    with lake.fs.open(tmp, "wb") as fh:
        fh.write(b"half a parquet file")
    assert [f.fingerprint for f in lake.shard_files("personas")] == ["fp1"]
    assert lake.read_table("personas").num_rows == 1
    assert lake.remove_stale_temporaries(lake.run_dir("personas", "r1")) == 1
    assert not lake.exists(tmp)


def test_schema_is_enforced():
    with pytest.raises(SchemaViolation, match="unknown column"):
        to_arrow("personas", [{"persona_id": "p", "favourite_colour": "red"}], "r")
    with pytest.raises(SchemaViolation, match="required"):
        to_arrow("worlds", [{"world_id": "w", "persona_id": None, "scenario": "s"}], "r")
    with pytest.raises(SchemaViolation, match="personas"):
        to_arrow("personas", [{"persona_id": "p", "age": "thirty"}], "r")


def test_every_table_has_core_columns_and_features():
    for name, spec in TABLES.items():
        assert spec.schema.field("run_id")
        for column in spec.core:
            assert column in spec.schema.names, (name, column)
        features = hf_features(name)
        assert list(features) == spec.schema.names
    assert TABLES["tasks"].schema.field("apps").type.value_type.equals(TABLES["personas"].schema.field("traits").type.value_type)


def _png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 32), color).save(buf, format="PNG")
    return buf.getvalue()


def test_content_store_keeps_each_image_once(lake):
    store = ContentStore(lake, "images")
    first = ShardContent(store)
    red, red_again, blue = _png("red"), _png("red"), _png("blue")
    sha_red, w, h = first.add_image(red)
    assert (w, h) == (64, 32)
    assert first.add_image(red_again)[0] == sha_red
    first.add_image(blue)
    assert len(first.rows) == 2
    commit_shard(lake, ShardCommit("rollouts", "r1", "s1", "k1"), {"images": first.rows})

    # A later shard (or a later process) sees the committed hash and stores nothing new.
    second = ShardContent(ContentStore(lake, "images"))
    assert second.add_image(red)[0] == sha_red
    assert second.rows == []
    table = lake.read_table("images")
    assert table.num_rows == 2
    assert sorted(table.column("format").to_pylist()) == ["png", "png"]


def test_blob_store_dedupes_files(lake):
    content = ShardContent(ContentStore(lake, "blobs"))
    a = content.add_blob(b"PK\x03\x04 xlsx bytes", name="a.xlsx")
    b = content.add_blob(b"PK\x03\x04 xlsx bytes", name="copy.xlsx")
    assert a == b and len(content.rows) == 1 and content.rows[0]["size"] == 15


def test_the_report_is_written_where_the_lake_lives(lake):
    """Every filesystem (s3:// through the lake's own credentials and endpoint): the HTML at
    <lake>/_reports/<run_id>.html, and its key tables as markdown."""
    from guiforge.report.artifacts import publish_report, report_markdown

    commit_shard(lake, ShardCommit("personas", "r1", "fp", "k"), {"personas": [persona(i) for i in range(3)]})
    where = publish_report(lake, "r1")
    assert where and where.endswith("_reports/r1.html") and (lake.is_local or where.startswith(f"{lake.protocol}://"))
    with lake.fs.open(lake.path("_reports", "r1.html"), "r") as fh:
        assert "<html" in fh.read(2000).lower()
    text = report_markdown(lake, "r1", where)
    assert "| personas | 3 | 1 |" in text and where in text
