"""The client side of the environment service: a pool of env hosts and the adapter that
drives one leased instance on one of them through the same Environment interface as a
local adapter, so the environment manager, the harness and the gates need no change.

A lease goes to the host with the most free slots (``GET /capacity``); a host that
refuses connections is skipped for a while. An instance back in the client's warm pool
gives its slot back (the host's own warm pool keeps the browser), so a client never holds
a slot it does not use, and the next reset leases again. A reset starts an episode afresh, so a reset
that finds its lease or its host gone leases again (elsewhere if need be). Mid-episode, a
host that dies (connection refused or reset, no answer) or a lease the host no longer
holds is :class:`EnvHostLost`: an env_failure whose message carries
``guiforge.failures.ENV_HOST_LOST``, so a rerun knows to run the episode again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from guiforge.envs.actions import Action
from guiforge.envs.base import (
    EnvFailure,
    Environment,
    EnvSpec,
    FinalState,
    Observation,
    StepResult,
    TaskSpec,
)
from guiforge.envs.service import TOKEN_VARIABLE, wire
from guiforge.failures import ENV_HOST_LOST

DOWN_FOR_S = 5.0  # a host that refused a connection is skipped this long
_LOST = (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.TimeoutException)


class EnvHostLost(EnvFailure):
    """The host serving an instance died, stopped answering, or no longer holds the lease."""

    def __init__(self, detail: str):
        super().__init__(f"{ENV_HOST_LOST}: {detail}")


class _NoSlot(Exception):
    pass


class HostPool:
    """The env hosts a run uses, with one HTTP connection pool for all of them."""

    def __init__(self, urls: Sequence[str], token: str | None = None, read_timeout_s: float = 600.0):
        self.urls = [u.rstrip("/") for u in urls]
        token = token if token is not None else os.environ.get(TOKEN_VARIABLE, "")
        self.http = httpx.Client(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(read_timeout_s, connect=5.0),
            limits=httpx.Limits(max_connections=512, max_keepalive_connections=128))
        self._down: dict[str, float] = {}
        self._seen: dict[str, dict] = {}  # url -> its last /capacity answer
        self._lock = threading.Lock()

    # -- requests -----------------------------------------------------------------------
    def request(self, url: str, method: str, path: str, **kw: Any) -> httpx.Response:
        """One request; a lost host or lease raises EnvHostLost, an env fault EnvFailure."""
        try:
            response = self.http.request(method, url + path, **kw)
        except _LOST as exc:
            self.mark_down(url)
            raise EnvHostLost(f"{url}: {type(exc).__name__}: {' '.join(str(exc).split())[:200] or 'no answer'}") \
                from None
        if response.status_code < 400:
            return response
        message = _message(response)
        if response.status_code == 410:
            raise EnvHostLost(f"{url}: {message}")
        if response.status_code == 503:
            raise _NoSlot(message)
        if response.status_code == 401:
            raise EnvFailure(f"env host {url} refused the token: set {TOKEN_VARIABLE} to the host's token")
        raise EnvFailure(f"env host {url}{path.split('?')[0]}: HTTP {response.status_code}: {message}")

    def mark_down(self, url: str) -> None:
        with self._lock:
            self._down[url] = time.monotonic() + DOWN_FOR_S

    def live(self) -> list[str]:
        """The hosts not marked down; all of them when every one is (a mark only says
        which to try first: a host may be back)."""
        now = time.monotonic()
        with self._lock:
            return [u for u in self.urls if self._down.get(u, 0) <= now] or list(self.urls)

    def capacity(self, url: str) -> dict | None:
        """The host's slots and kinds, or None when it does not answer."""
        try:
            found = self.request(url, "GET", "/capacity", timeout=5.0).json()
        except (EnvFailure, _NoSlot, ValueError):
            return None
        with self._lock:
            self._seen[url] = found
        return found

    def kinds(self) -> set[str] | None:
        """The kinds some host serves (None while no host has ever answered)."""
        with self._lock:
            seen = dict(self._seen)
        if not seen:
            for url in self.live():
                self.capacity(url)
            with self._lock:
                seen = dict(self._seen)
        return {k for found in seen.values() for k in found.get("kinds", ())} if seen else None

    def slots(self, domain: str) -> int | None:
        """Slots for ``domain`` on the hosts last seen alive (None while none answered)."""
        with self._lock:
            seen = {u: f for u, f in self._seen.items() if self._down.get(u, 0) <= time.monotonic()}
        if not seen:
            return None
        return sum(int(f.get("capacity", 0)) for f in seen.values() if domain in f.get("kinds", ()))

    # -- leases -------------------------------------------------------------------------
    def acquire(self, spec: EnvSpec, deadline_s: float, ttl_s: float) -> tuple[str, str]:
        """(host url, lease id) on the live host serving ``spec.domain`` with the most free
        slots, waiting up to ``deadline_s`` for one."""
        until = time.monotonic() + deadline_s
        last = "no env host answered"
        while True:
            ranked, answered = [], 0
            for url in self.live():
                found = self.capacity(url)
                answered += found is not None
                if found is not None and spec.domain in found.get("kinds", ()):
                    ranked.append((-int(found.get("free", 0)), self.urls.index(url), url))
            if not answered:  # every host refuses connections: no slot will come free
                raise EnvHostLost(f"no env host answered ({', '.join(self.urls)})")
            ranked.sort()
            if ranked and ranked[0][0] < 0:
                candidates = [url for free, _, url in ranked if free < 0]
            else:
                candidates = [url for *_, url in ranked[:1]]  # all full: wait on one a little
            for url in candidates:
                left = until - time.monotonic()
                if left <= 0:
                    break
                try:
                    body = {"spec": spec.model_dump(mode="json"), "deadline_s": min(left, 5.0), "ttl_s": ttl_s}
                    return url, self.request(url, "POST", "/leases", json=body).json()["lease"]
                except _NoSlot as exc:
                    last = f"{url}: {exc}"
                except EnvHostLost as exc:
                    last = str(exc)
            if not ranked:
                raise EnvFailure(f"no live env host serves {spec.domain!r} (hosts: {', '.join(self.urls)})")
            if time.monotonic() >= until:
                raise EnvHostLost(f"no {spec.domain} slot within {deadline_s:.0f}s: {last}")

    def release(self, url: str, lease_id: str, timeout_s: float = 10.0) -> None:
        # gone already, or the host is: either way the lease is not ours any more
        with contextlib.suppress(EnvFailure, _NoSlot):
            self.request(url, "DELETE", f"/leases/{lease_id}", timeout=timeout_s)

    def close(self) -> None:
        self.http.close()


