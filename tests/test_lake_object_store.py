"""The lake's commit protocol where there is no rename (an S3 API: moto's server on loopback)
and where two writers race: one shard is committed once, by one writer, whole; a writer
killed during a commit leaves nothing a reader sees half of, `guiforge lake check` says what
is unfinished, and the resumed run ends with an uninterrupted run's tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid

import pytest

from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.lake.check import check_lake
from guiforge.lake.commit import unfinished
from guiforge.lake.store import TMP_MARK
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import PROJECT_ROOT

CONFIG = {"name": "objstore", "seed": 3, "workers": 2,
          "models": {"world_builder": {"provider": "offline"}},
          "stages": {"personas": {"count": 24, "shard_size": 4}, "worlds": {"per_persona": 1}}}
KEYS = {"personas": "persona_id", "worlds": "world_id"}


def persona(i: int, writer: int) -> dict:
    return {"persona_id": f"per_{i}", "name": f"Person {i} of writer {writer}", "traits": ["calm"], "goals": ["ship"]}


@pytest.fixture(params=["local", "s3"])
def lake(request, tmp_path):
    if request.param == "local":
        return Lake(tmp_path / "lake")
    uri, opts = request.getfixturevalue("s3_uri")
    return Lake(f"{uri}-{uuid.uuid4().hex[:8]}", storage_options=opts)


@pytest.fixture
def aws_env(s3_uri, monkeypatch) -> dict[str, str]:
    """The standard AWS variables pointing at the moto server (how a user names a store)."""
    endpoint = s3_uri[1]["client_kwargs"]["endpoint_url"]
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **env}


def test_of_writers_racing_on_one_shard_exactly_one_commits(lake):
    """Eight writers of one shard at once, each with rows of its own (a model that answers
    differently each time): one entry, and the table holds exactly that writer's rows in the
    files the entry hashed; the others were told they lost, and left no temporary behind."""
    writers, barrier = 8, threading.Barrier(8)
    results: dict[int, dict] = {}

    def write(w: int) -> None:
        barrier.wait()
        rows = [persona(i, w) for i in range(3)]
        results[w] = commit_shard(lake, ShardCommit("personas", "r1", "fp-race", "personas[0:3]"), {"personas": rows})

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [w for w, entry in results.items() if not entry.get("lost")]
    assert len(winners) == 1, results
    entry = next(iter(lake.manifest_entries("r1", "personas")))
    assert entry["attempt"] == results[winners[0]]["attempt"]
    assert all(r["attempt"] == entry["attempt"] for r in results.values())  # losers got the winner's entry
    names = sorted(lake.read_table("personas").column("name").to_pylist())
    assert names == [f"Person {i} of writer {winners[0]}" for i in range(3)]
    report = check_lake(lake)
    assert report.ok, report.problems  # the file matches the entry's size, sha256 and rows; no orphan
    lake.fs.invalidate_cache()
    assert not [p for p in lake.fs.find(lake.root) if TMP_MARK in p]


def test_a_commit_whose_publish_was_cut_short_is_finished_not_lost(lake):
    """A writer that claimed its entry and died before publishing: the entry is unfinished,
    check says so, a reader's glob sees nothing of the shard (never half of it), repair
    publishes the very files the entry hashed."""
    import guiforge.lake.writer as writer

    real, cut = writer.finish_commit, []
    writer.finish_commit = lambda lake, entry: cut.append(entry)  # the process "dies" before publishing
    try:
        with pytest.raises(Exception, match="vanished"):  # as seen by the writer itself: nothing published
            commit_shard(lake, ShardCommit("personas", "r1", "fp-cut", "k"), {"personas": [persona(1, 0)]})
    finally:
        writer.finish_commit = real
    # check_published withdrew the claim because the files were not there: in a real kill the
    # process is gone before it can; put the entry back as the kill leaves it.
    from guiforge.lake.commit import claim

    assert claim(lake, cut[0]) is not None
    assert unfinished(lake, cut[0])
    assert lake.read_table("personas").num_rows == 0
    report = check_lake(lake)
    assert [p for p in report.problems if p.startswith("unfinished commit: r1/personas/fp-cut")], report.problems
    from guiforge.lake.check import repair_lake

    assert repair_lake(lake, report).finished
    assert check_lake(lake).ok
    assert lake.read_table("personas").column("persona_id").to_pylist() == ["per_1"]


def test_a_repeated_export_replaces_its_entry(lake):
    commit = ShardCommit("export", "r1", "fp-export", "export[x]")
    commit_shard(lake, commit, {"personas": [persona(1, 0), persona(2, 0)]})
    again = commit_shard(lake, commit, {"personas": [persona(1, 1)]}, replace=True)
    assert not again.get("lost")
    assert lake.read_table("personas").column("name").to_pylist() == ["Person 1 of writer 1"]
    assert check_lake(lake).ok


def rows(lake: Lake, run_id: str | None = None) -> dict[str, list]:
    return {t: sorted(({k: v for k, v in r.items() if k != "run_id"} for r in lake.read_table(t, run_id).to_pylist()),
                      key=lambda r: r[key]) for t, key in KEYS.items()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, list]:
    lake = tmp_path_factory.mktemp("reference") / "lake"
    run_pipeline(build_pipeline(CONFIG, "objstore.yaml", lake=str(lake), run_id="ref"), executor="local")
    return rows(Lake(lake))


DYING_RUN = """
import json, os, signal, sys
import guiforge.lake.writer as writer
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

