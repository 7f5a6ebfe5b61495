"""One recording per test session: the volatile site is started on 127.0.0.1, browsed once
(load, fill the form, submit, follow the redirect) and stopped. A listener then takes over
its port, so any replay request that reached the network would be counted."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from volatile_site import VolatileSite

from guiforge.envs.replay import NormalizerConfig, record

# A site-specific token (the API's request id) shows the configurable part of the normaliser.
CONFIG = NormalizerConfig(token_patterns=[r'"request_id":\s*"([^"]+)"'])


def browse(page) -> None:
    page.fill("#item", "Teapot")
    page.click("#order")
    page.wait_for_url("**/thanks?order=*")


class PortListener:
    """Accepts and counts connections on a port the replayed site used to own."""

    def __init__(self, port: int):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        deadline = time.monotonic() + 600
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """(recording path, the stopped site, a listener on its port)."""
    site = VolatileSite().start()
    path = Path(tmp_path_factory.mktemp("replay")) / "volatile-shop.json"
    try:
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API wants a thread of its own
            pool.submit(record, site.url, path, browse, config=CONFIG).result(timeout=120)
    finally:
        site.stop()
    listener = PortListener(site.port)
    yield path, site, listener
    listener.close()
