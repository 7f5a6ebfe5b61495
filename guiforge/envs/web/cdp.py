"""A CDP connection of our own to the environment's page, beside Playwright's.

Playwright relays every CDP call through its node driver, which parses and re-serialises
each message, a screenshot's ~100-150 KB of base64 included, before Python's Playwright
parses it again. The calls on a reset's and a step's hot path (the seed load, the capture,
the element scan, the hit test, the frame clock) go instead over a WebSocket straight to
the browser's DevTools server: a reset's calls take ~10% less wall and ~14% less CPU
here (``python bench/web_env.py`` times both on the same page, ``transport_*``).
Playwright still owns the browser and does navigation and input.

The DevTools server listens on 127.0.0.1 on a port the kernel picks
(``--remote-debugging-port=0``), inside the browser's own network namespace when it has
one (:mod:`guiforge.envs.web.netns`); Chromium refuses its WebSocket to any client that sends an
``Origin`` header (pages do, this client does not), and a page cannot read its HTTP
answers (no CORS headers), which tests/envs/web/test_web_isolation.py checks.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.sync.client import ClientConnection, connect

from guiforge.envs.web.netns import connect_in

Call = tuple[str, dict[str, Any]]  # a CDP method and its parameters
DEVTOOLS_FLAGS = ("--remote-debugging-port=0",)
REPLY_TIMEOUT_S = 120.0  # a safety net: the manager's deadlines kill a stuck browser sooner


class CdpError(RuntimeError):
    """The browser answered a call with an error."""


def devtools_url(browser_pid: int, wait_s: float = 5.0) -> str:
    """The browser's DevTools WebSocket URL, from the ``DevToolsActivePort`` file Chromium
    writes into its profile folder (Playwright's ``--user-data-dir``) once it listens."""
    args = Path(f"/proc/{browser_pid}/cmdline").read_bytes().split(b"\0")
    profiles = [a.split(b"=", 1)[1].decode() for a in args if a.startswith(b"--user-data-dir=")]
    if not profiles:
        raise RuntimeError(f"the browser (pid {browser_pid}) was started without --user-data-dir")
    active = Path(profiles[0]) / "DevToolsActivePort"
    deadline = time.monotonic() + wait_s
    while True:
        lines = active.read_text().split() if active.exists() else []
        if len(lines) == 2:
            port, path = lines
            return f"ws://127.0.0.1:{port}{path}"
        if time.monotonic() > deadline:
            raise RuntimeError(f"Chromium did not open its DevTools port ({active} missing); is {DEVTOOLS_FLAGS[0]} passed?")
        time.sleep(0.01)


class PageChannel:
    """One WebSocket to the browser, attached to one page target (flat session). One thread
    uses it at a time; a second thread (the frame clock) opens a channel of its own."""

    def __init__(self, url: str, target_id: str, timeout_s: float = REPLY_TIMEOUT_S, netns: int | None = None):
        self.timeout_s = timeout_s
        self.target_id = target_id
        # a browser in a network namespace of its own is reached by a socket made there
        parts = urlsplit(url)
        sock = None if netns is None else connect_in(netns, (parts.hostname or "127.0.0.1", parts.port or 80), timeout_s)
        self.ws: ClientConnection = connect(url, sock=sock, max_size=None, compression=None, open_timeout=timeout_s)
        self._ids = itertools.count(1)
        self.session_id: str | None = None
        try:
            attached = self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        except BaseException:
            self.ws.close()
            raise
        self.session_id = attached["sessionId"]

    def send(self, method: str, params: dict[str, Any] | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        return self.send_together([(method, params or {})], timeout_s)[0]

    def send_together(self, calls: list[Call], timeout_s: float | None = None) -> list[dict[str, Any]]:
        """Send the calls without waiting for one reply before the next, so a capture's
        encoding (browser side) overlaps a page script (renderer side). Replies come back
        in the calls' order; the first failure is raised once all have answered. Past
        ``timeout_s`` (default the channel's) ``TimeoutError``; a late reply is skipped later."""
        pending: dict[int, int] = {}
        for index, (method, params) in enumerate(calls):
            message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params}
            if self.session_id is not None:
                message["sessionId"] = self.session_id
            pending[message["id"]] = index
            self.ws.send(json.dumps(message))
        replies: list[dict[str, Any]] = [{}] * len(calls)
        errors: list[tuple[int, str]] = []
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        while pending:
            message = json.loads(self.ws.recv(timeout=max(0.0, deadline - time.monotonic())))
            index = pending.pop(message.get("id"), None)  # events and others' replies are skipped
            if index is None:
                continue
            if "error" in message:
                errors.append((index, message["error"].get("message", str(message["error"]))))
            else:
                replies[index] = message.get("result", {})
        if errors:
            index, text = min(errors)
            raise CdpError(f"{calls[index][0]}: {text}")
        return replies

    def close(self) -> None:
        self.ws.close()
