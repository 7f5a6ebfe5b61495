"""Model providers through the official SDKs against a local server speaking each wire
format: completions, images, retries on 429/5xx, structured output with the error fed
back, the call cache and token/cost accounting."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from guiforge.lake import Lake
from guiforge.models import ImagePart, Message, ModelConfig, make_client
from guiforge.models.cache import CallCache
from guiforge.models.loop import run
from guiforge.models.structured import agenerate
from guiforge.testing.model_server import ModelServer, ServerBehaviour

PROVIDERS = ["openai", "anthropic"]


def config_for(server: ModelServer, provider: str, **kw) -> ModelConfig:
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return ModelConfig(provider=provider, model="local-model", base_url=base, api_key_env="TEST_KEY", **kw)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-local")


def echo(provider: str, body: dict) -> str:
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else " ".join(p.get("text", "") for p in last if p.get("type") == "text")
    images = 0 if isinstance(last, str) else sum(p.get("type") in ("image", "image_url") for p in last)
    return f"{provider} heard: {text} (+{images} image)"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_completion_with_image_through_the_sdk(provider):
    with ModelServer(echo) as server:
        client = make_client(config_for(server, provider, prices={"input_per_mtok": 1.0, "output_per_mtok": 2.0}))
        msgs = [Message("system", "be brief"), Message("user", ("what is on screen?", ImagePart(b"\x89PNG fake")))]
        out = run(client.acomplete(msgs))
        assert out.text == f"{provider} heard: what is on screen? (+1 image)"
        assert out.input_tokens > 0 and out.output_tokens > 0
        assert out.cost_usd == pytest.approx((out.input_tokens + 2 * out.output_tokens) / 1e6)
        body = server.requests[-1].body
        if provider == "anthropic":
            assert body["system"] == "be brief"
            assert body["messages"][0]["content"][1]["source"]["media_type"] == "image/png"
        else:
            assert body["messages"][0] == {"role": "system", "content": "be brief"}
            assert body["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(provider, status):
    with ModelServer(echo, ServerBehaviour(fail_first=2, fail_status=status)) as server:
        client = make_client(config_for(server, provider, max_retries=3))
        out = run(client.acomplete([Message("user", "hi")]))
        assert out.attempts == 3
        assert [r.status for r in server.requests] == [status, status, 200]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retries_give_up_after_the_limit(provider):
    from guiforge.models import ModelFailure

    with ModelServer(echo, ServerBehaviour(fail_first=10, fail_status=429)) as server:
        client = make_client(config_for(server, provider, max_retries=1))
        with pytest.raises(ModelFailure, match="HTTP 429.* after 2 attempts"):
            run(client.acomplete([Message("user", "hi")]))
        assert len(server.requests) == 2


class Answer(BaseModel):
    city: str
    nights: int


@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_output_feeds_the_error_back(provider):
    replies = iter(["not json at all", '{"city": "Lyon", "nights": "many"}', '```json\n{"city": "Lyon", "nights": 3}\n```'])
    with ModelServer(lambda p, b: next(replies)) as server:
        client = make_client(config_for(server, provider))
        result = run(agenerate(client, [Message("user", "plan")], Answer))
        assert result.ok and result.value == Answer(city="Lyon", nights=3)
        assert result.attempts == 3
        # The third request carries the second reply and the validation error.
        third = json.dumps(server.requests[2].body["messages"])
        assert "nights" in third and "valid integer" in third


@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_output_records_a_parse_failure(provider):
    with ModelServer(lambda p, b: "{}") as server:
        client = make_client(config_for(server, provider, max_parse_attempts=2))
        result = run(agenerate(client, [Message("user", "plan")], Answer))
        assert not result.ok and result.attempts == 2
        assert "city" in result.errors[-1]


def test_call_cache_makes_a_rerun_free(tmp_path):
    with ModelServer(echo) as server:
        cfg = config_for(server, "openai")
        cache = CallCache(Lake(tmp_path / "lake"))
        image = ImagePart(b"\x89PNG same bytes")
        first = run(make_client(cfg, cache).acomplete([Message("user", ("look", image))]))
        again = run(make_client(cfg, cache).acomplete([Message("user", ("look", ImagePart(b"\x89PNG same bytes")))]))
        assert len(server.requests) == 1
        assert again.cached and again.text == first.text
        run(make_client(cfg, cache).acomplete([Message("user", ("look", ImagePart(b"\x89PNG other")))]))
        assert len(server.requests) == 2


def test_concurrency_cap_per_endpoint():
    import asyncio
    import time

    def slow(provider, body):
        time.sleep(0.05)
        return "ok"

    with ModelServer(slow) as server:
        client = make_client(config_for(server, "openai", concurrency=3, cache=False))

        async def many():
            return await asyncio.gather(*(client.acomplete([Message("user", f"q{i}")]) for i in range(12)))

        assert len(run(many())) == 12
        assert server.max_in_flight <= 3


def test_auto_provider_follows_the_environment(monkeypatch):
    for name in ("GUIFORGE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GUIFORGE_PROVIDER", "GUIFORGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert ModelConfig().resolved().provider == "offline"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert ModelConfig().resolved().provider == "anthropic"
    monkeypatch.setenv("GUIFORGE_API_KEY", "k")
    monkeypatch.setenv("GUIFORGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("GUIFORGE_MODEL", "qwen")
    resolved = ModelConfig().resolved()
    assert (resolved.provider, resolved.base_url, resolved.model) == ("openai", "http://127.0.0.1:9/v1", "qwen")
