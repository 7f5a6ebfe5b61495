"""A remote pool as an environment kind: a pipeline's ``envs: [http://host:port, ...]``
gives every domain the hosts serve a kind that keeps the facts of the domain's own kind
(action set, prompt surface, setup builder, graded reward) and makes
:class:`~guiforge.envs.service.client.RemoteEnv` instances instead of local ones. A domain
no host serves (tools, say) keeps its local instances."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from guiforge.envs.base import Environment, EnvSpec
from guiforge.envs.kind import EnvKind
from guiforge.envs.kinds import KindOf, RunKinds
from guiforge.envs.service.client import HostPool, RemoteEnv


def host_problem(url: Any) -> str | None:
    """Why ``url`` is not an env host address (``http://host:port``), or None."""
    if not isinstance(url, str):
        return f"{url!r} is not a URL; give http://host:port"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an env host address; give http://host:port (guiforge envs serve)"
    try:
        parts.port  # noqa: B018 - a port that is not a number raises
    except ValueError:
        return f"{url!r}: the port is not a number"
    return None


class RemoteKind(KindOf):
    """The facts of ``facts`` (the domain's own kind), instances on the env hosts; the setup is
    built here, from this run's worlds, then sent, and the verifier runs here, on the final
    state the host sends."""

    def __init__(self, facts: EnvKind, pool: HostPool, lease_ttl_s: float = 300.0, acquire_s: float = 45.0):
        super().__init__(facts)
        self.pool = pool
        self.lease_ttl_s, self.acquire_s = lease_ttl_s, acquire_s

    @property
    def capacity(self) -> int | None:  # type: ignore[override]
        # the slots of the live hosts serving this domain: more instances would only queue
        return self.pool.slots(self.domain)

    def make(self, spec: EnvSpec) -> Environment:
        served = self.pool.kinds()
        if served is not None and spec.domain not in served:
            return self.facts.make(spec)  # no host serves it: local instances
        return RemoteEnv(spec, self.pool, ttl_s=self.lease_ttl_s, acquire_s=self.acquire_s)


_pools: dict[tuple[str, ...], HostPool] = {}
_lock = threading.RLock()


def host_pool(urls: Sequence[str]) -> HostPool:
    """One pool per process for a set of hosts (its HTTP connections are shared)."""
    key = tuple(u.rstrip("/") for u in urls)
    with _lock:
        if key not in _pools:
            _pools[key] = HostPool(key)
        return _pools[key]


class RemoteKinds(RunKinds):
    """A run's kinds when its environments are on env hosts: each domain's kind (declared or
    registered), made remote."""

    def __init__(self, hosts: Sequence[str], declared: Mapping[str, str] | None = None,
                 lease_ttl_s: float = 300.0, acquire_s: float = 45.0):
        super().__init__(declared)
        self.hosts = list(hosts)
        self.lease_ttl_s, self.acquire_s = lease_ttl_s, acquire_s
        self._remote: dict[str, RemoteKind] = {}

    def kind(self, domain: str) -> EnvKind:
        facts = super().kind(domain)
        with _lock:
            hit = self._remote.get(domain)
            if hit is None or hit.facts is not facts:
                hit = self._remote[domain] = RemoteKind(facts, host_pool(self.hosts), self.lease_ttl_s,
                                                        self.acquire_s)
            return hit