def _server_ms(response: httpx.Response) -> float | None:
    """The ``env`` duration of a ``Server-Timing: env;dur=12.3`` header, in ms."""
    for part in response.headers.get("server-timing", "").split(";"):
        if part.strip().startswith("dur="):
            try:
                return float(part.strip()[4:])
            except ValueError:
                return None
    return None


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text.split())[:300]
    if isinstance(body, dict):
        return str(body.get("message") or body.get("detail") or body)[:300]
    return str(body)[:300]


class RemoteEnv(Environment):
    """One instance leased from an env host, driven over HTTP (see the module)."""

    def __init__(self, spec: EnvSpec, pool: HostPool, ttl_s: float = 300.0, acquire_s: float = 45.0):
        super().__init__(spec)
        self.domain = spec.domain
        self.pool, self.ttl_s, self.acquire_s = pool, ttl_s, acquire_s
        self.url: str | None = None
        self.lease_id: str | None = None
        self.lost = False
        self.host_ms: float | None = None  # the host's own time for the last operation (Server-Timing)
        self._workspace: Path | None = None

    def start(self) -> None:
        self._acquire()

    def _acquire(self) -> None:
        self.url, self.lease_id = self.pool.acquire(self.spec, self.acquire_s, self.ttl_s)
        self.lost = False

    def _call(self, method: str, op: str, **kw: Any) -> httpx.Response:
        if self.url is None or self.lease_id is None or self.lost:
            raise EnvHostLost(f"{op}: this instance's lease is gone")
        shots = "1" if self.capture_screenshots else "0"
        try:
            response = self.pool.request(self.url, method, f"/leases/{self.lease_id}/{op}?screenshots={shots}", **kw)
        except EnvHostLost:
            self.lost = True
            raise
        self.host_ms = _server_ms(response)
        return response

    def reset(self, task: TaskSpec) -> Observation:
        self._clear_workspace()
        self.answer = self.status = None
        if self.lease_id is None:  # parked in the pool without a slot (idle): lease one now
            self._acquire()
        body = wire.pack({"task": task.model_dump(mode="python")})
        headers = {"content-type": wire.MEDIA_TYPE}
        try:
            response = self._call("POST", "reset", content=body, headers=headers)
        except EnvHostLost:
            # nothing of an episode is lost before its reset: lease again, elsewhere if need be
            self._drop()
            self._acquire()
            response = self._call("POST", "reset", content=body, headers=headers)
        return wire.observation_of(wire.unpack(response.content))

    def observe(self) -> Observation:
        return wire.observation_of(wire.unpack(self._call("GET", "observe").content))

    def step(self, action: Action) -> StepResult:
        result = wire.step_of(wire.unpack(self._call("POST", "step", json=action.model_dump(mode="json")).content))
        if result.done:  # the host's adapter ended the episode: its answer is the episode's
            self.answer, self.status = result.answer, result.status
        return result

    def final_state(self) -> FinalState:
        doc = wire.unpack(self._call("GET", "final_state").content)
        self._clear_workspace()
        if doc.get("workspace") is not None:
            self._workspace = Path(tempfile.mkdtemp(prefix="guiforge-remote-ws-"))
        return wire.final_state_of(doc, self._workspace)

    def healthy(self) -> bool:
        # the host checks its instance after every step (an unhealthy one answers 502)
        return not self.lost

    def idle(self) -> None:
        """Back in the client's pool: the slot goes back to the host (its warm pool keeps the
        instance), so no client holds a slot it does not use; the next reset leases again."""
        self._drop()
        self._clear_workspace()

    def kill(self) -> None:
        self._drop(timeout_s=2.0)
        self._clear_workspace()

    def close(self) -> None:
        self._drop()
        self._clear_workspace()

    def _drop(self, timeout_s: float = 10.0) -> None:
        if self.url is not None and self.lease_id is not None and not self.lost:
            self.pool.release(self.url, self.lease_id, timeout_s)
        self.url = self.lease_id = None

    def _clear_workspace(self) -> None:
        if self._workspace is not None:
            shutil.rmtree(self._workspace, ignore_errors=True)
            self._workspace = None
