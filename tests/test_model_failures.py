"""A model call that fails for good is a ModelFailure: one line naming the role, the model
and the endpoint, never an SDK exception that kills a stage. Through the official SDKs
against the local server misbehaving (persistent 5xx, a 400, a body cut short, an HTML
page, no answer) and against a port nobody listens on; and the same faults injected at the
HTTP transport (guiforge.faults), which the SDKs cannot tell from the real thing."""

from __future__ import annotations

import socket

import pytest

from guiforge.faults import FaultsConfig, Injector, unit
from guiforge.models import Message, ModelConfig, ModelFailure, make_client
from guiforge.models.loop import run
from guiforge.models.structured import agenerate
from guiforge.testing.model_server import ModelServer, ServerBehaviour

PROVIDERS = ["openai", "anthropic"]


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-local")


def client_for(server: ModelServer | None, provider: str, base: str | None = None, **kw):
    if base is None:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    config = ModelConfig(provider=provider, model="local-vlm", base_url=base, api_key_env="TEST_KEY", cache=False,
                         **{"max_retries": 2, **kw})
    return make_client(config, role="teacher"), base


def hello(provider: str, body: dict) -> str:
    return "hello"


def fails(client, base: str) -> ModelFailure:
    with pytest.raises(ModelFailure) as info:
        run(client.acomplete([Message("user", "hi")]))
    message = str(info.value)
    assert "\n" not in message and message.startswith("teacher (") and base in message, message
    return info.value


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_persistent_500_is_a_model_failure_after_the_retries(provider):
    with ModelServer(hello, ServerBehaviour(fail_first=100, fail_status=500)) as server:
        client, base = client_for(server, provider)
        failure = fails(client, base)
        assert "HTTP 500" in str(failure) and "after 3 attempts" in str(failure)
        assert failure.status == 500 and len(server.requests) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_400_is_not_retried(provider):
    with ModelServer(hello, ServerBehaviour(fail_first=100, fail_status=400)) as server:
        client, base = client_for(server, provider)
        failure = fails(client, base)
        assert "HTTP 400" in str(failure) and failure.status == 400
        assert len(server.requests) == 1  # the same request would get the same answer


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("misbehaviour", ["truncated", "malformed"])
def test_an_unreadable_body_is_retried_then_a_model_failure(provider, misbehaviour):
    with ModelServer(hello, ServerBehaviour(misbehave_first=100, misbehaviour=misbehaviour)) as server:
        client, base = client_for(server, provider)
        failure = fails(client, base)
        assert "unreadable reply body" in str(failure) and len(server.requests) == 3
    with ModelServer(hello, ServerBehaviour(misbehave_first=1, misbehaviour=misbehaviour)) as server:
        client, _ = client_for(server, provider)
        assert run(client.acomplete([Message("user", "hi")])).text == "hello"  # the retry reads a good one


@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_answer_is_a_model_failure(provider):
    with ModelServer(hello, ServerBehaviour(misbehave_first=100, misbehaviour="hang", hang_s=5)) as server:
        client, base = client_for(server, provider, timeout_s=0.5, max_retries=1)
        failure = fails(client, base)
        assert "no answer before the timeout" in str(failure)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_connection_names_the_role_and_the_url(provider):
    with socket.socket() as s:  # a port that was free a moment ago: nobody listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client, base = client_for(None, provider, base=f"http://127.0.0.1:{port}/v1", max_retries=0)
    failure = fails(client, base)
    assert "connection refused" in str(failure)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_output_returns_a_model_failure(provider):
    with ModelServer(hello, ServerBehaviour(fail_first=100, fail_status=503)) as server:
        client, _ = client_for(server, provider, max_retries=0)
        from pydantic import BaseModel

        class Reply(BaseModel):
            x: int

        result = run(agenerate(client, [Message("user", "hi")], Reply))
        assert not result.ok and isinstance(result.failure, ModelFailure) and "HTTP 503" in result.errors[-1]




@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind,says,reaches_server", [
    ("rate_limit", "HTTP 429", False), ("server_error", "HTTP 500", False),
    ("timeout", "no answer before the timeout", False), ("truncated", "unreadable reply body", True),
    ("malformed", "unreadable reply body", False)])
def test_injected_model_faults_go_through_the_sdk(provider, kind, says, reaches_server):
    with ModelServer(hello) as server:
        client, base = client_for(server, provider, timeout_s=0.3, max_retries=1)
        injector = Injector(FaultsConfig(model={kind: 1.0}))  # every unit meets it, on its first call
        with injector.shard("test", "s0"), unit("task-1", 0):
            failure = fails(client, base)
        assert says in str(failure) and f"injected model fault: {kind}" in str(failure)
        assert "after 2 attempts" in str(failure)  # the fault outlasted the retry, as an outage does
        assert len(server.requests) == (2 if reaches_server else 0)
        assert [(i.kind, i.op) for i in injector.injected] == [(kind, 0)]
        # outside a fault scope the same client is untouched
        assert run(client.acomplete([Message("user", "hi")])).text == "hello"


def test_an_injected_fault_strikes_the_same_call_on_a_rerun_served_from_the_cache(tmp_path):
    """Calls are numbered before the cache is read: on a rerun the sound calls come from the
    cache and the fault strikes the same call again, at the endpoint."""
    from guiforge.lake import Lake
    from guiforge.models.cache import CallCache

    with ModelServer(hello) as server:
        config = ModelConfig(provider="openai", model="local-vlm", base_url=server.openai_base_url,
                             api_key_env="TEST_KEY", max_retries=0)
        client = make_client(config, CallCache(Lake(tmp_path / "lake")), role="teacher")
        # the unit is planned to meet a 500 at one of its first two calls: find which, then rerun
        injector = Injector(FaultsConfig(model={"server_error": 1.0}))
        outcomes = []
        for _ in range(2):
            with injector.shard("test", "s0"), unit("task-1", 0, model=2):
                for i in range(2):
                    try:
                        outcomes.append(run(client.acomplete([Message("user", f"call {i}")])).cached)
                    except ModelFailure:
                        outcomes.append("failed")
        first, second = outcomes[:2], outcomes[2:]
        assert first.count("failed") == 1 and second == [c if c == "failed" else True for c in first]
        assert [i.op for i in injector.injected] == [first.index("failed")] * 2
