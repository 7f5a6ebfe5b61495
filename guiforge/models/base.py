"""One client interface for every model-using stage.

A request is a list of messages whose content is text and images; providers translate it
to their wire format. Every call goes through :meth:`ModelClient.acomplete`, which adds a
per-endpoint adaptive concurrency cap (:mod:`guiforge.models.limits`), retries on
429/5xx/timeouts/unreadable bodies that wait as long as the server's ``retry-after`` asks
(else exponential backoff with jitter), a content-addressed cache and token/cost
accounting; providers implement only :meth:`_send`. A call that fails for good raises
:class:`~guiforge.models.errors.ModelFailure`, one line naming the role and the endpoint.
"""

from __future__ import annotations

import base64
import random
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from guiforge.faults import inject
from guiforge.lake.fingerprint import fingerprint, sha256_bytes
from guiforge.models.config import ModelConfig
from guiforge.models.errors import ModelFailure, RequestRejected, TransientError, describe_error
from guiforge.models.limits import CONGESTION_STATUSES, EndpointLimiter, Outcome


@dataclass(frozen=True)
class ImagePart:
    data: bytes
    media_type: str = "image/png"

    def b64(self) -> str:
        return base64.b64encode(self.data).decode()


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str | tuple[str | ImagePart, ...]
    # An assistant turn's native tool calls, ({"id", "name", "arguments": {...}[, "result"]}, ...):
    # providers send them in their wire shape, with the result the next message needs.
    tool_calls: tuple[dict[str, Any], ...] = ()

    def parts(self) -> tuple[str | ImagePart, ...]:
        return (self.content,) if isinstance(self.content, str) else self.content

    def key(self) -> dict[str, Any]:
        # Images enter cache keys and prompt hashes by their hash, never their bytes.
        key: dict[str, Any] = {"role": self.role, "parts": [p if isinstance(p, str) else {"image": sha256_bytes(p.data)}
                                                            for p in self.parts()]}
        if self.tool_calls:
            key["tool_calls"] = [dict(c) for c in self.tool_calls]
        return key


TOOL_RESULT = "Done; the next observation shows the result."


@dataclass
class Completion:
    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    retry_wait_s: float = 0.0  # slept between attempts (backoff, retry-after)
    extra: dict[str, Any] = field(default_factory=dict)
    # Native tool calls as the wire sent them: [{"id", "name", "arguments"}] (arguments a
    # JSON string from OpenAI-compatible servers, an object from Anthropic); text may be "".
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # The model's reasoning: `reasoning_content` / `reasoning` fields, Anthropic thinking blocks.
    reasoning: str | None = None


_backoff = wait_random_exponential(multiplier=0.5, max=20)


def _retry_wait(state: RetryCallState) -> float:
    """The server's retry-after (plus up to 10% jitter, so retries do not arrive as one
    burst), else exponential backoff with full jitter."""
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, TransientError):
        wait = exc.hints()[1]
        if wait is not None:
            return wait * (1 + 0.1 * random.random())
    return _backoff(state)


def prompt_hash(messages: list[Message]) -> str:
    return fingerprint([m.key() for m in messages], 16)


_LIMITERS: dict[tuple[str, str], EndpointLimiter] = {}


