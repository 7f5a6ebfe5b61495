"""A task-author model proposes skill cards through the real SDK; proposals are validated
like cards on disk (errors fed back), then pass the same gates, and tasks record the model."""

from __future__ import annotations

import json

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import SKILLS_DIR
from guiforge.testing.model_server import ModelServer

BASE = (SKILLS_DIR / "mail" / "reply_invoice_total.yaml").read_text()
PROPOSAL = BASE.replace("id: mail.reply_invoice_total", "id: mail.reply_invoice_total_llm")


def author(provider: str, body: dict) -> str:
    text = json.dumps(body["messages"])
    if "teleport" in text:
        return "I cannot write that card."
    tries = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if tries == 0:
        return "```yaml\n" + PROPOSAL.replace("fn: state_equals", "fn: looks_fine") + "```"
    return "Here it is:\n```yaml\n" + PROPOSAL + "```"


def test_model_proposed_cards_are_gated_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "k")
    with ModelServer(author) as server:
        model = {"provider": "openai", "model": "card-writer", "base_url": server.openai_base_url,
                 "api_key_env": "LOCAL_KEY"}
        config = {
            "name": "authoring", "seed": 2, "workers": 2,
            "models": {"world_builder": {"provider": "offline"}, "task_author": model},
            "stages": {
                "personas": {"count": 4, "shard_size": 4}, "worlds": {},
                "skills": {"include": ["mail.reply_invoice_total"]},
                "skill_author": {"descriptions": ["Reply to an invoice email with its total",
                                                  "teleport the user to Mars"], "max_attempts": 2},
                "task_candidates": {"per_world": 4}, "task_gates": {},
            },
        }
        run_pipeline(build_pipeline(config, "x.yaml", lake=str(tmp_path / "lake")), executor="local")
        # The first reply named a check that does not exist; the error went back to the model.
        assert any("unknown check 'looks_fine'" in json.dumps(r.body["messages"]) for r in server.requests)

    lake = Lake(tmp_path / "lake")
    skills = {r["skill_id"]: r for r in lake.read_table("skills").to_pylist()}
    proposed = skills["mail.reply_invoice_total_llm"]
    assert proposed["source"] == "model" and proposed["author_model"] == "card-writer"
    assert proposed["author_calls"] == 2 and proposed["prompt_hash"]
    excluded = [e for e in lake.read_table("exclusions").to_pylist() if e["gate"] == "card_schema"]
    assert len(excluded) == 1 and "teleport" in excluded[0]["details_json"]

    tasks = lake.read_table("tasks").to_pylist()
    from_model = [t for t in tasks if t["skill_id"] == "mail.reply_invoice_total_llm"]
    assert from_model, "a proposed card yields gated tasks"
    assert all(t["author_model"] == "card-writer" and t["prompt_hash"] == proposed["prompt_hash"] for t in from_model)
    assert all(json.loads(t["gate_json"])["package"]["passed"] for t in from_model)
