"""A run whose teacher endpoint is down: every episode is a model_failure row (never an
aborted run, never a reward), and once a stage's share of faults passes max_failure_share
the run stops with one line (exit 2), without committing the shard that tipped it; the
shards before it stay, so a rerun once the endpoint is back resumes from them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from guiforge.batteries.agents import AnswerTeacher
from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.failure_share import FailureShareExceeded
from guiforge.orchestration.runner import run_pipeline
from guiforge.testing.model_server import ModelServer, ServerBehaviour

KEY = "GUIFORGE_TEST_KEY"


def config(lake: str, base_url: str, share: float | None = 0.5) -> dict:
    return {
        "name": "outage", "lake": lake, "seed": 2, "workers": 2, "run_id": "outage", "max_failure_share": share,
        "models": {"world_builder": {"provider": "offline"},
                   "teacher": {"provider": "openai", "model": "down-vlm", "base_url": base_url, "api_key_env": KEY,
                               "max_retries": 0, "seed": 0, "cache": False}},
        "stages": {"personas": {"count": 4, "shard_size": 4}, "worlds": {},
                   "skills": {"include": ["tools.weekday_of_event", "tools.days_until_event"]},
                   "task_candidates": {"per_world": 2, "domains": ["tools"]}, "task_gates": {"package_gate": False},
                   "rollouts": {"samples": 2, "tasks": 4, "tasks_per_shard": 2}},
    }


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY, "sk-local")


def test_an_outage_stops_the_run_in_one_line_and_a_rerun_resumes(tmp_path):
    lake = str(tmp_path / "lake")
    with ModelServer(AnswerTeacher(lake), ServerBehaviour(fail_first=10**6, fail_status=503)) as server:
        path = tmp_path / "outage.yaml"
        path.write_text(yaml.safe_dump(config(lake, server.openai_base_url)))
        done = subprocess.run([sys.executable, "-m", "guiforge.cli", "run", str(path), "--executor", "local"],
                              capture_output=True, text=True, env=os.environ.copy())
        assert done.returncode == 2, done.stdout + done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "stage rollouts" in errors[0] and "model_failure" in errors[0], done.stderr
        assert "max_failure_share 0.5" in done.stderr and "Traceback" not in done.stderr
        assert Lake(lake).read_table("trajectories").num_rows == 0  # the outage's shards were not committed
        gated = Lake(lake).read_table("tasks").num_rows
        assert gated >= 4 and server.requests

        server.behaviour = ServerBehaviour()  # the endpoint is back
        summaries = {s.stage: s for s in run_pipeline(build_pipeline(config(lake, server.openai_base_url), str(path)),
                                                     executor="local")}
    assert summaries["task_gates"].skipped == summaries["task_gates"].planned and summaries["task_gates"].ran == 0
    trajectories = Lake(lake).read_table("trajectories").to_pylist()
    assert len(trajectories) == 8 and not any(t["failure_kind"] for t in trajectories)


def test_below_the_share_faults_are_rows_and_the_run_goes_on(tmp_path):
    """Every request fails for good and max_failure_share is 1: every episode is a
    model_failure row with no outcome that names the role and the endpoint, and the run ends."""
    lake = str(tmp_path / "lake")
    with ModelServer(AnswerTeacher(lake), ServerBehaviour(fail_first=10**6, fail_status=500)) as server:
        run_pipeline(build_pipeline(config(lake, server.openai_base_url, share=1.0), "x.yaml"), executor="local")
    trajectories = Lake(lake).read_table("trajectories").to_pylist()
    assert len(trajectories) == 8
    assert all(t["failure_kind"] == "model_failure" and t["success"] is None and t["score"] is None
               and "teacher (openai:down-vlm) at http://127.0.0.1:" in t["error"] and "HTTP 500" in t["error"]
               for t in trajectories)


class DownAfterOneShard(AnswerTeacher):
    """Sound until the first rollouts shard is committed, then every request is a 503."""

    server: ModelServer

    def __call__(self, provider: str, body: dict) -> str:
        if next(Lake(self.lake_uri).manifest_entries("outage", "rollouts"), None) is not None:
            self.server.behaviour = ServerBehaviour(fail_first=10**6, fail_status=503)
        return super().__call__(provider, body)


def test_the_share_counts_the_shards_committed_before(tmp_path):
    lake = str(tmp_path / "lake")
    teacher = DownAfterOneShard(lake)
    with ModelServer(teacher) as server:
        teacher.server = server
        cfg = {**config(lake, server.openai_base_url, share=0.4), "workers": 1}
        with pytest.raises(FailureShareExceeded, match="stage rollouts: 4 of 8 units failed \\(model_failure 4\\)"):
            run_pipeline(build_pipeline(cfg, "x.yaml"), executor="local")
        assert Lake(lake).read_table("trajectories").num_rows == 4  # the sound shard stays committed
        # resumed while the endpoint is still down: the committed shard's counts come from its manifest entry
        with pytest.raises(FailureShareExceeded, match="stage rollouts: 4 of 8 units failed"):
            run_pipeline(build_pipeline(cfg, "x.yaml"), executor="local")
