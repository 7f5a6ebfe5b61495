"""The HTTP client under the providers' SDKs.

The SDKs' default httpx pool costs ~2-3 ms of CPU per call on top of the SDK itself, which
on a busy machine caps throughput (bench/models.py: a client process that gets a fifth of
a core does ~1/cpu_per_call calls a second). Their aiohttp transport costs well under half
that; it needs ``aiohttp`` installed and falls back to the default pool otherwise. The pool
keeps a connection alive for every call the endpoint may have in flight, so no call pays
for a new connection in steady state.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def sdk_http_client(sdk: ModuleType, concurrency: int) -> Any:
    """An ``http_client`` for ``openai.AsyncOpenAI`` / ``anthropic.AsyncAnthropic``."""
    limits_type = type(sdk.DEFAULT_CONNECTION_LIMITS)  # httpx or httpx2, whichever the SDK uses
    limits = limits_type(max_connections=max(1000, concurrency), max_keepalive_connections=max(100, concurrency))
    try:
        return sdk.DefaultAioHttpClient(limits=limits)
    except RuntimeError:  # the SDK was installed without aiohttp
        return sdk.DefaultAsyncHttpxClient(limits=limits)