class ModelClient(ABC):
    def __init__(self, config: ModelConfig, cache: Any | None = None, role: str | None = None):
        self.config = config
        self.role = role  # named in every failure, with the endpoint
        self.cache = cache if config.cache else None
        self.calls = 0
        self.totals = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}

    @property
    def endpoint(self) -> str:
        return self.config.base_url or self.config.provider

    @property
    def limiter(self) -> EndpointLimiter:
        """Shared by every client of this endpoint in the process; the first one's
        ``concurrency`` is the ceiling."""
        key = (self.config.provider, self.endpoint)
        if key not in _LIMITERS:
            _LIMITERS[key] = EndpointLimiter(self.config.concurrency)
        return _LIMITERS[key]

    def failure(self, what: str, status: int | None = None, attempts: int = 1) -> ModelFailure:
        """A :class:`ModelFailure` that names the role, the model and the endpoint."""
        where = self.config.base_url or f"the {self.config.provider} API"
        role = self.role or "model"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return ModelFailure(f"{role} ({self.config.provider}:{self.config.model}) at {where}: {what}{tries}",
                            status, attempts)

    async def _send_limited(self, messages: list[Message], retry: bool, fault: str | None = None,
                            **params: Any) -> Completion:
        limiter = self.limiter
        await limiter.acquire(retry)
        outcome: Outcome = "error"
        try:
            completion = await self._send(messages, fault=fault, **params)
            outcome = "ok"
            return completion
        except TransientError as exc:
            if exc.hints()[0] in CONGESTION_STATUSES:
                outcome = "rate_limited"
            raise
        finally:
            limiter.release(outcome)

    def cache_key(self, messages: list[Message], **params: Any) -> str:
        return fingerprint({"model": self.config.identity(), "messages": [m.key() for m in messages],
                            "params": params}, 32)

    async def acomplete(self, messages: list[Message], use_cache: bool = True, **params: Any) -> Completion:
        """One call. ``params``: ``max_tokens``, ``json``, ``tools`` (neutral function specs or
        provider-typed tool dicts), ``sample`` (the sample index: k samples are k calls, each
        replayed from the cache on a rerun, and sample k is sent seed + k where a seed is
        set). ``use_cache=False`` neither reads nor writes the cache (a retry after a reply
        that could not be used must be a fresh draw)."""
        # An injected fault (guiforge.faults) meets every attempt of this call, as an outage
        # would; decided before the cache is read, so a rerun numbers its calls the same, and a
        # call that meets one goes to the endpoint (a cached reply could not have met it).
        injection = inject("model")
        fault = injection.kind if injection else None
        # The key hashes every image of the prompt: computed only when a cache will use it.
        key = self.cache_key(messages, **params) if self.cache is not None and use_cache and not fault else None
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Completion(**{**hit, "cached": True})
        started = time.perf_counter()
        attempts = 0
        note = f" [{injection.describe()}]" if injection else ""
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(lambda e: isinstance(e, TransientError)),
                stop=stop_after_attempt(self.config.max_retries + 1),
                wait=_retry_wait,
                reraise=True,
            ):
                with attempt:
                    attempts += 1
                    waited = attempt.retry_state.idle_for
                    completion = await self._send_limited(messages, attempts > 1, fault, **params)
        except TransientError as exc:
            raise self.failure(f"{exc}{note}", exc.hints()[0], attempts) from exc
        except RequestRejected as exc:
            raise self.failure(f"{exc}{note}", exc.status, attempts) from exc
        completion.latency_s = time.perf_counter() - started
        completion.attempts = attempts
        completion.retry_wait_s = waited
        prices = self.config.prices
        completion.cost_usd = (completion.input_tokens * prices.input_per_mtok
                               + completion.output_tokens * prices.output_per_mtok) / 1e6
        self.calls += 1
        self.totals["input_tokens"] += completion.input_tokens
        self.totals["output_tokens"] += completion.output_tokens
        self.totals["cost_usd"] += completion.cost_usd
        if key is not None:
            self.cache.put(key, {k: v for k, v in asdict(completion).items() if k != "cached"})
        return completion

    @abstractmethod
    async def _send(self, messages: list[Message], fault: str | None = None, **params: Any) -> Completion:
        """One request in the provider's wire format; raise TransientError to retry,
        RequestRejected for a request the endpoint refuses. ``fault``: an injected fault
        the request carries to the transport (:mod:`guiforge.faults.http`)."""


def transport_error(exc: BaseException, sdk: Any) -> Exception:
    """An SDK's exception (or a body it could not read) as TransientError or
    RequestRejected, in a few words."""
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        message = " ".join(str(getattr(exc, "message", "") or exc).split())[:200]
        if status in (408, 409) or status in CONGESTION_STATUSES or status >= 500:
            return TransientError(f"HTTP {status}: {message}")
        return RequestRejected(f"HTTP {status} (the request is refused; sending it again would not help): "
                               f"{message}", status)
    if isinstance(exc, sdk.APIConnectionError):  # APITimeoutError too
        return TransientError(describe_error(exc))
    # the SDK's own parse of the body (a cut-off JSON document) or a body of the wrong shape
    return TransientError(f"unreadable reply body: {describe_error(exc)}")

    async def aclose(self) -> None:  # noqa: B027 - providers with connections override it
        pass
