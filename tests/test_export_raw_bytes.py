"""The export's raw-lake figure (bytes per step: steps and their frames) leaves out the
grounding stage's screens, which belong to no step."""

from __future__ import annotations

from guiforge.export.source import _table_bytes, _trajectory_image_bytes
from guiforge.lake import Lake
from guiforge.lake.writer import ShardCommit, commit_shard


def _image(sha: str, size: int) -> dict:
    return {"sha256": sha, "data": bytes(range(256)) * (size // 256), "width": 8, "height": 8, "format": "png"}


def test_grounding_screens_are_not_counted_as_step_frames(tmp_path):
    lake = Lake(tmp_path / "lake")
    commit_shard(lake, ShardCommit("rollouts", "r", "f1", "rollouts[0]"), {"images": [_image("a" * 64, 4096)]})
    before = _trajectory_image_bytes(lake, "r")
    assert before == _table_bytes(lake, "images", "r") > 0
    grounding = {"grounding_id": "g1", "screen_id": "s1", "domain": "web", "image_sha256": "b" * 64,
                 "instruction": "the Send button", "expression_kind": "text", "refusal": False}
    commit_shard(lake, ShardCommit("grounding", "r", "f2", "grounding[0]"),
                 {"images": [_image("b" * 64, 65536)], "grounding": [grounding]})
    assert _table_bytes(lake, "images", "r") > before
    assert _trajectory_image_bytes(lake, "r") == before
