"""How long a unit of work held environment leases and how long their instances were busy
(an operation in flight): utilisation is busy over leased. An instance leased and idle is
one that waits on something else, usually the model. The engine counts each shard
(``counting()`` around it; the stages' pool threads carry the context), and the manager's
leases add to whatever count is current when they are acquired."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class EnvUsage:
    busy_s: float = 0.0
    leased_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, busy_s: float = 0.0, leased_s: float = 0.0) -> None:
        with self._lock:
            self.busy_s += busy_s
            self.leased_s += leased_s

    def figures(self) -> dict[str, float]:
        return {"busy_s": round(self.busy_s, 3), "leased_s": round(self.leased_s, 3)}


_CURRENT: contextvars.ContextVar[EnvUsage | None] = contextvars.ContextVar("guiforge_env_usage", default=None)


def current() -> EnvUsage | None:
    """The count leases acquired here add to (None: nobody counts)."""
    return _CURRENT.get()


@contextmanager
def counting() -> Iterator[EnvUsage]:
    """Count the leases acquired inside the block (and in pool threads that carry its context)."""
    usage = EnvUsage()
    token = _CURRENT.set(usage)
    try:
        yield usage
    finally:
        _CURRENT.reset(token)
