"""A reusable bubblewrap sandbox: one-shot commands and persistent shells over a workspace,
with no network, rlimits, a workspace quota and per-command deadlines. See
:mod:`guiforge.envs.sandbox.bwrap` for what a sandboxed process can see.

Running Python code (e.g. a ``coding_tool``)::

    from guiforge.envs.sandbox import Bind, Limits, MiB, Sandbox

    with Sandbox.create(quota_bytes=256 * MiB, limits=Limits(cpu_s=20, memory_bytes=1024 * MiB)) as sb:
        sb.workspace.write("main.py", code.encode())
        r = sb.run(["python3", "main.py"], timeout_s=30)
        r.exit_code, r.stdout, r.stderr, r.timed_out, r.signal, r.summary()

``python3`` is the system interpreter (/usr/bin). For extra packages, bind a directory
read-only and point ``PYTHONPATH`` at it:
``Sandbox.create(binds=[Bind(site_dir, "/opt/pylib")], env={"PYTHONPATH": "/opt/pylib"})``.
A persistent shell: ``shell = sb.shell(); shell.run("cd data && ls", timeout_s=10)``.
Each ``Sandbox.create`` holds one host uid (as root) until ``close()``.
"""

from guiforge.envs.sandbox.bwrap import Bind, Result, Sandbox
from guiforge.envs.sandbox.identity import SandboxUser
from guiforge.envs.sandbox.limits import GUI_LIMITS, GiB, Limits, MiB
from guiforge.envs.sandbox.shell import ShellDied, ShellSession
from guiforge.envs.sandbox.workspace import Workspace

__all__ = [
    "GUI_LIMITS", "Bind", "GiB", "Limits", "MiB", "Result", "Sandbox", "SandboxUser",
    "ShellDied", "ShellSession", "Workspace",
]
