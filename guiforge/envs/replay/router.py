"""Answer every request of a replayed page from its recording; nothing reaches the network.

A request is matched by :meth:`Normalizer.request_key`. A key recorded several times is
answered in recorded order, then its last answer repeats. An unmatched request gets a plain
404 that says so, and is logged (``misses``). Recorded redirects are not fulfilled as 3xx:
Chromium sends the follow-up of a fulfilled redirect to the network without routing it (seen
with Playwright 1.65 / Chromium 156), so a navigation is redirected by a tiny page that calls
``location.replace`` (history ends the same way a real redirect leaves it) and a subresource
gets the end of its redirect chain directly.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

from playwright.sync_api import BrowserContext, Route, WebSocketRoute

from guiforge.envs.replay.normalize import Normalizer
from guiforge.envs.replay.recording import Exchange, Recording

log = logging.getLogger("guiforge.envs.replay")

MAX_REDIRECTS = 10


class ReplayRouter:
    """Serves one recording per episode; :meth:`load` starts the next episode (the context and
    its route handler stay, so a reset needs no new renderer process)."""

    def __init__(self, recording: Recording, name: str = "recording"):
        self.origins: set[str] = set()  # every origin a page asked for: where state may live
        self.load(recording, name)

    def load(self, recording: Recording, name: str) -> None:
        self.recording, self.name = recording, name
        self.normalizer = Normalizer(recording.normalizer)
        self.by_key: dict[str, list[Exchange]] = defaultdict(list)
        for ex in recording.exchanges:
            self.by_key[ex.key].append(ex)
        self.used: dict[str, int] = defaultdict(int)
        self.served = 0
        self.misses: list[str] = []
        self.blocked: list[str] = []  # WebSockets: not recorded, always refused
        self.submitted: list[dict[str, Any]] = []  # non-GET requests the episode made (for verifiers)

    def install(self, context: BrowserContext) -> None:
        context.route("**/*", self._on_request)
        context.route_web_socket("**/*", self._on_websocket)

    def lookup(self, method: str, url: str, body: bytes | str | None, content_type: str | None) -> Exchange | None:
        key = self.normalizer.request_key(method, url, body, content_type)
        answers = self.by_key.get(key)
        if not answers:
            return None
        i = self.used[key]
        self.used[key] = i + 1
        return answers[min(i, len(answers) - 1)]

    def _on_request(self, route: Route) -> None:
        req = route.request
        parts = urlsplit(req.url)
        self.origins.add(f"{parts.scheme}://{parts.netloc}")
        ctype = req.headers.get("content-type")
        body = req.post_data_buffer
        if req.method not in ("GET", "HEAD", "OPTIONS"):
            self.submitted.append(_describe(req.method, req.url, body, ctype))
        ex = self.lookup(req.method, req.url, body, ctype)
        if ex is None:
            self._miss(route, f"{req.method} {req.url}")
            return
        self.served += 1
        if ex.status == 0:  # it failed when recorded: fail the same way
            route.abort("failed")
            return
        location = ex.header("location")
        if 300 <= ex.status < 400 and location:
            target = urljoin(ex.url, location)
            if req.is_navigation_request():
                page = f"<!doctype html><script>location.replace({json.dumps(target)})</script>"
                route.fulfill(status=200, body=page, headers={**_headers(ex, skip=("location", "content-type")),
                                                               "content-type": "text/html"})
                return
            final = self._follow(target)
            if final is None:
                self._miss(route, f"GET {target} (redirected from {req.method} {req.url})")
                return
            ex = final
        route.fulfill(status=ex.status, headers=_headers(ex), body=ex.body)

    def _follow(self, url: str) -> Exchange | None:
        for _ in range(MAX_REDIRECTS):
            ex = self.lookup("GET", url, None, None)
            location = ex.header("location") if ex else None
            if ex is None or not (300 <= ex.status < 400 and location):
                return ex
            url = urljoin(ex.url, location)
        return None

    def _miss(self, route: Route, what: str) -> None:
        self.misses.append(what)
        log.warning("replay %s: no recorded response for %s; answered 404", self.name, what)
        route.fulfill(status=404, content_type="text/plain",
                      body=f"guiforge replay: {what} is not in the recording {self.name}")

    def _on_websocket(self, ws: WebSocketRoute) -> None:
        self.blocked.append(ws.url)
        ws.close(code=1008, reason="WebSockets are not recorded; a replay has no network")


def _headers(ex: Exchange, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Recorded header pairs -> Playwright's dict (several Set-Cookie lines joined by \\n)."""
    out: dict[str, str] = {}
    for name, value in ex.headers:
        if name in skip:
            continue
        out[name] = f"{out[name]}\n{value}" if name in out and name == "set-cookie" else value
    return out


def _describe(method: str, url: str, body: bytes | None, ctype: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"method": method, "url": url}
    if body and "urlencoded" in (ctype or ""):
        out["form"] = dict(parse_qsl(body.decode(errors="replace"), keep_blank_values=True))
    elif body:
        out["body"] = body.decode(errors="replace")[:2000]
    return out
