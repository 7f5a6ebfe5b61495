"""One client interface for every model-using stage.

A request is a list of messages whose content is text and images; providers translate it
to their wire format. Every call goes through :meth:`ModelClient.acomplete`, which adds a
per-endpoint concurrency cap, retries with backoff on 429/5xx/timeouts, a content-addressed
cache and token/cost accounting; providers implement only :meth:`_send`.
"""

from __future__ import annotations

import asyncio
import base64
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from guiforge.lake.fingerprint import fingerprint, sha256_bytes
from guiforge.models.config import ModelConfig


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

    def parts(self) -> tuple[str | ImagePart, ...]:
        return (self.content,) if isinstance(self.content, str) else self.content

    def key(self) -> dict[str, Any]:
        # Images enter cache keys and prompt hashes by their hash, never their bytes.
        return {"role": self.role, "parts": [p if isinstance(p, str) else {"image": sha256_bytes(p.data)}
                                             for p in self.parts()]}


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
    extra: dict[str, Any] = field(default_factory=dict)


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection reset)."""


def prompt_hash(messages: list[Message]) -> str:
    return fingerprint([m.key() for m in messages], 16)


_SEMAPHORES: dict[tuple[str, str], asyncio.Semaphore] = {}


class ModelClient(ABC):
    def __init__(self, config: ModelConfig, cache: Any | None = None):
        self.config = config
        self.cache = cache if config.cache else None
        self.calls = 0
        self.totals = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}

    @property
    def endpoint(self) -> str:
        return self.config.base_url or self.config.provider

    def _semaphore(self) -> asyncio.Semaphore:
        key = (self.config.provider, self.endpoint)
        if key not in _SEMAPHORES:
            _SEMAPHORES[key] = asyncio.Semaphore(self.config.concurrency)
        return _SEMAPHORES[key]

    def cache_key(self, messages: list[Message], **params: Any) -> str:
        return fingerprint({"model": self.config.identity(), "messages": [m.key() for m in messages],
                            "params": params}, 32)

    async def acomplete(self, messages: list[Message], **params: Any) -> Completion:
        key = self.cache_key(messages, **params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Completion(**{**hit, "cached": True})
        started = time.perf_counter()
        attempts = 0
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, TransientError)),
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=wait_random_exponential(multiplier=0.5, max=20),
            reraise=True,
        ):
            with attempt:
                attempts += 1
                async with self._semaphore():
                    completion = await self._send(messages, **params)
        completion.latency_s = time.perf_counter() - started
        completion.attempts = attempts
        prices = self.config.prices
        completion.cost_usd = (completion.input_tokens * prices.input_per_mtok
                               + completion.output_tokens * prices.output_per_mtok) / 1e6
        self.calls += 1
        self.totals["input_tokens"] += completion.input_tokens
        self.totals["output_tokens"] += completion.output_tokens
        self.totals["cost_usd"] += completion.cost_usd
        if self.cache is not None:
            self.cache.put(key, {k: v for k, v in asdict(completion).items() if k != "cached"})
        return completion

    @abstractmethod
    async def _send(self, messages: list[Message], **params: Any) -> Completion:
        """One request in the provider's wire format; raise TransientError to retry."""

    async def aclose(self) -> None:  # noqa: B027 - providers with connections override it
        pass
