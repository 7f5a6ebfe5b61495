"""A persistent bash session inside a sandbox: ``cd``, variables and functions carry over
from one command to the next, as in a terminal.

Each command is sent on the shell's stdin as a quoted here-document, run with ``eval``
(stdin from ``/dev/null``, so a command that reads input cannot swallow the next one), and
followed by a line ``<token> <exit code> <cwd>`` on stdout and ``<token>`` on stderr; the
token is random per command. Recovery, all reported in ``Result.notices``:

- deadline (counted in the sandbox's own time, guiforge.worktime, so load does not turn a
  command into a timeout): every process of the sandbox except the shell is killed
  (stopped first, so a fork bomb cannot outrun it); if the shell itself is stuck (a
  builtin loop) it is replaced by a fresh one in the last known directory;
- the command ends the shell (``exit``, a signal, the CPU limit): a fresh shell;
- background processes hold over half the process limit (a fork bomb): they are killed
  before the next command so that it can run.
"""

from __future__ import annotations

import queue
import re
import secrets
import shlex
import subprocess
import threading
import time
from typing import IO

from guiforge.envs.sandbox.bwrap import WORKDIR, Result, Sandbox, Spawned
from guiforge.envs.sandbox.capture import SentinelCollector
from guiforge.envs.sandbox.procs import stop_then_kill
from guiforge.worktime import WorkClock

_WRAPPER_LINE = re.compile(r"(?m)^/bin/bash: line \d+: ")
GRACE_S = 1.0  # after killing a timed-out command, how long the shell gets to report back


class ShellDied(RuntimeError):
    pass


