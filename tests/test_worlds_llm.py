"""The LLM world builder through the real SDKs against a local server speaking each
provider's wire format: valid worlds land in the lake; a world that breaks its own facts
and a reply that never validates land in exclusions with their reasons."""

from __future__ import annotations

import json

import pytest

from guiforge.lake import Lake
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline
from guiforge.paths import SCENARIOS_DIR
from guiforge.testing.model_server import ModelServer
from guiforge.worlds.model import Persona
from guiforge.worlds.scenarios import load_scenarios
from guiforge.worlds.template_builder import build_world


def brief_of(body: dict) -> dict:
    user = next(m for m in body["messages"] if m["role"] == "user")["content"]
    return json.loads(user[user.index("{"):])


class WorldAuthor:
    """Plays an LLM: writes a good world, a world with a wrong invoice total, or junk,
    depending on the persona; fixes its JSON once when told what was wrong."""

    def __init__(self):
        self.scenarios = load_scenarios(SCENARIOS_DIR)

    def __call__(self, provider: str, body: dict) -> str:
        brief = brief_of(body)
        persona = Persona.model_validate(brief["me"])
        fate = int(persona.persona_id[-2:], 16) % 4
        retry = len(body["messages"]) > (2 if provider == "openai" else 1)
        if fate == 0:
            return "I'd love to help! Here is a world: {not json"
        world = build_world(persona, self.scenarios[brief["scenario"]], seed=1)
        data = json.loads(world.model_dump_json())
        data.update(world_id=brief["world_id"], persona_id=persona.persona_id, scenario=brief["scenario"])
        if fate == 1 and not retry:
            data["contacts"] = "nobody"  # schema error: fixed on the retry
        if fate == 2:
            invoices = [d for d in data["documents"] if d["kind"] == "invoice" and d["line_items"]]
            target = invoices[0] if invoices else None
            if target is None:
                data["events"][0]["end"] = "1999-01-01T00:00:00"
            else:
                target["total"] = round((target["total"] or 0) + 10.0, 2)
        return json.dumps(data)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_llm_worlds_through_each_provider(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with ModelServer(WorldAuthor()) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        config = {
            "name": f"llm-{provider}", "seed": 3, "workers": 2,
            "models": {"world_builder": {"provider": provider, "model": "local-writer", "base_url": base,
                                        "api_key_env": "LOCAL_KEY", "max_parse_attempts": 2}},
            "stages": {"personas": {"count": 16, "shard_size": 8}, "worlds": {}},
        }
        pipeline = build_pipeline(config, "llm.yaml", lake=str(tmp_path / "lake"))
        run_pipeline(pipeline, executor="local")
        lake = Lake(tmp_path / "lake")
        worlds = lake.read_table("worlds").to_pylist()
        excluded = lake.read_table("exclusions").to_pylist()
        personas = lake.read_table("personas").to_pylist()

        fates = [int(p["persona_id"][-2:], 16) % 4 for p in personas]
        assert len(worlds) == fates.count(1) + fates.count(3)
        assert len(excluded) == fates.count(0) + fates.count(2)
        assert {e["gate"] for e in excluded} <= {"schema", "consistency"}
        for e in excluded:
            assert e["reason"] and e["stage"] == "worlds" and e["subject_table"] == "worlds"
            if e["gate"] == "schema":
                assert "parse failure after 2 attempts" in e["reason"]
        assert all(w["builder"] == "llm" and w["model"] == "local-writer" and w["prompt_hash"] for w in worlds)
        assert {r.provider for r in server.requests} == {provider}

        # A rerun is served from the call cache: no new requests.
        seen = len(server.requests)
        lake.remove_run(pipeline.run_id)
        run_pipeline(pipeline, executor="local")
        assert len(server.requests) == seen
        assert len(lake.read_table("worlds")) == len(worlds)
