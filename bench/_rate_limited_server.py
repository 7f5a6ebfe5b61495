"""The rate-limited, heavy-tailed model server that bench/models.py and bench/judge.py run in
a process of their own (guiforge.testing.model_server underneath): at most ``limit``
requests at once, 429 with retry-after beyond, a lognormal latency seeded by the request's
last user text, and the statistics both benches report.

``serve(conn, ...)`` is a ``multiprocessing`` target: it sends the server's OpenAI base URL
on ``conn``, waits for any message (stop), then sends its statistics.
"""

from __future__ import annotations

import heapq
import json
import random
import time
from typing import Any

# What the server answers, by name (a process target's arguments must pickle: no lambdas).
ANSWERS = ("action", "verdict")


def latency_of(text: str, seed: int, median_s: float, p99_s: float) -> float:
    from guiforge.testing.model_server import lognormal_latency

    return lognormal_latency(median_s, p99_s)(random.Random(f"{seed}|{text}"))


def schedule_bound_s(latencies: list[float], slots: int) -> float:
    """Makespan of a zero-overhead client: each call starts the moment a slot frees, in order."""
    free = [0.0] * slots
    for lat in latencies:
        heapq.heappush(free, heapq.heappop(free) + lat)
    return max(free)


def last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(content)


def _answer(kind: str, text: str) -> str:
    if kind == "verdict":  # a judge's verdict, success where the trace shows an answer or typing
        ok = "answer" in text or "type" in text
        return json.dumps({"success": ok, "score": 0.8 if ok else 0.2, "rationale": "bench verdict"})
    return f"click(500, 500) for {text[:16]}"


def serve(conn, limit: int, seed: int, median_s: float, p99_s: float, answer: str = "action") -> None:
    import socketserver
    from http.server import ThreadingHTTPServer

    from guiforge.testing.model_server import ModelServer, ServerBehaviour

    # Two socketserver defaults that no real inference server keeps (this process runs only
    # the server, so changing them here touches nothing else): a listen backlog of 5, which
    # drops SYNs when 32 clients connect at once (a dropped SYN costs a 1 s retransmit), and
    # Nagle's algorithm, which holds the reply body (written after the headers) until the
    # client's delayed ACK, ~40 ms per request: that alone idled 2 of 16 slots here.
    ThreadingHTTPServer.request_queue_size = 1024
    socketserver.StreamRequestHandler.disable_nagle_algorithm = True

    drawn: list[float] = []  # list.append is atomic: the handler threads share it safely

    def reply(provider: str, body: dict[str, Any]) -> str:
        text = last_user_text(body)
        latency = latency_of(text, seed, median_s, p99_s)
        drawn.append(latency)
        time.sleep(latency)  # inside the server's in-flight window
        return _answer(answer, text)

    with ModelServer(reply, ServerBehaviour(concurrency_limit=limit)) as server:
        conn.send(server.openai_base_url)
        conn.recv()  # stop
        served = [r for r in server.requests if r.status == 200]
        conn.send({
            "requests": len(server.requests), "served": len(served),
            "rejected_429": sum(r.status == 429 for r in server.requests),
            "max_in_flight": server.max_in_flight, "drawn": drawn,
            "busy_s": sum(r.finished - r.started for r in served), "drawn_s": sum(drawn),
            "span_s": (max(r.finished for r in served) - min(r.started for r in server.requests)) if served else 0.0,
        })
