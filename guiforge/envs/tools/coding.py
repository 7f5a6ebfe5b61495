"""``coding_tool``: run Python in the episode's sandbox (:mod:`guiforge.envs.sandbox`), the
same one every agent-controlled process goes through: a dedicated unprivileged host uid,
rlimits (processes, address space, CPU, file size), no network, no nested user namespaces,
a size-capped private ``/tmp``, the workspace (with its quota) as the only writable place,
and a deadline after which the whole sandbox is killed, counted in the program's own time
(guiforge.worktime), so the same program ends the same way on an idle or a loaded machine.

The interpreter is the system's ``/usr/bin/python3`` when it is the version this process
runs (its C extensions then load); the packages (numpy, pandas, openpyxl, Pillow) come from
this process's site-packages, bound read-only at :data:`SITE_DEST`. Nothing else of the
host's Python install (a pyenv under ``/root``, the repository) is visible.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from guiforge.envs.sandbox import Bind, Limits, MiB, Sandbox, Workspace
from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

SANDBOX_WORKSPACE = "/workspace"
MAX_OUTPUT_CHARS = 20_000
SITE_DEST = "/opt/site-packages"
SYSTEM_PYTHON = Path("/usr/bin/python3")

# numpy/pandas imports reserve a lot of address space; a fork bomb stops at nproc
CODING_LIMITS = Limits(cpu_s=60, memory_bytes=2048 * MiB, nproc=64, file_bytes=64 * MiB,
                       open_files=256, tmp_bytes=64 * MiB, output_bytes=MAX_OUTPUT_CHARS)


@cache
def _system_python_matches() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    done = subprocess.run([str(SYSTEM_PYTHON), "-I", "-c", "import sys; print(*sys.version_info[:2])"],
                          capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    return done.stdout.split() == [str(v) for v in sys.version_info[:2]]


def _site_dirs() -> list[Path]:
    paths = sysconfig.get_paths()
    return sorted({Path(paths["purelib"]).resolve(), Path(paths["platlib"]).resolve()})


def python_runtime() -> tuple[list[Bind], dict[str, str], list[str]]:
    """What the sandbox needs to run this process's Python packages: the read-only binds,
    the environment and the interpreter's argv (reading the program from stdin)."""
    sites = _site_dirs()
    binds = [Bind(site, f"{SITE_DEST}/{i}") for i, site in enumerate(sites)]
    if _system_python_matches():
        python = str(SYSTEM_PYTHON)
    else:  # a different version: its own install, read-only at the same path (its rpath)
        base = Path(sys.base_prefix).resolve()
        if not str(base).startswith("/usr/"):
            binds.append(Bind(base, str(base)))
        python = str(base / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}")
    env = {"PYTHONPATH": ":".join(b.dest for b in binds[: len(sites)]),
           "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": "/tmp"}
    # -P: the workspace is not put in front of the packages; -s: no user site
    return binds, env, [python, "-P", "-s", "-"]


def coding_sandbox(workspace: Workspace) -> Sandbox:
    """The sandbox an episode's ``coding_tool`` runs in, over the episode's workspace."""
    binds, env, _ = python_runtime()
    return Sandbox(workspace, CODING_LIMITS, binds=binds, env=env)


class CodeResult(BaseModel):
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
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
        timeout_s: time limit in seconds of the program's own running (time it waits for a busy machine's CPU does not count); the program is killed after it
    """
    if ctx.sandbox is None:
        raise ToolError("coding_tool is not available here: this episode has no sandbox")
    root = ctx.workspace.resolve()
    ctx.sandbox.hand_over()  # files the tools wrote (as the host user) become the agent's
    before = _snapshot(root)
    _, _, argv = python_runtime()
    result = ctx.sandbox.run(argv, min(timeout_s, ctx.coding_timeout_s), stdin=code.encode())
    after = _snapshot(root)
    changed = sorted(k for k, v in after.items() if before.get(k) != v)
    return CodeResult(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr,
                      timed_out=result.timed_out,  # no duration: what the agent reads must not depend on load
                      files_changed=changed)
