"""Adaptive concurrency and server-directed backoff, against the local server speaking the
providers' wire formats: retries wait as long as ``retry-after-ms`` says, a client asking for
more than the server's concurrency limit converges to it (no request lost to 429s), a
limit dropped by one 429 grows back, and a cancelled waiter leaks no slot."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest

from guiforge.models import Message, ModelConfig, make_client
from guiforge.models.limits import EndpointLimiter, retry_after_s
from guiforge.models.loop import run
from guiforge.testing.model_server import ModelServer, ServerBehaviour


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-local")


def client_for(server: ModelServer, provider: str = "openai", **kw):
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return make_client(ModelConfig(provider=provider, model="local-model", base_url=base, api_key_env="TEST_KEY",
                                   cache=False, **kw))


def slow(seconds: float):
    def reply(provider: str, body: dict) -> str:
        time.sleep(seconds)
        return "ok"
    return reply


def test_retry_after_headers_are_read():
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "junk", "retry-after": "1.5"}) == 1.5
    in_3s = email.utils.formatdate(time.time() + 3, usegmt=True)
    assert 1.5 < retry_after_s({"retry-after": in_3s}) <= 3.5
    assert retry_after_s({"retry-after": "600"}) is None  # too long: back off exponentially instead
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None and retry_after_s(None) is None


def test_retries_wait_as_long_as_retry_after_ms_says():
    # The server answers 429 with retry-after-ms: 50. Exponential backoff with full jitter
    # would sleep anywhere in (0, 0.5 s) + (0, 1 s) + (0, 2 s); honouring the hint, 3 x 50-55 ms.
    with ModelServer(slow(0.0), ServerBehaviour(fail_first=3, fail_status=429)) as server:
        out = run(client_for(server, max_retries=3).acomplete([Message("user", "hi")]))
        assert out.attempts == 4
        assert 0.15 <= out.retry_wait_s <= 0.165, out.retry_wait_s
        reqs = server.requests  # and no attempt came back sooner than asked
        assert all(b.started - a.finished >= 0.05 for a, b in zip(reqs, reqs[1:], strict=False))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_client_above_the_server_limit_converges_without_losing_requests(provider):
    # 12 asked for, the server takes 4 at a time: with fixed concurrency and 4 retries some
    # requests would exhaust their retries; the limiter settles at the server's limit instead.
    with ModelServer(slow(0.05), ServerBehaviour(concurrency_limit=4)) as server:
        client = client_for(server, provider, concurrency=12, max_retries=4)

        async def many():
            return await asyncio.gather(*(client.acomplete([Message("user", f"q{i}")]) for i in range(60)))

        outs = run(many())
        assert len(outs) == 60 and all(o.text == "ok" for o in outs)
        rejected = sum(r.status == 429 for r in server.requests)
        assert server.max_in_flight == 4
        # The first burst (8 turned away) plus about one probe per round trip (1 in 4 calls
        # at a limit of 4); fixed concurrency would draw ~8 rejections per round trip instead.
        assert len(server.requests) == 60 + rejected and rejected <= 30, rejected
        assert client.limiter.rate_limited == rejected
        # The limit counts our calls from send to parsed reply, so it settles at the server's 4
        # plus the replies in transit or waiting for our (busy) event loop, well below 12.
        assert 3 <= client.limiter.limit < 10


def test_overloaded_529_also_lowers_the_limit():
    with ModelServer(slow(0.0), ServerBehaviour(fail_first=1, fail_status=529)) as server:
        client = client_for(server, "anthropic", concurrency=8)
        run(client.acomplete([Message("user", "hi")]))
        assert client.limiter.rate_limited == 1 and client.limiter.limit < 8


def test_a_dropped_limit_grows_back_when_the_server_has_room():
    with ModelServer(slow(0.2), ServerBehaviour(fail_first=1, fail_status=429)) as server:
        client = client_for(server, concurrency=8)
        limiter = client.limiter
        run(client.acomplete([Message("user", "first")]))
        # Nothing else was in flight, so the limit fell to 1; the retry's success raised it.
        assert limiter.rate_limited == 1 and limiter.limit == 2

        async def many():
            return await asyncio.gather(*(client.acomplete([Message("user", f"q{i}")]) for i in range(40)))

        run(many())
        assert limiter.limit == 8 and limiter.max_in_flight == 8
        assert len(server.requests) == 42  # 1 refused + its retry + 40


def test_a_cancelled_waiter_leaks_no_slot():
    async def scenario() -> tuple[int, int]:
        limiter = EndpointLimiter(1)
        await limiter.acquire()
        waiter = asyncio.ensure_future(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limiter.release("ok")
        await asyncio.wait_for(limiter.acquire(), 1)  # the slot is free again
        return limiter.in_flight, len(limiter._waiters)

    assert asyncio.run(scenario()) == (1, 0)


def test_a_slot_handed_to_a_cancelled_waiter_is_passed_on():
    async def scenario() -> int:
        limiter = EndpointLimiter(1)
        await limiter.acquire()
        first = asyncio.ensure_future(limiter.acquire())
        second = asyncio.ensure_future(limiter.acquire())
        await asyncio.sleep(0)
        limiter.release("ok")  # hands the slot to `first` ...
        first.cancel()  # ... which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await first
        await asyncio.wait_for(second, 1)
        return limiter.in_flight

    assert asyncio.run(scenario()) == 1


def test_a_retry_queues_ahead_of_first_attempts():
    async def scenario() -> list[str]:
        limiter = EndpointLimiter(1)
        await limiter.acquire()
        order: list[str] = []

        async def call(name: str, retry: bool) -> None:
            await limiter.acquire(retry)
            order.append(name)
            limiter.release("ok")

        tasks = [asyncio.ensure_future(call("new-1", False)), asyncio.ensure_future(call("new-2", False))]
        await asyncio.sleep(0)
        tasks.append(asyncio.ensure_future(call("retry", True)))
        await asyncio.sleep(0)
        limiter.release("ok")
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(scenario()) == ["retry", "new-1", "new-2"]
