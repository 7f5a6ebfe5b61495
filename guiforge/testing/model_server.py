"""A local HTTP server that speaks the OpenAI chat-completions and Anthropic messages wire
formats, for tests and benchmarks driven through the official SDKs.

Replies come from a ``responder(provider, request_json)``: a string is the reply's text;
a dict is the message itself, so a responder can answer as GUI models do: for OpenAI
``{"content": None, "tool_calls": [{"function": {"name", "arguments"}}], "reasoning_content":
...}`` (ids and types are filled in), for Anthropic ``{"content": [{"type": "thinking", ...},
{"type": "text", ...}, {"type": "tool_use", "name", "input"}]}``. The server can inject
429/5xx faults, heavy-tailed latency and a concurrency limit beyond which it answers 429,
the way real inference servers behave, and misbehave the way broken ones do: a reply body
cut short, an HTML page instead of JSON, no answer at all (:class:`ServerBehaviour`).
:class:`~guiforge.harness.formats.family_models.FamilyModel` is a responder that answers as
one model family does (Claude computer use, Qwen2.5-VL, Qwen3-VL, UI-TARS-1.5,
OpenAI-compatible tools), in that family's format and pixels.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Responder = Callable[[str, dict[str, Any]], "str | dict[str, Any]"]


@dataclass
class ServerBehaviour:
    fail_first: int = 0  # answer the first N requests with fail_status
    fail_status: int = 429
    concurrency_limit: int | None = None  # beyond it: 429, as vLLM/SGLang front-ends do
    latency: Callable[[random.Random], float] | None = None  # seconds per request
    seed: int = 0
    # the next N requests (after fail_first) misbehave: "truncated" (the reply cut in half),
    # "malformed" (a 200 HTML page), "hang" (nothing until hang_s, then the connection closes)
    misbehave_first: int = 0
    misbehaviour: Literal["truncated", "malformed", "hang"] = "truncated"
    hang_s: float = 10.0


@dataclass
class Recorded:
    provider: str
    body: dict[str, Any]
    status: int
    started: float
    finished: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names


def lognormal_latency(median_s: float = 0.2, p99_s: float = 2.0) -> Callable[[random.Random], float]:
    """A heavy-tailed latency: lognormal with the given median and 99th percentile."""
    sigma = math.log(p99_s / median_s) / 2.3263  # z(0.99)
    mu = math.log(median_s)
    return lambda rng: rng.lognormvariate(mu, sigma)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _prompt_text(provider: str, body: dict[str, Any]) -> str:
    parts = [body.get("system", "")] if provider == "anthropic" else [body.get("instructions", "")]
    for m in body.get("messages", body.get("input", [])):
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):  # an assistant turn of tool calls alone has no content
            parts.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(p for p in parts if isinstance(p, str))


@dataclass
class ModelServer:
    responder: Responder
    behaviour: ServerBehaviour = field(default_factory=ServerBehaviour)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._misbehaved = 0
        self.max_in_flight = 0
        self._rng = random.Random(self.behaviour.seed)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else each small reply waits ~40 ms for its ACK

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                if self.path.endswith("/chat/completions"):
                    status, payload = server._handle("openai", body, headers)
                elif self.path.endswith("/messages"):
                    status, payload = server._handle("anthropic", body, headers)
                elif self.path.endswith("/responses"):  # OpenAI's Responses API (computer use)
                    status, payload = server._handle("responses", body, headers)
                else:
                    status, payload = 404, {"error": {"message": f"no route {self.path}"}}
                data, kind = json.dumps(payload).encode(), "application/json"
                how = server._misbehaviour() if status == 200 else None
                if how == "hang":
                    time.sleep(server.behaviour.hang_s)
                    self.close_connection = True
                    return
                if how == "truncated":
                    data = data[: len(data) // 2]
                elif how == "malformed":
                    data, kind = b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after-ms", "50")
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- behaviour ---------------------------------------------------------------------
    def _misbehaviour(self) -> str | None:
        with self._lock:
            if self._misbehaved >= self.behaviour.misbehave_first:
                return None
            self._misbehaved += 1
            return self.behaviour.misbehaviour

    def _handle(self, provider: str, body: dict[str, Any],
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        b = self.behaviour
        rec = Recorded(provider, body, 200, time.perf_counter(), headers=headers or {})
        with self._lock:
            self.requests.append(rec)
            n = len(self.requests)
            over = b.concurrency_limit is not None and self._in_flight >= b.concurrency_limit
            if not over:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
            delay = b.latency(self._rng) if b.latency else 0.0
        if over or n <= b.fail_first:
            if not over:  # it took a slot above: give it back
                with self._lock:
                    self._in_flight -= 1
            rec.status = 429 if over else b.fail_status
            rec.finished = time.perf_counter()
            return rec.status, _error(provider, rec.status)
        try:
            if delay:
                time.sleep(delay)
            answer = self.responder(provider, body)
        finally:
            with self._lock:
                self._in_flight -= 1
        rec.finished = time.perf_counter()
        prompt = _tokens(_prompt_text(provider, body))
        model = body.get("model", "local-model")
        out = _tokens(answer if isinstance(answer, str) else json.dumps(answer))
        if provider == "openai":
            message = _openai_message(answer, n)
            return 200, {
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
            }
        if provider == "responses":
            return 200, _responses_payload(answer, n, model, prompt, out)
        blocks = _anthropic_blocks(answer, n)
        return 200, {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": out},
        }


def _openai_message(answer: str | dict[str, Any], n: int) -> dict[str, Any]:
    if isinstance(answer, str):
        return {"role": "assistant", "content": answer}
    message = {"role": "assistant", "content": None, **answer}
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        calls.append({"id": call.get("id") or f"call_{n}_{i}", "type": "function", **call})
    if calls:
        message["tool_calls"] = calls
    return message


def _anthropic_blocks(answer: str | dict[str, Any], n: int) -> list[dict[str, Any]]:
    if isinstance(answer, str):
        return [{"type": "text", "text": answer}]
    blocks = []
    for i, block in enumerate(answer.get("content") or []):
        if block.get("type") == "tool_use":
            block = {"id": f"toolu_{n}_{i}", **block}
        elif block.get("type") == "thinking":
            block = {"signature": "local", **block}
        blocks.append(block)
    return blocks


def _responses_payload(answer: str | dict[str, Any], n: int, model: str, prompt: int, out: int) -> dict[str, Any]:
    """A Responses API reply: a string is a message; a dict gives ``output`` items (ids,
    call ids and statuses filled in)."""
    items = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}] \
        if isinstance(answer, str) else list(answer.get("output") or [])
    output = []
    for i, item in enumerate(items):
        item = {"id": f"item_{n}_{i}", "status": "completed", **item}
        if item.get("type") == "computer_call":
            item = {"call_id": f"call_{n}_{i}", "pending_safety_checks": [], **item}
        elif item.get("type") == "function_call":
            item = {"call_id": f"call_{n}_{i}", **item}
        output.append(item)
    return {"id": f"resp_{n}", "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": model, "output": output,
            "usage": {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out}}


def _error(provider: str, status: int) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    if provider == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": f"simulated {status}"}}
    return {"error": {"message": f"simulated {status}", "type": kind, "code": status}}
