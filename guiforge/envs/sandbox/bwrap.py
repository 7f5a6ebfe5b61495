"""A bubblewrap sandbox around one workspace.

What a sandboxed process sees: ``/usr`` (and the ``/bin``, ``/lib*`` links) read-only, a
short list of ``/etc`` files, a generated ``/etc/passwd`` with the user ``agent`` (uid
1000), fresh ``/proc`` and ``/dev``, a private size-capped ``/tmp`` and ``/dev/shm``, and
``/workspace`` as the only writable host directory. Everything else (``/root``, ``/home``,
``/work``, the lake, the repository) does not exist inside. All namespaces are unshared:
no network but its own loopback, no host processes, no nested user namespaces. Every
process runs under :class:`~guiforge.envs.sandbox.limits.Limits` (rlimits) as an
unprivileged host user, and nothing of the caller's environment reaches any of them (bwrap,
PID 1 inside, starts from a fixed one: :mod:`guiforge.envs.sandbox.launch`).

Usage::

    with Sandbox.create(quota_bytes=GiB) as sb:
        sb.workspace.write("a.py", b"print(6 * 7)")
        result = sb.run(["python3", "a.py"], timeout_s=10)   # Result(exit_code=0, stdout="42\\n", ...)
        shell = sb.shell()                                    # persistent: cd/export carry over
        shell.run("cd sub && export X=1")
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from guiforge.envs.sandbox.capture import BoundedOutput, drain
from guiforge.envs.sandbox.identity import SandboxUser
from guiforge.envs.sandbox.launch import HOST_ENV, options_fd, read_info
from guiforge.envs.sandbox.limits import Limits
from guiforge.envs.sandbox.procs import is_live, pidns_of, pids_in_pidns, stop_then_kill
from guiforge.envs.sandbox.workspace import Workspace
from guiforge.worktime import WorkClock, wait_own

if TYPE_CHECKING:
    from guiforge.envs.sandbox.shell import ShellSession

INSIDE_UID = 1000
WORKDIR = "/workspace"
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"

# /etc entries programs need to run (dynamic linking, alternatives symlinks, locale, fonts,
# MIME and file-type data). Nothing with secrets, nothing about the host's users.
ETC_ENTRIES = (
    "alternatives", "debian_version", "fonts", "inputrc", "ld.so.cache", "ld.so.conf",
    "ld.so.conf.d", "libreoffice", "locale.alias", "localtime", "magic", "magic.mime",
    "mime.types", "os-release", "papersize", "protocols", "python3", "python3.11",
    "services", "terminfo", "timezone",
)
ROOT_LINKS = ("bin", "lib", "lib32", "lib64", "libx32", "sbin")

SIGNAL_NAMES = {s.value: s.name for s in signal.Signals}


@dataclass(frozen=True)
class Bind:
    """An extra host path visible in the sandbox (read-only unless ``writable``)."""

    source: Path
    dest: str
    writable: bool = False


@dataclass
class Result:
    exit_code: int | None  # None when the command was killed at its deadline
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_s: float = 0.0  # wall time: for logs, never for the agent (it depends on load)
    limit_s: float | None = None  # the deadline, in the command's own time (guiforge.worktime)
    truncated: bool = False
    notices: list[str] = field(default_factory=list)  # shell restarted, strays killed, ...

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def signal(self) -> str | None:
        """The signal that ended the command (exit codes 129-192 mean 128 + signal)."""
        if self.exit_code is not None and 128 < self.exit_code <= 128 + 64:
            return SIGNAL_NAMES.get(self.exit_code - 128)
        return None

    def summary(self) -> str:
        """One line for the agent: how the command ended."""
        if self.timed_out:
            # the limit, not the wall time it took: what the agent reads must not depend on load
            text = f"command ran past its {self.limit_s:g}s time limit and was killed" if self.limit_s \
                else "command timed out and was killed"
        elif self.signal:
            text = f"command was killed by {self.signal} (exit code {self.exit_code})"
        else:
            text = f"exit code {self.exit_code}"
        return "; ".join([text, *self.notices])


_ETC_DIR: Path | None = None


def _generated_etc() -> Path:
    """passwd/group/hostname/nsswitch for the sandbox, written once per process."""
    global _ETC_DIR
    if _ETC_DIR is None or not _ETC_DIR.is_dir():  # a /tmp cleaner may have removed it
        d = Path(tempfile.mkdtemp(prefix="guiforge-sandbox-etc-"))
        d.chmod(0o755)
        files = {
            "passwd": f"agent:x:{INSIDE_UID}:{INSIDE_UID}:agent:{WORKDIR}:/bin/bash\n"
                      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            "group": f"agent:x:{INSIDE_UID}:\nnogroup:x:65534:\n",
            "hostname": "sandbox\n",
            "hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
            "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
        }
        for name, text in files.items():
            (d / name).write_text(text)
            (d / name).chmod(0o644)
        atexit.register(shutil.rmtree, d, True)
        _ETC_DIR = d
    return _ETC_DIR


class Sandbox:
    """Runs commands in bubblewrap over ``workspace``. Pass a :class:`Workspace` (quota
    enforced where possible) or a directory, which is then chowned to the sandbox user."""

    def __init__(
        self,
        workspace: Workspace | Path,
        limits: Limits | None = None,
        *,
        user: SandboxUser | None = None,
        binds: Sequence[Bind] = (),
        env: Mapping[str, str] | None = None,
    ):
        self._owns_user = user is None and not isinstance(workspace, Workspace)
        self._owns_workspace = False
        if isinstance(workspace, Workspace):
            self.user = workspace.user
        else:
            self.user = user or SandboxUser.acquire()
            workspace = _adopt(Path(workspace), self.user)
        self.workspace: Workspace | _Adopted = workspace
        self.limits = limits or Limits()
        self.binds = tuple(binds)
        self.env = dict(env or {})

    @classmethod
    def create(cls, root: Path | None = None, limits: Limits | None = None,
               quota_bytes: int | None = None, **kwargs) -> Sandbox:
        """A sandbox with a fresh workspace (a tmpfs of ``quota_bytes`` when root)."""
        user = SandboxUser.acquire()
        path = Path(root) if root else Path(tempfile.mkdtemp(prefix="guiforge-ws-"))
        ws = Workspace(path, user, **({} if quota_bytes is None else {"quota_bytes": quota_bytes}))
        sb = cls(ws, limits, **kwargs)
        sb._owns_user = sb._owns_workspace = True
        return sb

    # -- argv ----------------------------------------------------------------------------
    def options(self, *, binds: Sequence[Bind] = (), env: Mapping[str, str] | None = None,
                limits: Limits | None = None, info_fd: int | None = None) -> list[str]:
        """bwrap's options (everything before ``--``): namespaces, mounts, environment."""
        limits = limits or self.limits
        args = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                "--new-session", "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID),
                "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
        for name in ROOT_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), f"/{name}"]
            elif host.is_dir():
                args += ["--ro-bind", str(host), f"/{name}"]
        for name in ETC_ENTRIES:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        etc = _generated_etc()
        for name in ("passwd", "group", "hostname", "hosts", "nsswitch.conf"):
            args += ["--ro-bind", str(etc / name), f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                 "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
                 "--bind", str(self.workspace.path), WORKDIR]
        for b in (*self.binds, *binds):
            args += ["--bind" if b.writable else "--ro-bind", str(b.source), b.dest]
        args += ["--remount-ro", "/", "--chdir", WORKDIR, "--clearenv"]
        environment = {"PATH": BASE_PATH, "HOME": WORKDIR, "USER": "agent", "LOGNAME": "agent",
                       "SHELL": "/bin/bash", "LANG": "C.UTF-8", "TERM": "dumb", "TMPDIR": "/tmp",
                       **self.env, **(env or {})}
        for key, value in environment.items():
            args += ["--setenv", key, value]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        return args

    def popen(self, command: Sequence[str], *, binds: Sequence[Bind] = (),
              env: Mapping[str, str] | None = None, limits: Limits | None = None,
              info_fd: int | None = None, **popen_kwargs) -> subprocess.Popen:
        """Start ``command`` in the sandbox in a new session (so its group can be killed).
        prlimit and bwrap start from :data:`HOST_ENV` with the options in a memfd (see
        :mod:`guiforge.envs.sandbox.launch`): PID 1 inside holds nothing of the caller."""
        limits = limits or self.limits
        options = options_fd(self.options(binds=binds, env=env, limits=limits, info_fd=info_fd))
        try:
            argv = [*limits.prlimit_argv(self.user.nproc_offset()),
                    "bwrap", "--args", str(options), "--", *command]
            fds = (*popen_kwargs.pop("pass_fds", ()), options,
                   *(() if info_fd is None else (info_fd,)))
            return subprocess.Popen(argv, start_new_session=True, cwd="/", env=dict(HOST_ENV),
                                    pass_fds=fds, **self.user.popen_kwargs(), **popen_kwargs)
        finally:
            os.close(options)

    def spawn(self, command: Sequence[str], *, timeout_s: float = 10.0, binds: Sequence[Bind] = (),
              env: Mapping[str, str] | None = None, limits: Limits | None = None,
              **popen_kwargs) -> Spawned:
        """Start a long-lived ``command`` whose whole sandbox can later be killed for sure
        (its pid namespace is learnt from bwrap's ``--info-fd``)."""
        read_fd, write_fd = os.pipe()
        try:
            proc = self.popen(command, binds=binds, env=env, limits=limits, info_fd=write_fd,
                              **popen_kwargs)
        finally:
            os.close(write_fd)
        info = read_info(read_fd, timeout_s)
        if "child-pid" not in info:
            _kill_group(proc)
            raise RuntimeError(f"bwrap did not start {command[0]} (exit code {proc.returncode}); "
                               "is bubblewrap installed and are user namespaces allowed?")
        init_pid = int(info["child-pid"])
        return Spawned(proc, init_pid, pidns_of(init_pid))

    # -- one-shot ------------------------------------------------------------------------
    def run(self, command: str | Sequence[str], timeout_s: float = 30.0, *,
            stdin: bytes | None = None) -> Result:
        """Run one command (a shell string goes through ``bash -c``) and wait for it; at
        the deadline the whole sandbox (its pid namespace) is killed. ``timeout_s`` counts
        the command's own time (guiforge.worktime: wall time less its wait for a CPU), so a
        loaded machine stretches it rather than killing a program that would have finished."""
        argv = ["/bin/bash", "-c", command] if isinstance(command, str) else list(command)
        started = time.monotonic()
        proc = self.popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = BoundedOutput(self.limits.output_bytes), BoundedOutput(self.limits.output_bytes)
        readers = [drain(proc.stdout, out), drain(proc.stderr, err)]
        if stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        timed_out, code = False, None
        # the command's processes and the threads here that read its output: all wait for a CPU
        clock = WorkClock(lambda: (proc.pid,), [*(r.native_id or 0 for r in readers), threading.get_native_id()])
        if wait_own(lambda wait: _exited(proc, wait), timeout_s, clock):
            code = proc.returncode
        else:
            timed_out = True
            _kill_group(proc)
        for reader in readers:
            reader.join(timeout=2.0)
        return Result(exit_code=code, stdout=out.text(), stderr=err.text(), timed_out=timed_out,
                      duration_s=time.monotonic() - started, limit_s=timeout_s,
                      truncated=out.truncated or err.truncated)

    def shell(self, timeout_s: float = 10.0) -> ShellSession:
        from guiforge.envs.sandbox.shell import ShellSession

        session = ShellSession(self)
        session.start(timeout_s)
        return session

    def hand_over(self) -> None:
        """Give the sandbox user everything in the workspace (files the host wrote as root
        would be read-only to the agent)."""
        _chown_tree(self.workspace.path, self.user)

    # -- teardown ------------------------------------------------------------------------
    def kill_all(self, keep: Callable[[], Iterable[int]] | None = None) -> int:
        """Kill every process of the sandbox user (only with a dedicated uid) but ``keep``'s."""
        return self.user.kill_all(keep)

    def close(self) -> None:
        if self._owns_workspace and isinstance(self.workspace, Workspace):
            self.kill_all()
            self.workspace.close()
        if self._owns_user:
            self.user.release()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Spawned:
    """A running sandbox: bwrap's process, the sandbox's init (host pid) and pid namespace."""

    proc: subprocess.Popen
    init_pid: int
    pidns: str | None

    def pids(self, exclude: Sequence[int] = ()) -> list[int]:
        return pids_in_pidns(self.pidns, exclude) if self.pidns else []

    def tree_pids(self) -> list[int]:
        """The sandbox's init and its descendants, from /proc/<pid>/task/*/children: a few
        small reads, where :meth:`pids` scans all of /proc (fine for killing, too slow to
        poll). Orphans are re-parented to the init, so they are in the tree too."""
        out, todo = [], [self.init_pid]
        while todo:
            pid = todo.pop()
            try:
                children = []
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                        children.extend(int(c) for c in f.read().split())
            except OSError:
                continue  # gone meanwhile
            if is_live(pid):  # a killed init lingers as a zombie until it is reaped
                out.append(pid)
            todo.extend(children)
        return out

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill every process of this sandbox and wait until they are gone."""
        if self.pidns:
            stop_then_kill(self.pids)
        _kill_group(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class _Adopted:
    """A caller's directory used as a workspace as it is (no quota)."""

    quota_enforced = False

    def __init__(self, path: Path, user: SandboxUser):
        self.path, self.user = path, user


def _adopt(path: Path, user: SandboxUser) -> _Adopted:
    if not path.is_dir():
        raise FileNotFoundError(f"sandbox workspace {path} is not a directory; create it first")
    if os.geteuid() == 0:
        # bwrap runs as the sandbox user, which must be able to reach the directory
        for ancestor in path.resolve().parents:
            mode = ancestor.stat().st_mode
            if not mode & 0o001:
                raise PermissionError(
                    f"sandbox workspace {path}: {ancestor} is not searchable by other users "
                    f"(mode {oct(mode & 0o777)}); use Sandbox.create() or a directory under "
                    "a world-searchable parent such as /tmp")
        _chown_tree(path, user)
    return _Adopted(path, user)


def _chown_tree(path: Path, user: SandboxUser) -> None:
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, user.uid, user.gid)


def _exited(proc: subprocess.Popen, wait_s: float) -> bool:
    try:
        proc.wait(timeout=wait_s)
        return True
    except subprocess.TimeoutExpired:
        return False


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL bwrap's session; ``--die-with-parent`` then takes down its pid namespace."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
