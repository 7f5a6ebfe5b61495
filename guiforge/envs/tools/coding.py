"""``coding_tool``: run Python in a bubblewrap sandbox over the episode's workspace.

Private stand-in for ``guiforge/envs/sandbox`` (being built in parallel): the same shape,
``BwrapSandbox(workspace, limits).run(argv, timeout_s, stdin)``, so switching over is one
import. The sandbox has no network (its own empty network namespace), sees the system and the
Python install read-only, writes only to the workspace (mounted at /workspace) and a private
/tmp, runs under rlimits (address space, CPU, file size, open files) and a wall-clock
deadline after which the whole process tree is killed (it lives in its own PID namespace).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

SANDBOX_WORKSPACE = "/workspace"
MAX_OUTPUT_CHARS = 20_000


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 2 << 30  # RLIMIT_AS; numpy/pandas imports reserve a lot of address space
    cpu_s: int = 60
    file_bytes: int = 64 << 20  # also caps stdout/stderr, which go to files
    open_files: int = 256


@dataclass
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float


class BwrapSandbox:
    def __init__(self, workspace: Path, limits: Limits | None = None):
        self.workspace = Path(workspace).resolve()
        self.limits = limits or Limits()

    def command(self, argv: list[str]) -> list[str]:
        for exe in ("bwrap", "prlimit"):
            if shutil.which(exe) is None:
                raise ToolError(f"{exe} is not installed; coding_tool needs bubblewrap and util-linux")
        lim = self.limits
        # /tmp first: a venv or workspace living under /tmp is bound on top of it, not hidden by it
        mounts = ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]
        for link in ("bin", "lib", "lib64", "sbin"):
            target = Path("/") / link
            if target.is_symlink():
                mounts += ["--symlink", os.readlink(target), f"/{link}"]
            elif target.is_dir():
                mounts += ["--ro-bind", str(target), f"/{link}"]
        for etc in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/fonts"):
            mounts += ["--ro-bind-try", etc, etc]
        # the interpreter's install and the venv (numpy, pandas, openpyxl, Pillow), read-only
        for prefix in sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix)}):
            if not str(prefix).startswith("/usr"):
                mounts += ["--ro-bind", str(prefix), str(prefix)]
        return [
            "prlimit", f"--as={lim.memory_bytes}", f"--cpu={lim.cpu_s}",
            f"--fsize={lim.file_bytes}", f"--nofile={lim.open_files}", "--",
            "bwrap", "--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", *mounts,
            "--bind", str(self.workspace), SANDBOX_WORKSPACE, "--remount-ro", "/",
            "--chdir", SANDBOX_WORKSPACE,
            "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
            "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
            "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "MPLCONFIGDIR", "/tmp",
            "--", *argv,
        ]

    def run(self, argv: list[str], timeout_s: float, stdin: str = "") -> RunResult:
        cmd = self.command(argv)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="guiforge-code-") as tmp:
            out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
            with out_path.open("wb") as out, err_path.open("wb") as err:
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err)
                timed_out = False
                try:
                    proc.communicate(stdin.encode(), timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    proc.kill()  # bwrap dies; --die-with-parent and the PID namespace take the rest
                    proc.wait()
            return RunResult(
                exit_code=None if timed_out else proc.returncode,
                stdout=_tail(out_path), stderr=_tail(err_path), timed_out=timed_out,
                duration_s=round(time.monotonic() - started, 3),
            )


def _tail(path: Path) -> str:
    with path.open("rb") as f:
        data = f.read(MAX_OUTPUT_CHARS * 4 + 1)
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_OUTPUT_CHARS:
        return text[:MAX_OUTPUT_CHARS] + "\n... (output truncated)"
    return text


class CodeResult(BaseModel):
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    files_changed: list[str]


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


@tool("meta")
def coding_tool(ctx: ToolContext, code: str,
                timeout_s: Annotated[float, Field(gt=0, le=25)] = 15.0) -> CodeResult:
    """Run a Python 3 program in an isolated sandbox (no network) for anything the other tools
    cannot do: custom calculations, parsing, editing files. The working directory is the
    workspace, the only writable place; numpy, pandas, openpyxl and Pillow are importable.
    Print what you need to see.

    Args:
        code: the Python source to run
        timeout_s: wall-clock limit in seconds; the program is killed after it
    """
    root = ctx.workspace.resolve()
    before = _snapshot(root)
    result = BwrapSandbox(root).run([sys.executable, "-I", "-"], min(timeout_s, ctx.coding_timeout_s),
                                    stdin=code)
    after = _snapshot(root)
    changed = sorted(k for k, v in after.items() if before.get(k) != v)
    return CodeResult(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr,
                      timed_out=result.timed_out, duration_s=result.duration_s,
                      files_changed=changed)
