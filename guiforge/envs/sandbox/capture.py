"""Bounded capture of a command's output: a command that prints forever costs a fixed
amount of memory, and the end of the output (where errors usually are) is kept."""

from __future__ import annotations

import threading
from typing import IO


class BoundedOutput:
    """Keeps the first three quarters of ``limit`` bytes and the last quarter."""

    def __init__(self, limit: int):
        self.head_limit = limit * 3 // 4
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                self.dropped += excess
                del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output omitted ...]\n" if self.dropped else ""
        return (
            self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")
        )


def drain(stream: IO[bytes], sink: BoundedOutput) -> threading.Thread:
    """Read ``stream`` to EOF into ``sink`` on a daemon thread."""

    def pump() -> None:
        try:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                sink.add(chunk)
        except (OSError, ValueError):
            pass

    thread = threading.Thread(target=pump, daemon=True, name="sandbox-drain")
    thread.start()
    return thread


class SentinelCollector:
    """Collects one stream of a persistent shell up to the line ``\\n<token>...\\n`` the
    shell prints after each command; the output is everything before that line."""

    def __init__(self, token: bytes, limit: int):
        self.marker = b"\n" + token
        self.output = BoundedOutput(limit)
        self.pending = bytearray()
        self.status_line: bytes | None = None
        self.leftover = b""  # bytes after the sentinel: a background process wrote them

    @property
    def done(self) -> bool:
        return self.status_line is not None

    def feed(self, data: bytes) -> None:
        if self.done:
            self.leftover += data
            return
        self.pending += data
        at = self.pending.find(self.marker)
        if at >= 0:
            end = self.pending.find(b"\n", at + len(self.marker))
            if end < 0:
                self.output.add(bytes(self.pending[:at]))
                del self.pending[:at]
                return
            self.output.add(bytes(self.pending[:at]))
            self.status_line = bytes(self.pending[at + len(self.marker) : end]).strip()
            self.leftover = bytes(self.pending[end + 1 :])
            self.pending.clear()
            return
        # keep a tail that could be the start of a marker split across reads
        keep = len(self.marker) - 1
        if len(self.pending) > keep:
            cut = len(self.pending) - keep
            self.output.add(bytes(self.pending[:cut]))
            del self.pending[:cut]

    def flush(self) -> None:
        """The stream ended without a sentinel: what arrived is the output."""
        self.output.add(bytes(self.pending))
        self.pending.clear()