class ShellSession:
    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox
        self.cwd = WORKDIR
        self.restarts = 0
        self._box: Spawned | None = None
        self._events: queue.Queue[tuple[str, bytes | None]] = queue.Queue()
        self._shell_pid: int | None = None
        self._carry = {"out": b"", "err": b""}
        self._pumps: list[int] = []  # native ids of the threads reading its output

    # -- lifecycle -----------------------------------------------------------------------
    def start(self, timeout_s: float = 10.0) -> None:
        try:
            self._box = self.sandbox.spawn(
                ["/bin/bash", "--noprofile", "--norc"], timeout_s=timeout_s,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except RuntimeError as exc:
            raise ShellDied(str(exc)) from exc
        proc = self._box.proc
        self._events = queue.Queue()
        self._carry = {"out": b"", "err": b""}
        self._pumps = []
        for name, stream in (("out", proc.stdout), ("err", proc.stderr)):
            pump = threading.Thread(target=_pump, args=(stream, name, self._events), daemon=True,
                                    name=f"shell-{name}")
            pump.start()
            self._pumps.append(pump.native_id or 0)
        try:
            self._exchange(f"cd {shlex.quote(self.cwd)} 2>/dev/null || cd {WORKDIR}", timeout_s,
                           recover=False)
        except ShellDied:
            detail = self._stderr_so_far()
            self._terminate()
            raise ShellDied(f"the sandbox shell did not answer within {timeout_s:.0f}s "
                            f"({detail})") from None
        children = self._box.pids(exclude=[self._box.init_pid])
        self._shell_pid = children[0] if len(children) == 1 else None

    def _stderr_so_far(self) -> str:
        err = b""
        while True:
            try:
                name, chunk = self._events.get(timeout=0.2)
            except queue.Empty:
                break
            if name == "err" and chunk:
                err += chunk
        return err.decode(errors="replace").strip() or "no error output"

    def alive(self) -> bool:
        return self._box is not None and self._box.alive()

    def restart(self) -> None:
        self._terminate()
        self.restarts += 1
        self.start()

    def close(self) -> None:
        self._terminate()

    def _terminate(self) -> None:
        box, self._box = self._box, None
        if box is not None:
            box.kill()

    def strays(self) -> list[int]:
        """Processes in the sandbox other than its init and the shell."""
        if self._box is None:
            return []
        return self._box.pids(exclude=[p for p in (self._box.init_pid, self._shell_pid) if p])

    # -- commands ------------------------------------------------------------------------
    def run(self, command: str, timeout_s: float = 30.0) -> Result:
        notices: list[str] = []
        if not self.alive():
            self.restart()
            notices.append(f"the shell had exited; a fresh shell was started in {self.cwd}")
        nproc = self.sandbox.limits.nproc
        if nproc and len(self.strays()) >= nproc // 2:
            # a fork bomb keeps retrying in the background and starves every later command
            killed = stop_then_kill(self.strays)
            self._discard_background_output()
            notices.append(f"background processes held over half the process limit ({nproc}); "
                           f"{killed} were killed and their output discarded")
        result = self._exchange(command, timeout_s)
        result.notices[:0] = notices
        return result

    def _exchange(self, command: str, timeout_s: float, recover: bool = True) -> Result:
        assert self._box is not None and self._box.proc.stdin is not None
        stdin = self._box.proc.stdin
        token = secrets.token_hex(12)
        limit = self.sandbox.limits.output_bytes
        streams = {"out": SentinelCollector(token.encode(), limit),
                   "err": SentinelCollector(token.encode(), limit)}
        for name, collector in streams.items():
            if self._carry[name]:
                collector.feed(self._carry[name])
        script = (
            f"IFS= builtin read -r -d '' __gf_cmd <<'__GF_{token}'\n{command}\n__GF_{token}\n"
            f'builtin eval "$__gf_cmd" </dev/null\n'
            f"builtin printf '\\n{token} %d %s\\n' \"$?\" \"$PWD\"\n"
            f"builtin printf '\\n{token}\\n' >&2\n"
        )
        started = time.monotonic()
        notices: list[str] = []
        timed_out = False
        try:
            stdin.write(script.encode())
            stdin.flush()
            timed_out = not self._collect(streams, timeout_s, self._clock())
            if timed_out:
                killed = stop_then_kill(self.strays)
                # with nothing else running, the shell itself is busy (a builtin loop)
                grace = GRACE_S if killed else 0.1
                if not self._collect(streams, grace):
                    raise ShellDied("stuck")
        except (ShellDied, BrokenPipeError):
            if not recover:
                raise ShellDied("the shell did not complete its first command") from None
            code = None if timed_out else self._exit_code()
            for c in streams.values():
                c.flush()
            self.restart()
            what = ("the shell was stuck and was replaced" if timed_out
                    else f"the command ended the shell (exit code {code}); a fresh shell was started")
            notices.append(f"{what} in {self.cwd}: shell variables and functions were reset")
            return self._result(streams, code, timed_out, started, notices, timeout_s)
        status = streams["out"].status_line or b""
        code_text, _, cwd = status.decode(errors="replace").partition(" ")
        if cwd:
            self.cwd = cwd
        self._carry = {name: c.leftover for name, c in streams.items()}
        code = None if timed_out else int(code_text) if code_text.lstrip("-").isdigit() else None
        return self._result(streams, code, timed_out, started, notices, timeout_s)

    def _clock(self) -> WorkClock:
        """The own time from now of the sandbox's processes (the shell and all below it) and
        of the threads here that carry its output back (they wait for a CPU too)."""
        box = self._box
        return WorkClock(lambda: (box.proc.pid,) if box is not None else (),
                         [*self._pumps, threading.get_native_id()])

    def _collect(self, streams: dict[str, SentinelCollector], timeout_s: float,
                 clock: WorkClock | None = None) -> bool:
        """Feed output until both sentinels arrived (True) or ``timeout_s`` passed (False): of
        the sandbox's own time with a ``clock`` (guiforge.worktime: a loaded machine stretches
        it; read only once the wall time is up), of wall time without; raises ShellDied when
        the shell exits first."""
        deadline = time.monotonic() + timeout_s
        while not all(c.done for c in streams.values()):
            left = deadline - time.monotonic()
            if left <= 0:
                own_left = timeout_s - clock.own_s() if clock is not None else 0.0
                if own_left <= 0:
                    return False
                deadline = time.monotonic() + max(own_left, 0.05)
                continue
            try:
                name, chunk = self._events.get(timeout=min(left, 0.05))
            except queue.Empty:
                if not self.alive():
                    self._drain_quickly(streams)
                    if not all(c.done for c in streams.values()):
                        raise ShellDied("exited") from None
                continue
            if chunk is None:
                if not self.alive() or self._wait_exit(0.2):
                    self._drain_quickly(streams)
                    if not all(c.done for c in streams.values()):
                        raise ShellDied("exited")
                continue
            streams[name].feed(chunk)
        return True

    def _discard_background_output(self) -> None:
        while True:
            try:
                self._events.get(timeout=0.02)
            except queue.Empty:
                break
        self._carry = {"out": b"", "err": b""}

    def _drain_quickly(self, streams: dict[str, SentinelCollector]) -> None:
        while True:
            try:
                name, chunk = self._events.get(timeout=0.02)
            except queue.Empty:
                return
            if chunk is not None:
                streams[name].feed(chunk)

    def _wait_exit(self, seconds: float) -> bool:
        if self._box is None:
            return True
        try:
            self._box.proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _exit_code(self) -> int | None:
        if self._box is None:
            return None
        self._wait_exit(1.0)
        return self._box.proc.returncode

    @staticmethod
    def _result(streams: dict[str, SentinelCollector], code: int | None, timed_out: bool,
                started: float, notices: list[str], limit_s: float | None = None) -> Result:
        out, err = streams["out"].output, streams["err"].output
        # bash names the line of our wrapper script ("line 52:"); the agent typed line 1
        stderr = _WRAPPER_LINE.sub("bash: ", err.text())
        return Result(exit_code=code, stdout=out.text(), stderr=stderr, timed_out=timed_out,
                      duration_s=time.monotonic() - started, limit_s=limit_s,
                      truncated=out.truncated or err.truncated, notices=notices)


def _pump(stream: IO[bytes], name: str, events: queue.Queue) -> None:
    try:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            events.put((name, chunk))
    except (OSError, ValueError):
        pass
    events.put((name, None))
