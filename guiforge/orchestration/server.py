"""A temporary Prefect API server that cannot outlive guiforge.

Prefect's own temporary server is orphaned when its parent is SIGKILLed. This one is
started with PR_SET_PDEATHSIG, so the kernel stops it when the guiforge process dies for
any reason. Used only when PREFECT_API_URL is not set (a real server or Cloud wins).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from guiforge.errors import GuiforgeError
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()  # its own group: a Ctrl-C in the terminal reaches guiforge, which stops it cleanly


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_home(lake: Lake, run_id: str) -> Path:
    """Where the temporary server of a run keeps its database: with the run, under a local
    lake (``<lake>/_prefect/run=<id>/``), else in a per-run folder of the user's state
    directory; never the ``~/.prefect`` every other Prefect user on the machine shares."""
    if lake.is_local:
        return Path(lake.root) / "_prefect" / f"run={run_id}"
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "guiforge" / "prefect" / f"{fingerprint(lake.uri)[:12]}" / f"run={run_id}"


def migrated_template() -> Path:
    """An empty Prefect database, already migrated, that new runs' databases start from."""
    # heavy: prefect, imported when this runs
    import prefect

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "guiforge" / f"prefect-{prefect.__version__}-empty.db"


def _copy_template(database: Path) -> bool:
    """Start a run's database from an empty, already migrated one: a fresh database's
    migrations take a minute or more on a busy machine. False if no template exists yet
    (then this start makes it)."""
    template = migrated_template()
    if not template.exists():
        return False
    shutil.copyfile(template, database)
    return True


def _save_template(database: Path) -> None:
    """Keep a copy of a just-migrated database, taken before any flow ran, for later runs."""
    template = migrated_template()
    if template.exists():
        return
    template.parent.mkdir(parents=True, exist_ok=True)
    tmp = template.with_name(f"{template.name}.tmp-{os.getpid()}")
    with contextlib.closing(sqlite3.connect(database)) as src, contextlib.closing(sqlite3.connect(tmp)) as dst:
        src.backup(dst)  # consistent while the server has it open
    os.replace(tmp, template)


@contextlib.contextmanager
def temporary_server(timeout_s: float | None = None, home: Path | None = None) -> Iterator[str | None]:
    """Yield the API URL to use; start a server only if none is configured. ``home`` holds
    the server's database (see run_home); without it, Prefect's own default."""
    # A first start migrates a fresh database, which takes long on a busy machine.
    timeout_s = timeout_s or float(os.environ.get("GUIFORGE_PREFECT_START_TIMEOUT", "240"))
    if os.environ.get("PREFECT_API_URL"):
        yield os.environ["PREFECT_API_URL"]
        return
    spec = importlib.util.find_spec("prefect")
    assert spec and spec.origin
    port = _free_port()
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    user_db = {"PREFECT_SERVER_DATABASE_CONNECTION_URL", "PREFECT_API_DATABASE_CONNECTION_URL"} & set(os.environ)
    database, make_template = None, False
    if home is not None and not user_db:  # a database the user configured wins
        home.mkdir(parents=True, exist_ok=True)
        database = home / "prefect.db"
        if not database.exists():
            make_template = not _copy_template(database)
        env["PREFECT_HOME"] = str(home)
        env["PREFECT_SERVER_DATABASE_CONNECTION_URL"] = f"sqlite+aiosqlite:///{database}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--app-dir", str(Path(spec.origin).parent.parent),
         "--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "error", "--lifespan", "on"],
        env=env, preexec_fn=_die_with_parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + timeout_s
        with httpx.Client() as client:
            while True:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode(errors="replace")[-400:] if proc.stderr else ""
                    raise GuiforgeError(f"the temporary Prefect server exited ({proc.returncode}): {err.strip()}")
                try:
                    if client.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise GuiforgeError(f"the temporary Prefect server did not start within {timeout_s:.0f}s; "
                                        "set PREFECT_API_URL to use a running server")
                time.sleep(0.1)
        if make_template:
            _save_template(database)
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
