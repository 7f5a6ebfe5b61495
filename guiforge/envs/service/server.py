"""The environment service: a host's environment manager behind an HTTP API (FastAPI on
uvicorn), so gates and rollouts on other machines lease its instances.

Every request carries the shared token (``Authorization: Bearer <token>``, the token from
``GUIFORGE_ENVS_TOKEN``); one without it is refused with 401. The API:

- ``GET /health``: the kinds served and the slots; ``GET /capacity``: slots, leases,
  reaped sessions, busy and leased seconds (utilisation)
- ``POST /leases`` ``{spec, deadline_s, ttl_s}``: a lease on a slot (503 when none came
  free by the deadline)
- ``POST /leases/{id}/reset`` (a frame holding the task), ``GET .../observe``,
  ``POST .../step`` (an action): frames (guiforge.envs.service.wire) whose screenshot
  travels as raw bytes
- ``GET .../final_state``: the final state as a frame (a workspace as a tar archive);
  ``POST .../evaluate``: this host's verifier's verdict on it
- ``POST .../renew``, ``DELETE /leases/{id}``: keep alive, release

A lease that is gone answers 410; an environment fault answers 502 with
``{"failure": "env_failure", "message": ...}``: the client turns both into env_failure.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

# heavy: fastapi and starlette are needed only where the service runs (guiforge envs serve)
from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError

from guiforge.envs.actions import Action
from guiforge.envs.base import EnvFailure, EnvSpec, TaskSpec
from guiforge.envs.kinds import resolve_kind
from guiforge.envs.manager import Deadlines, EnvManager
from guiforge.envs.service import TOKEN_VARIABLE, wire
from guiforge.envs.service.leases import LeaseGone, LeaseTable, NoSlot
from guiforge.verify.runner import VerifierFailure


class AcquireRequest(BaseModel):
    spec: EnvSpec
    deadline_s: float = Field(default=60.0, gt=0, le=3600)
    ttl_s: float = Field(default=300.0, gt=0, le=86400)


class EnvHost:
    """What one service process holds: the kinds it serves, its manager and its leases."""

    def __init__(self, kinds: list[str], capacity: int, deadlines: Deadlines | None = None):
        self.kinds = sorted(kinds)
        factories = {domain: resolve_kind(domain).make for domain in self.kinds}
        # the service reaps leases itself (per lease time to live): the manager's own never fires
        deadlines = deadlines or Deadlines()
        deadlines.lease_ttl_s = float("inf")
        self.manager = EnvManager(factories, deadlines=deadlines, max_instances=capacity)
        self.leases = LeaseTable(self.manager, capacity)

    def close(self) -> None:
        self.leases.close()
        self.manager.close()


def create_app(host: EnvHost, token: str) -> FastAPI:
    if not token:
        raise ValueError(f"the environment service needs a token: set {TOKEN_VARIABLE}")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        # heavy: anyio comes with starlette; an acquire waiting for a slot holds a thread
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = max(40, 4 * host.leases.capacity + 8)
        yield
        host.close()

    def authorised(request: Request) -> None:
        given = request.headers.get("authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise HTTPException(401, f"missing or wrong token (Authorization: Bearer ${TOKEN_VARIABLE})")

    app = FastAPI(title="guiforge environments", lifespan=lifespan, dependencies=[Depends(authorised)])

    @app.exception_handler(LeaseGone)
    def _gone(request: Request, exc: LeaseGone) -> JSONResponse:
        return JSONResponse({"failure": "lease_lost", "message": str(exc)}, status_code=410)

    @app.exception_handler(NoSlot)
    def _full(request: Request, exc: NoSlot) -> JSONResponse:
        return JSONResponse({"failure": "no_slot", "message": str(exc)}, status_code=503)

    @app.exception_handler(EnvFailure)
    def _env(request: Request, exc: EnvFailure) -> JSONResponse:
        return JSONResponse({"failure": "env_failure", "message": str(exc)}, status_code=502)

    @app.exception_handler(VerifierFailure)
    def _verifier(request: Request, exc: VerifierFailure) -> JSONResponse:
        return JSONResponse({"failure": "verifier_failure", "message": str(exc)}, status_code=500)

    def frame(op: Callable[[], Any]) -> Response:
        """``op``'s document as a frame; ``Server-Timing`` says how long the environment took
        (a client's round trip less that is what the service adds)."""
        started = time.perf_counter()
        doc = op()
        took = 1000 * (time.perf_counter() - started)
        return Response(content=wire.pack(doc), media_type=wire.MEDIA_TYPE,
                        headers={"Server-Timing": f"env;dur={took:.2f}"})

    @contextlib.contextmanager
    def using(lease_id: str, screenshots: bool | None = None) -> Iterator[Any]:
        with host.leases.use(lease_id) as held:
            if screenshots is not None:
                held.lease.capture(screenshots)
            yield held.lease

    @app.get("/health")
    def health() -> dict:
        return {"ok": True, "kinds": host.kinds, **host.leases.figures()}

    @app.get("/capacity")
    def capacity() -> dict:
        return {"kinds": host.kinds, **host.leases.figures(), "manager": vars(host.manager.stats) | {
            "faults": host.manager.stats.faults[-20:]}}

    @app.post("/leases", status_code=201)
    def acquire(body: AcquireRequest) -> dict:
        if body.spec.domain not in host.kinds:
            raise HTTPException(400, f"this host serves {', '.join(host.kinds)}, not {body.spec.domain!r}")
        held = host.leases.acquire(body.spec, body.deadline_s, body.ttl_s)
        return {"lease": held.lease_id, "ttl_s": held.ttl_s}

    @app.post("/leases/{lease_id}/reset")
    async def reset(lease_id: str, request: Request, screenshots: bool = True) -> Response:
        try:
            task = TaskSpec.model_validate(wire.unpack(await request.body())["task"])
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            raise HTTPException(422, f"reset: the body is not a task frame: {' '.join(str(exc).split())[:300]}") from None
        return await _threaded(lambda: _reset(lease_id, task, screenshots))

    def _reset(lease_id: str, task: TaskSpec, screenshots: bool) -> Response:
        with using(lease_id, screenshots) as lease:
            return frame(lambda: wire.observation_doc(lease.reset(task)))

    @app.get("/leases/{lease_id}/observe")
    def observe(lease_id: str, screenshots: bool = True) -> Response:
        with using(lease_id, screenshots) as lease:
            return frame(lambda: wire.observation_doc(lease.observe()))

    @app.post("/leases/{lease_id}/step")
    def step(lease_id: str, action: Action, screenshots: bool = True) -> Response:
        with using(lease_id, screenshots) as lease:
            return frame(lambda: wire.step_doc(lease.step(action)))

    @app.get("/leases/{lease_id}/final_state")
    def final_state(lease_id: str) -> Response:
        with using(lease_id) as lease:
            return frame(lambda: wire.final_state_doc(lease.final_state()))

    @app.post("/leases/{lease_id}/evaluate")
    def evaluate(lease_id: str) -> dict:
        with using(lease_id) as lease:
            return lease.evaluate().as_dict()

    @app.post("/leases/{lease_id}/renew")
    def renew(lease_id: str) -> dict:
        held = host.leases.renew(lease_id)
        return {"lease": lease_id, "ttl_s": held.ttl_s}

    @app.delete("/leases/{lease_id}")
    def release(lease_id: str) -> dict:
        host.leases.release(lease_id)
        return {"released": lease_id}

    return app


async def _threaded(fn: Callable[[], Any]) -> Any:
    """Run blocking environment work off the event loop (the body was read on it)."""
    # heavy: see the fastapi import
    import anyio.to_thread

    return await anyio.to_thread.run_sync(fn)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts so port 0 gives a real port to print."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def serve(kinds: list[str], capacity: int, host: str, port: int, token: str,
          announce: Callable[[str], None] = print) -> None:
    """Serve until SIGINT/SIGTERM; ``announce`` gets the address once the socket listens."""
    # heavy: uvicorn, only where the service runs
    import uvicorn

    env_host = EnvHost(kinds, capacity)
    app = create_app(env_host, token)
    sock = bind(host, port)
    where = sock.getsockname()
    shown = f"[{where[0]}]" if sock.family == socket.AF_INET6 else where[0]
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=10)
    server = uvicorn.Server(config)
    announce(f"guiforge envs: serving {', '.join(env_host.kinds)} ({capacity} slots) on http://{shown}:{where[1]}")
    server.run(sockets=[sock])
