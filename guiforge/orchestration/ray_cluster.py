"""``executor: ray``: the run's shards on a Ray cluster, through prefect-ray's RayTaskRunner.

One connection per run, not per stage: :func:`ray_session` joins the cluster (or starts a
local one, sized by ``workers``) before the first stage, and every stage's RayTaskRunner
finds Ray initialized and uses it (prefect-ray then neither starts nor stops a cluster).
Shards read and commit through the lake as on any executor (lake/commit.py makes two
writers of one shard safe), so the rows are the same as a local run's.

Each shard asks Ray for what its stage needs (``ray.resources`` in the pipeline file, by
stage name, the name it was declared under, or its kind): ``num_cpus``, ``num_gpus`` and
``memory`` are Ray's own; any other name is a custom resource a node offers, e.g. desktop
slots on the hosts that run Xvfb and LibreOffice (``ray start --resources '{"desktop": 4}'``).

Ray and prefect-ray are an extra (``pip install 'guiforge[ray]'``): imported only here and
only when this executor runs.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

from guiforge.config import PipelineConfig
from guiforge.errors import GuiforgeError

PROBE_TIMEOUT_S = 5.0  # a cluster's GCS port that takes longer to accept is not one to run on
# Ray's own scheduling options; every other name in ray.resources is a custom resource.
RAY_OPTIONS = ("num_cpus", "num_gpus", "memory")
# Settings the shards need on every node (the model keys and storage credentials are the
# nodes' own environment: they are not copied into the job's description).
FORWARDED_PREFIXES = ("GUIFORGE_", "PREFECT_")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH", "CREDENTIAL", "CONNECTION_URL")  # a DSN holds a password


def _ray():
    try:
        # heavy: ray (a few hundred MB), only on this executor
        import ray
    except ImportError:
        raise GuiforgeError("executor ray: Ray is not installed; `pip install 'guiforge[ray]'` "
                            "(ray and prefect-ray), or use --executor prefect") from None
    return ray


def task_runner():
    """A RayTaskRunner over the run's connection (prefect-ray: imported here, on demand)."""
    _ray()
    from prefect_ray.task_runners import RayTaskRunner  # heavy: prefect-ray, only on this executor

    return RayTaskRunner()


def forwarded_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k.startswith(FORWARDED_PREFIXES) and not any(w in k for w in SECRET_WORDS)}


@contextlib.contextmanager
def ray_session(config: PipelineConfig) -> Iterator[Any]:
    """This process joined to the run's Ray cluster for the body (once per run); yields ray."""
    ray = _ray()
    if ray.is_initialized():  # a caller (a test, a notebook) already joined one: use it
        yield ray
        return
    address = config.ray.address
    local = {} if address else {"num_cpus": config.workers, "include_dashboard": False}
    if address:
        probe(address)
    try:
        ray.init(address=address, namespace="guiforge", runtime_env={"env_vars": forwarded_env()},
                 log_to_driver=os.environ.get("PREFECT_LOGGING_LEVEL") == "INFO",
                 logging_level=logging.ERROR, configure_logging=True, **local)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise GuiforgeError(f"executor ray: cannot join the Ray cluster at {address or 'a new local cluster'} "
                            f"({str(exc).splitlines()[0][:200]}); start it with `ray start --head` or fix "
                            "ray.address / --ray-address") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _host_port(address: str) -> tuple[str, int] | None:
    host, _, port = address.removeprefix("ray://").rstrip("/").rpartition(":")
    return (host.strip("[]"), int(port)) if host and port.isdigit() else None


def probe(address: str) -> None:
    """Refuse, in one line, an address nothing listens on (``ray.init`` retries it for
    minutes, deaf to SIGINT/SIGTERM) and a cluster on other hosts when the run's Prefect
    server is the temporary one, which listens on this host's loopback only: the shards'
    task runs report to Prefect from every node. ``auto`` (the address file of a local
    ``ray start``) is Ray's to resolve."""
    target = _host_port(address) if address != "auto" else None
    if target is None:
        return
    host, port = target
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise GuiforgeError(f"executor ray: nothing answers at {address} ({exc.strerror or exc}); start the "
                            "cluster with `ray start --head` or fix ray.address / --ray-address") from None
    if not os.environ.get("PREFECT_API_URL") and not _loopback(host):
        raise GuiforgeError(f"executor ray: the cluster at {address} is on another host, and its nodes cannot "
                            "reach the run's temporary Prefect server (loopback only): start one they reach "
                            "(`prefect server start --host 0.0.0.0`) and set PREFECT_API_URL")


def _loopback(host: str) -> bool:
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def shard_options(config: PipelineConfig, stage) -> dict[str, Any]:
    """What each shard of ``stage`` asks Ray for: ``ray.remote`` options."""
    declared = stage.name.rsplit("_r", 1)[0]  # a resynthesis round (rollouts_r2) asks as its stage does
    wanted = next((config.ray.resources[k] for k in (stage.name, declared, stage.kind)
                   if k in config.ray.resources), {})
    options: dict[str, Any] = {k: wanted[k] for k in RAY_OPTIONS if k in wanted}
    custom = {k: float(v) for k, v in wanted.items() if k not in RAY_OPTIONS}
    if custom:
        options["resources"] = custom
    return options


def worker_node() -> dict[str, str]:
    """The Ray node this process runs on ({} outside a Ray worker): a shard's entry records it."""
    ray = _ray()
    return {"ray_node": ray.get_runtime_context().get_node_id()} if ray.is_initialized() else {}


def cancel(futures: list) -> None:
    """Stop shards in flight on the cluster (a SIGINT or a cancel of the run): each gets a
    KeyboardInterrupt in its worker, so it ends without committing (lake/commit.py finishes
    a commit cut after its claim)."""
    ray = _ray()
    for future in futures:
        ref = getattr(future, "wrapped_future", None)
        if ref is not None:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
