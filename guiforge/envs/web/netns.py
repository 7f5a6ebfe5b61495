"""Chromium in a network namespace that holds nothing but its own loopback interface.

Routes, resolver rules and WebRTC flags each close one door, and a door nobody thought of
(a new protocol, a flag a Chromium update renames) would stay open; in a namespace with no
interface but ``lo`` there is nowhere to send a packet: no host address, no other loopback
address (``127.0.0.2``), no host service on ``127.0.0.1`` (the Prefect API, a model server).

What still crosses: Playwright talks to Chromium over a pipe (``--remote-debugging-pipe``,
file descriptors, not sockets), the apps and recordings are fulfilled by Playwright's route
handlers from memory, and our own CDP channel (:mod:`guiforge.envs.web.cdp`) connects to the
DevTools port inside the namespace through a socket made there (:func:`connect_in`: a
thread enters the namespace with ``setns``, connects, and ends; the socket stays in the
namespace it was made in).

Chromium is started through a small wrapper that runs it under ``bwrap --unshare-net``
(bubblewrap brings ``lo`` up; ``/`` stays as it is) with every capability dropped. Entering
the namespace from the host needs root; without it Chromium runs in the host's namespace
with the flags and the page scripts only (:func:`available` says which; SECURITY.md).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

CLONE_NEWNET = 0x40000000
T = TypeVar("T")
_wrappers: dict[str, str] = {}
_lock = threading.Lock()


@cache
def available() -> bool:
    """Whether Chromium can be put in a namespace we can still reach: root (with the
    capability to enter namespaces) and a bubblewrap that can make one. Probed once."""
    bwrap = shutil.which("bwrap")
    if os.geteuid() != 0 or bwrap is None:
        return False
    made = subprocess.run([bwrap, "--dev-bind", "/", "/", "--unshare-net", "--cap-drop", "ALL", "--", "true"],
                          capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    if made.returncode != 0:
        return False
    own = open_netns(os.getpid())
    try:
        inside(own, lambda: None)  # entering a namespace needs CAP_SYS_ADMIN (not in every container)
    except OSError:
        return False
    finally:
        os.close(own)
    return True


def isolated_executable(chromium: str) -> str:
    """A wrapper that starts ``chromium`` with its arguments in a fresh network namespace
    (written once per process into a private directory, removed at exit)."""
    with _lock:
        if chromium not in _wrappers or not Path(_wrappers[chromium]).exists():
            folder = Path(tempfile.mkdtemp(prefix="guiforge-chromium-"))  # mode 0700
            atexit.register(shutil.rmtree, folder, True)
            wrapper = folder / "chromium-loopback-only"
            bwrap = shutil.which("bwrap") or "bwrap"
            wrapper.write_text(
                "#!/bin/sh\n# Chromium with no network but its own loopback (guiforge.envs.web.netns)\n"
                f"exec {shlex.quote(bwrap)} --dev-bind / / --unshare-net --cap-drop ALL --die-with-parent "
                f"-- {shlex.quote(chromium)} \"$@\"\n")
            wrapper.chmod(0o700)
            _wrappers[chromium] = str(wrapper)
        return _wrappers[chromium]


def open_netns(pid: int) -> int:
    """A file descriptor for ``pid``'s network namespace (valid after the process is gone)."""
    return os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)


def host_netns() -> str:
    return os.readlink("/proc/self/ns/net")


def connect_in(netns_fd: int, address: tuple[str, int], timeout_s: float) -> socket.socket:
    """A TCP socket connected to ``address`` as seen from inside the namespace ``netns_fd``
    (the socket stays in the namespace it was made in)."""
    return inside(netns_fd, lambda: socket.create_connection(address, timeout=timeout_s))


def inside(netns_fd: int, fn: Callable[[], T]) -> T:
    """``fn()`` run in the network namespace ``netns_fd``, on a short-lived thread of its own
    (``setns`` moves only the calling thread), so the rest of the process stays in the
    host's."""
    result: dict[str, object] = {}

    def run() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(netns_fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"cannot enter the browser's network namespace: {os.strerror(err)}")
            result["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=run, name="netns", daemon=True)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["value"]  # type: ignore[return-value]
