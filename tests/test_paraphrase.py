"""A task-author model rewords instructions through the real OpenAI SDK (against the local
model server); a rewording is kept only if it passes the leak, entity and voice gates and
carries every quoted name, address and number over, else the task keeps its template text
and the rejected rewording is an exclusion with its reason."""

from __future__ import annotations

import json

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

PREFIX = "Hey, when you get a second: "


def reword(provider: str, body: dict) -> str:
    instruction = body["messages"][-1]["content"]
    if isinstance(instruction, list):  # content parts
        instruction = " ".join(p.get("text", "") for p in instruction)
    if "Reply" in instruction[:40] or "reply" in instruction[:40]:
        return PREFIX + instruction  # keeps everything: accepted
    return "Please use the tools you have access to for this one."  # drops the names: rejected


def test_task_author_paraphrases_and_gates_the_paraphrase(tmp_path, monkeypatch):
    from guiforge.testing.model_server import ModelServer

    monkeypatch.setenv("LOCAL_KEY", "k")
    with ModelServer(reword) as server:
        model = {"provider": "openai", "model": "rewriter", "base_url": server.openai_base_url,
                 "api_key_env": "LOCAL_KEY"}
        config = {
            "name": "paraphrase", "seed": 3, "workers": 1,
            "models": {"world_builder": {"provider": "offline"}, "task_author": model},
            "stages": {
                "personas": {"count": 4, "shard_size": 4}, "worlds": {},
                "skills": {"include": ["mail.reply_invoice_total", "mail.archive_sender"]},
                "task_candidates": {"per_world": 4},
            },
        }
        run_pipeline(build_pipeline(config, "x.yaml", lake=str(tmp_path / "lake")), executor="local")
        assert server.requests, "the task author was asked"

    lake = Lake(tmp_path / "lake")
    rows = lake.read_table("task_candidates").to_pylist()
    assert rows
    accepted = [r for r in rows if json.loads(r["binding_json"])["voice"] == "model"]
    kept = [r for r in rows if json.loads(r["binding_json"])["voice"] != "model"]
    assert accepted and kept
    for r in accepted:
        record = json.loads(r["binding_json"])["paraphrase"]
        assert r["instruction"] == PREFIX + record["template"] and record["model"] == "rewriter"
    for r in kept:
        record = json.loads(r["binding_json"])["paraphrase"]
        assert record["accepted"] is False and r["instruction"] == record["template"]
    dropped = [e for e in lake.read_table("exclusions").to_pylist() if e["gate"] == "paraphrase"]
    assert {e["subject_id"] for e in dropped} == {r["task_id"] for r in kept}
    assert all("drops" in e["reason"] or "speaks to the model" in e["reason"] for e in dropped)


def test_paraphrase_problems_name_the_gate():
    from guiforge.authoring.paraphrase import problem

    original = 'Reply to Ana\'s email "Invoice 7 for May" with the total.'
    world = json.dumps({"emails": [{"subject": "Invoice 7 for May"}]})
    assert problem(original, 'Could you answer Ana\'s "Invoice 7 for May" mail with the total?', ["412.50"], world) is None
    assert "drops" in problem(original, "Answer Ana's mail with the total.", [], world)
    assert "answer away" in problem(original, 'Reply to "Invoice 7 for May": the total is 412.50.', ["412.50"], world)
    assert "speaks to the model" in problem(original, 'Use the tools to reply to "Invoice 7 for May".', [], world)
