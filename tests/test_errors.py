"""Every error a user can make reaches them as one line, no traceback: `validate` catches
what can be caught before running, and an error inside a running stage (on Prefect) names
the stage and what to do."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from guiforge.paths import PROJECT_ROOT, SKILLS_DIR

BASE = {
    "name": "errs", "seed": 1,
    "models": {"world_builder": {"provider": "offline"}, "teacher": {"provider": "offline"}},
    "stages": {"personas": {"count": 4, "shard_size": 4}, "worlds": {}, "skills": {"include": "all"},
               "task_candidates": {}, "task_gates": {"package_gate": False}, "rollouts": {"tasks": 4}},
}


def cli(*args: str, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)


def one_line(done: subprocess.CompletedProcess) -> str:
    text = (done.stdout + done.stderr).strip()
    assert done.returncode != 0, text
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def write(tmp_path: Path, stages: dict | None = None, **top) -> Path:
    config = {**BASE, **top, "stages": {**BASE["stages"], **(stages or {})}}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def card_folder(tmp_path: Path, fn: str) -> Path:
    folder = tmp_path / "cards"
    (folder / "contacts").mkdir(parents=True)
    text = (SKILLS_DIR / "contacts" / "phone_info.yaml").read_text().replace("fn: answer_mentions", f"fn: {fn}")
    (folder / "contacts" / "phone_info.yaml").write_text(text)
    return folder


@pytest.mark.parametrize("case, expect", [
    ({"rollouts": {"tasks": -5}}, "stages.rollouts.tasks"),
    ({"skills": {"include": ["mail.no_such_card"]}}, "stages.skills.include: no skill card ['mail.no_such_card']"),
    ({"skills": {"exclude": ["nope.nope"]}}, "stages.skills.exclude"),
    ({"worlds": {"scenarios": ["no_such_scenario"]}}, "stages.worlds.scenarios: unknown scenario(s)"),
    ({"skills": {"dir": "/nonexistent/cards"}}, "stages.skills.dir: no folder"),
])
def test_validate_catches_names_and_counts(tmp_path, case, expect):
    line = one_line(cli("validate", str(write(tmp_path, case)), "--lake", str(tmp_path / "lake")))
    assert expect in line, line


def test_validate_names_an_unknown_check_in_a_card_folder(tmp_path):
    folder = card_folder(tmp_path, "no_such_check")
    line = one_line(cli("validate", str(write(tmp_path, {"skills": {"dir": str(folder)}})), "--lake",
                        str(tmp_path / "lake")))
    assert "phone_info.yaml" in line and "rubric.0.check.fn" in line and "no_such_check" in line, line


def test_binary_files_are_named(tmp_path):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary")
    line = one_line(cli("validate", str(binary)))
    assert str(binary) in line and "UTF-8" in line, line
    folder = card_folder(tmp_path, "answer_mentions")
    (folder / "contacts" / "broken.yaml").write_bytes(b"\xff\xfe\x00binary card")
    line = one_line(cli("validate", str(write(tmp_path, {"skills": {"dir": str(folder)}})), "--lake",
                        str(tmp_path / "lake")))
    assert "broken.yaml" in line and "UTF-8" in line, line


def test_unwritable_lake_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for command in ("validate", "run"):
        line = one_line(cli(command, str(write(tmp_path)), "--lake", str(blocker / "lake")))
        assert line.startswith("error: lake ") and "not writable" in line, line


def test_s3_without_credentials_is_one_line(tmp_path):
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
           "AWS_MAX_ATTEMPTS": "1", "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
           "AWS_CONFIG_FILE": str(tmp_path / "none")}
    line = one_line(cli("validate", str(write(tmp_path)), "--lake", "s3://no-bucket/lake", env=env, timeout=120))
    assert line.startswith("error: lake s3://no-bucket/lake: cannot write") and "credentials" in line, line


@pytest.mark.slow
def test_an_error_inside_a_stage_on_prefect_is_one_line(tmp_path):
    """The worlds stage reads an input shard that matches its manifest (size, sha256, rows)
    but holds the wrong table: one line naming the stage, after the shard's retries."""
    lake = tmp_path / "lake"
    first = write(tmp_path, stages=None)
    config = yaml.safe_load(first.read_text())
    config["stages"] = {"personas": {"count": 4, "shard_size": 4}}
    first.write_text(yaml.safe_dump(config))
    env = {"PREFECT_HOME": str(tmp_path / "prefect"), "GUIFORGE_SHARD_RETRY_DELAYS": "0.1,0.1"}
    done = cli("run", str(first), "--lake", str(lake), "--run-id", "shared", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (manifest,) = lake.glob("_manifest/run=shared/personas/*.json")
    entry = yaml.safe_load(manifest.read_text())
    shard = lake / entry["outputs"]["personas"]["path"]
    pq.write_table(pa.table({"unrelated": [1, 2, 3, 4]}), shard)  # a shard of another table, recorded as this one
    data = shard.read_bytes()
    entry["outputs"]["personas"].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    manifest.write_text(json.dumps(entry))
    config["stages"]["worlds"] = {}
    first.write_text(yaml.safe_dump(config))
    done = cli("run", str(first), "--lake", str(lake), "--run-id", "shared", env=env)
    text = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in text and "Crash detected" not in text, text
    errors = [x for x in text.splitlines() if x.startswith("error") or "Error" in x or "ERROR" in x]
    assert len(errors) == 1, text  # the run's own progress lines, then one error line
    line = errors[0]
    assert text.strip().endswith(line.strip()) and line.startswith("error: stage worlds:"), line
    assert "--debug" in line, line