target, survive, lake, config = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
real, calls = getattr(writer, target), []

def dying(*args, **kwargs):
    calls.append(1)
    if len(calls) > survive:  # this commit is cut here, by a real SIGKILL
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)

setattr(writer, target, dying)
run_pipeline(build_pipeline(config, "objstore.yaml", lake=lake, run_id="killed"), executor="local")
"""


def guiforge_cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guiforge.cli", *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("where", ["claim", "finish_commit"], ids=["before-the-claim", "before-the-publish"])
def test_a_run_killed_during_a_commit_on_s3_resumes_to_the_same_tables(where, s3_uri, aws_env, reference):
    uri = f"{s3_uri[0]}-kill-{uuid.uuid4().hex[:6]}"
    proc = subprocess.run([sys.executable, "-c", DYING_RUN, where, "4", uri, json.dumps(CONFIG)],
                          cwd=PROJECT_ROOT, env=aws_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == -9, proc.stderr[-2000:]
    lake = Lake(uri)
    seen = rows(lake)["personas"]  # what a reader sees now: whole shards of the right rows only
    assert len(seen) % 4 == 0 and all(r in reference["personas"] for r in seen)

    check = guiforge_cli("lake", "check", "--lake", uri, env=aws_env)
    assert check.returncode == 1, check.stdout
    expected = "unfinished commit: killed/personas/" if where == "finish_commit" else "orphan: personas/run=killed/"
    assert expected in check.stdout, check.stdout

    run_pipeline(build_pipeline(CONFIG, "objstore.yaml", lake=uri, run_id="killed"), executor="local")
    assert rows(Lake(uri)) == reference
    check = guiforge_cli("lake", "check", "--lake", uri, env=aws_env)
    assert check.returncode == 0 and "lake check ok" in check.stdout, check.stdout
    lake.fs.invalidate_cache()
    assert not [p for p in lake.fs.find(lake.root) if TMP_MARK in p]


def test_two_runs_at_once_on_one_s3_lake(s3_uri, aws_env, reference, tmp_path):
    """Two `guiforge run` processes on one bucket prefix, each its own run: both finish, each
    run holds the reference rows, and the lake checks clean."""
    uri = f"{s3_uri[0]}-two-{uuid.uuid4().hex[:6]}"
    config = tmp_path / "objstore.yaml"
    config.write_text(json.dumps(CONFIG))  # JSON is YAML
    procs = [subprocess.Popen([sys.executable, "-m", "guiforge.cli", "run", str(config), "--lake", uri,
                               "--run-id", run, "--executor", "local"], cwd=PROJECT_ROOT, env=aws_env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for run in ("one", "two")]
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, out[-3000:]
    lake = Lake(uri)
    assert rows(lake, "one") == reference and rows(lake, "two") == reference
    check = guiforge_cli("lake", "check", "--lake", uri, env=aws_env)
    assert check.returncode == 0, check.stdout
