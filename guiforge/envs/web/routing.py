"""Serving the apps and walling off the network, both inside the browser context.

The apps are route-fulfilled from memory under a reserved origin (``http://apps.guiforge.test``)
instead of served by a local HTTP server: no listening socket that other processes (or other
environments' pages) could reach, no port to allocate per instance, and the one handler that
serves the apps is also the one that blocks everything else. Requests to loopback
(127.0.0.1, localhost) pass through as the design allows (to the browser's own loopback:
it runs in a network namespace of its own, see :mod:`guiforge.envs.web.netns`); anything
else is aborted. Routing
misses preconnects and Chromium's own pings, so the launch flags also map every other host
to NOTFOUND (see :mod:`guiforge.envs.web.browser`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, Route, WebSocketRoute

from guiforge.envs.apps import assets, shell

APP_HOST = "apps.guiforge.test"
APP_ORIGIN = f"http://{APP_HOST}"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOOPBACK_HOSTS


class Router:
    """Counts what it served and what it blocked, so tests and health checks can see it."""

    def __init__(self) -> None:
        self.served = 0
        self.blocked: list[str] = []

    def install(self, context: BrowserContext) -> None:
        context.route("**/*", self._on_request)
        context.route_web_socket("**/*", self._on_websocket)

    def _on_request(self, route: Route) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname == APP_HOST:
            body, kind = assets().get(parts.path) or shell()
            if parts.path.startswith("/static/") and parts.path not in assets():
                route.fulfill(status=404, body=b"not found", content_type="text/plain")
                return
            self.served += 1
            route.fulfill(status=200, body=body, headers={"content-type": kind, "cache-control": "no-store"})
            return
        if is_loopback(url):
            route.fallback()
            return
        self.blocked.append(url)
        route.abort("blockedbyclient")

    def _on_websocket(self, ws: WebSocketRoute) -> None:
        if is_loopback(ws.url):
            ws.connect_to_server()
            return
        self.blocked.append(ws.url)
        ws.close(code=1008, reason="network access is blocked in this environment")
