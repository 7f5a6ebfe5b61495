"""A TCP listener that accepts and counts connections, for tests that prove nothing
reaches the network (a browser's leaks, a replay that should never go live)."""

from __future__ import annotations

import socket
import threading
import time


class CountingListener:
    """Listens on ``host:port`` (port 0: any free one) until ``close`` or ``lifetime_s``
    (bounded even if a test forgets to close it); ``connections`` counts what arrived."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, backlog: int = 64, lifetime_s: float = 600.0):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(backlog)
        self.sock.settimeout(0.2)
        self.host, self.port = self.sock.getsockname()
        self.connections = 0
        self._lifetime_s = lifetime_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        deadline = time.monotonic() + self._lifetime_s
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
