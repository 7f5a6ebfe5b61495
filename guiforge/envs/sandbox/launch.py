"""How ``bwrap`` itself is started, so that nothing of the host reaches the sandbox through it.

bwrap becomes PID 1 of the sandbox, and every process inside (same uid) can read PID 1's
``/proc/1/environ`` and ``/proc/1/cmdline``. ``--clearenv`` cleans only bwrap's child, so
bwrap is started from :data:`HOST_ENV` (nothing inherited: no API keys, cloud credentials
or Prefect settings), and its options (host paths of the workspace and the binds) go
through a memfd (``--args FD``), so its command line reads ``bwrap --args 3 -- cmd``.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Sequence

# The whole environment of the prlimit and bwrap processes: enough for them to find each
# other, nothing that came from the caller.
HOST_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}


def options_fd(options: Sequence[str]) -> int:
    """A memfd holding ``options`` NUL-separated, positioned at its start, for ``--args``.
    The caller passes it to bwrap (``pass_fds``) and closes its own copy afterwards."""
    fd = os.memfd_create("bwrap-options", os.MFD_CLOEXEC)
    try:
        data = b"".join(os.fsencode(o) + b"\0" for o in options)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_info(fd: int, timeout_s: float) -> dict:
    """bwrap's --info-fd JSON; it closes the fd once written (or on failure)."""
    data = b""
    until = time.monotonic() + timeout_s
    try:
        while (left := until - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
            if data.rstrip().endswith(b"}"):
                break
    finally:
        os.close(fd)
    try:
        return json.loads(data or b"{}")
    except ValueError:
        return {}
