"""ToolsEnv's setup reads host files only from the run's prepared-files root: a task that
names /etc/shadow, an SSH key or a symlink out of the root copies nothing."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from guiforge.envs import EnvSpec, TaskSpec
from guiforge.envs.tools import ToolsEnv


def _task(files: dict) -> TaskSpec:
    return TaskSpec(task_id="t-files", domain="tools", instruction="look", setup={"files": files})


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "host-secret.txt"
    path.write_text(f"secret-{uuid.uuid4().hex}")
    return path


def test_copy_from_is_refused_without_a_prepared_files_root(secret):
    env = ToolsEnv(EnvSpec(domain="tools"))
    env.start()
    try:
        for source in (str(secret), "/etc/passwd"):
            with pytest.raises(ValueError, match=r"setup.files\['x.txt'\].*no prepared-files root"):
                env.reset(_task({"x.txt": {"copy_from": source}}))
            assert not (env.workspace.path / "x.txt").exists()
    finally:
        env.close()


def test_copy_from_reads_only_inside_the_root(tmp_path, secret):
    root = tmp_path / "prepared"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "report.csv").write_text("a,b\n1,2\n")
    os.symlink(secret, root / "link.txt")  # a symlink in the root that points out of it
    env = ToolsEnv(EnvSpec(domain="tools"), files_root=root)
    env.start()
    try:
        obs = env.reset(_task({"r.csv": {"copy_from": "sub/report.csv"},
                               "r2.csv": {"copy_from": str(root / "sub" / "report.csv")}}))
        assert "r.csv" in obs.text and (env.workspace.path / "r2.csv").read_text() == "a,b\n1,2\n"
        for outside in (str(secret), "../host-secret.txt", "link.txt", "/etc/shadow", "sub/../../host-secret.txt"):
            with pytest.raises(ValueError, match="outside the prepared-files root"):
                env.reset(_task({"x.txt": {"copy_from": outside}}))
        leaked = [p for p in env.workspace.path.rglob("*") if p.is_file() and secret.read_text() in p.read_text()]
        assert leaked == []
    finally:
        env.close()
