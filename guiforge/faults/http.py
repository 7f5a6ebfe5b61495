"""Model faults at the HTTP transport, under the official SDKs: a request that carries
:data:`FAULT_HEADER` meets its fault there (the header never leaves the process), so the
SDK parses the same bytes, statuses and exceptions a misbehaving endpoint gives it.

- ``rate_limit``: 429 with a short ``retry-after-ms``; ``server_error``: 500;
- ``timeout``: no answer until the client's read timeout has passed, then httpx's
  ``ReadTimeout``;
- ``truncated``: the endpoint's real reply, cut in half; ``malformed``: a 200 HTML page
  (what a proxy in front of a dead server answers).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from functools import cache
from typing import Any

FAULT_HEADER = "x-guiforge-fault"
_DROPPED = ("content-length", "content-encoding", "transfer-encoding")


def fault_headers(kind: str | None) -> dict[str, str]:
    return {FAULT_HEADER: kind} if kind else {}


def _httpx_of(client: Any):
    """The httpx flavour (httpx or httpx2) the SDK's client is built on."""
    for cls in type(client).__mro__:
        if cls.__name__ == "AsyncClient":
            return importlib.import_module(cls.__module__.split(".")[0])
    raise TypeError(f"{type(client).__name__} is not an httpx AsyncClient")


def with_fault_transport(client: Any) -> Any:
    """``client`` (an SDK's ``http_client``) with its transport wrapped; requests without
    the header pass straight through."""
    cls = _injecting_transport(_httpx_of(client))
    # httpx keeps the transport of a client without mounts here; the public way to pass one
    # in would replace the aiohttp transport the SDK's client builds for itself
    client._transport = cls(client._transport)
    return client


@cache
def _injecting_transport(httpx):
    class InjectingTransport(httpx.AsyncBaseTransport):
        def __init__(self, inner):
            self.inner = inner

        async def handle_async_request(self, request):
            kind = request.headers.get(FAULT_HEADER)
            if kind is None:
                return await self.inner.handle_async_request(request)
            del request.headers[FAULT_HEADER]
            return await _misbehave(httpx, self.inner, request, kind)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return InjectingTransport


def _error(status: int, message: str) -> bytes:
    kind = {429: "rate_limit_error"}.get(status, "api_error")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message, "code": status}}).encode()


async def _misbehave(httpx, inner, request, kind: str):
    json_type = {"content-type": "application/json"}
    if kind == "rate_limit":
        return httpx.Response(429, headers={**json_type, "retry-after-ms": "10"},
                              content=_error(429, "injected fault: rate limited"), request=request)
    if kind == "server_error":
        return httpx.Response(500, headers=json_type, content=_error(500, "injected fault: server error"),
                              request=request)
    if kind == "timeout":
        timeout = (request.extensions.get("timeout") or {}).get("read") or 60.0
        await asyncio.sleep(timeout)
        raise httpx.ReadTimeout(f"injected fault: no answer within {timeout:g}s", request=request)
    if kind == "malformed":
        return httpx.Response(200, headers={"content-type": "text/html"}, request=request,
                              content=b"<html><body><h1>502 Bad Gateway</h1>injected fault</body></html>")
    if kind == "truncated":
        response = await inner.handle_async_request(request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROPPED]
        return httpx.Response(response.status_code, headers=headers, content=body[: max(1, len(body) // 2)],
                              request=request)
    raise ValueError(f"unknown model fault {kind!r}")
