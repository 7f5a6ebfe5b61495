"""Frame thumbnails: made when a frame is stored, read by the judge instead of decoding the
whole screenshot; frames of a lake from before thumbnails get theirs from their bytes."""

from __future__ import annotations

import io
import os

import pyarrow.parquet as pq
import pytest
from PIL import Image

from guiforge.judge.evidence import JudgeView, StepFact, choose_key_frames
from guiforge.lake import ShardCommit, commit_shard
from guiforge.lake.blobs import ContentStore, ShardContent
from guiforge.lake.images import ImageReader
from guiforge.lake.store import Lake
from guiforge.lake.thumbs import thumbnail_of


def frame(seed: int, fmt: str = "PNG") -> bytes:
    im = Image.frombytes("RGB", (320, 200), os.urandom(320 * 200 * 3) if seed < 0 else bytes(
        (x * seed + y) % 256 for y in range(200) for x in range(320 * 3)))
    buf = io.BytesIO()
    im.save(buf, fmt)
    return buf.getvalue()


@pytest.fixture
def lake(tmp_path) -> Lake:
    return Lake(str(tmp_path / "lake"))


def test_a_stored_frame_carries_its_thumbnail(lake):
    content = ShardContent(ContentStore(lake, "images"))
    frames = [frame(3), frame(5, "JPEG")]
    for data in frames:
        content.add_image(data)
    assert [r["thumb"] for r in content.rows] == [thumbnail_of(d) for d in frames]
    assert all(len(r["thumb"]) == 48 * 48 for r in content.rows)
    commit_shard(lake, ShardCommit("rollouts", "r1", "s1", "k1"), {"images": content.rows})
    reader = ImageReader(lake)
    shas = [r["sha256"] for r in content.rows]
    assert reader.thumbs(shas) == {r["sha256"]: r["thumb"] for r in content.rows}
    assert reader._cache == {}  # no frame was read whole


def test_frames_from_before_thumbnails_get_theirs_from_their_bytes(lake):
    content = ShardContent(ContentStore(lake, "images"))
    content.add_image(frame(7))
    row = content.rows[0]
    commit_shard(lake, ShardCommit("rollouts", "r1", "s1", "k1"), {"images": content.rows})
    path = lake.resolve(lake.shard_files("images")[0].path)
    old = pq.read_table(path).drop_columns(["thumb"])  # the file as an older guiforge wrote it
    assert "thumb" not in old.schema.names
    pq.write_table(old, path)
    assert ImageReader(lake).thumbs([row["sha256"], "unknown"]) == {row["sha256"]: row["thumb"]}


def test_key_frames_are_chosen_from_thumbnails():
    thumbs = {"a": bytes(2304), "b": bytes([200]) * 2304, "c": bytes([210]) * 2304, "d": bytes([10]) * 2304}
    steps = [StepFact(i, {"type": "click"}, None, "", None, sha) for i, sha in enumerate("abcd")]
    view = JudgeView("t", "k", "web", None, [], "do it", None, False, steps)
    # the last frame, then the biggest change: a->b (200, before c->d's 200), not b->c (10)
    assert choose_key_frames(view, thumbs, 2) == [(1, "b"), (3, "d")]
    assert choose_key_frames(view, {k: v for k, v in thumbs.items() if k != "d"}, 2) == [(1, "b"), (2, "c")]
