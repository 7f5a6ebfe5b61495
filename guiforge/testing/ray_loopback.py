"""A real Ray cluster on loopback for tests and benchmarks: ``ray start --head`` plus more
node processes (``ray start --address``), each with its CPUs and custom resources, in a
session folder of its own; stopped by killing exactly the processes of that session (never
``ray stop``, which ends every Ray process of the machine)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_bin() -> str:
    here = Path(sys.executable).with_name("ray")
    return str(here) if here.exists() else (shutil.which("ray") or "ray")


@dataclass
class LoopbackCluster:
    """``nodes``: one dict per node after the head, ``{"num_cpus": 2, "resources": {...}}``."""

    head_cpus: int = 2
    nodes: list[dict] = field(default_factory=list)
    address: str = ""
    temp_dir: str = ""

    def start(self) -> LoopbackCluster:
        # A short path: Ray's unix sockets live below it (their paths have a ~107 byte limit).
        self.temp_dir = tempfile.mkdtemp(prefix="gf-ray-", dir="/tmp")
        port = _free_port()
        self.address = f"127.0.0.1:{port}"
        common = ["--node-ip-address", "127.0.0.1", "--disable-usage-stats", "--temp-dir", self.temp_dir]
        self._ray("start", "--head", "--port", str(port), "--num-cpus", str(self.head_cpus),
                  "--include-dashboard=False", "--ray-client-server-port", str(_free_port()),
                  "--dashboard-agent-listen-port", str(_free_port()), *common)
        for node in self.nodes:
            self._ray("start", "--address", self.address, "--num-cpus", str(node.get("num_cpus", 1)),
                      "--resources", json.dumps(node.get("resources", {})),
                      "--dashboard-agent-listen-port", str(_free_port()), *common)
        return self

    def _ray(self, *args: str) -> None:
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        proc = subprocess.run([_ray_bin(), *args], capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode:
            self.stop()
            raise RuntimeError(f"ray {args[0]} failed: {proc.stdout[-1500:]}{proc.stderr[-1500:]}")

    def pids(self) -> list[int]:
        """This session's processes: those whose command line names its folder (or its head's
        port), and their children."""
        parents: dict[int, int] = {}
        ours: set[int] = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            # the client server names only the head's port
            head = f":{self.address.rsplit(':', 1)[-1]}\0".encode() if self.address else None
            if (self.temp_dir and self.temp_dir.encode() in cmdline) or (
                    head and b"ray" in cmdline and head in cmdline.replace(b" ", b"\0") + b"\0"):
                ours.add(int(entry.name))
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in ours} - ours
            ours |= more
            grew = bool(more)
        return sorted(ours - {os.getpid()})

    def stop(self) -> None:
        # SIGKILL at once: a throwaway cluster has nothing to save, and its GCS server and
        # monitor outlive a SIGTERM by 20 s and more.
        deadline = time.monotonic() + 20
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)  # until /proc no longer lists them (their exit, observed)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
