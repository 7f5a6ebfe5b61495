"""A real environment service (``guiforge envs serve``) as a subprocess on loopback, for
tests and benchmarks: started in a session of its own, ready once it has printed its address
and answered ``/health``, stopped (or killed, to play a host that dies) by its pid."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import httpx

TOKEN = "loopback-test-token"


@dataclass
class EnvService:
    kinds: str = "web"
    capacity: int = 2
    port: int = 0
    token: str = TOKEN
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 120.0) -> EnvService:
        cmd = [sys.executable, "-m", "guiforge.cli", "envs", "serve", "--kinds", self.kinds,
               "--capacity", str(self.capacity), "--port", str(self.port)]
        env = {**os.environ, "GUIFORGE_ENVS_TOKEN": self.token, **self.env}
        # stderr to a file: a pipe nobody reads could fill and stall the server
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr, env=env, text=True,
                                     start_new_session=True)
        line = self._announcement(timeout_s)
        self.url = line.rsplit(" on ", 1)[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1])  # a restart comes back on the same port
        # the socket listens before the announcement: this waits until the app answers
        self.get("/health", timeout=timeout_s).raise_for_status()
        return self

    def _announcement(self, timeout_s: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        until = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < until:
                if sel.select(timeout=until - time.monotonic()):
                    line = self.proc.stdout.readline()
                    if "serving" in line:
                        return line
                    if not line:  # the process ended before it served
                        break
        self.kill()
        err = self.stderr()
        raise RuntimeError(f"guiforge envs serve did not come up: {err.strip()[-800:]}")

    def get(self, path: str, token: str | None = None, timeout: float = 30.0) -> httpx.Response:
        token = self.token if token is None else token
        return httpx.get(self.url + path, headers={"Authorization": f"Bearer {token}"} if token else {},
                         timeout=timeout)

    def capacity_figures(self) -> dict:
        return self.get("/capacity").json()

    def wait_for(self, condition, timeout_s: float = 60.0, what: str = "a condition") -> dict:
        """Poll ``/capacity`` until ``condition(figures)`` holds; returns those figures."""
        until = time.monotonic() + timeout_s
        while True:
            figures = self.capacity_figures()
            if condition(figures):
                return figures
            if time.monotonic() > until:
                raise TimeoutError(f"env service: {what} did not happen within {timeout_s}s: {figures}")
            time.sleep(0.05)  # a poll interval, not a wait for time to pass

    def kill(self) -> None:
        """SIGKILL: a host that dies (its children, Chromium among them, go with the session)."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        self._signal(signal.SIGTERM)

    def _signal(self, sig: int) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)  # the session is this server's alone (start_new_session)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        self._stderr.seek(0)
        return self._stderr.read()

    def __enter__(self) -> EnvService:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
