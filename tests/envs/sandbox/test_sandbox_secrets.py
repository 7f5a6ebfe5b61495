"""Secrets set in the parent never reach a sandbox: every kind of process guiforge starts
for an agent (a persistent shell, a one-shot command, the desktop terminal, coding_tool)
and the verifier worker is asked for every process's environment and command line, with
API keys, cloud credentials and Prefect settings set in this process. Before, bwrap (PID 1
of every sandbox) kept the caller's environment and showed it in /proc/1/environ, and its
command line named the host's workspace path."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from guiforge.envs import Action, EnvSpec, TaskSpec
from guiforge.envs.sandbox import Limits, MiB, Sandbox
from guiforge.envs.tools import ToolsEnv
from guiforge.verify.runner import VerifierPool
from guiforge.verify.wire import READY, read_message

# every process visible inside: its environment and command line, NULs made visible
DUMP = ("for p in /proc/[0-9]*; do echo \"== $p\"; tr '\\0' '\\n' < $p/environ 2>&1; "
        "tr '\\0' ' ' < $p/cmdline 2>&1; echo; done; env")
LIMITS = Limits(cpu_s=5, memory_bytes=512 * MiB, nproc=48, tmp_bytes=16 * MiB)
SECRET_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "PREFECT_API_KEY", "HF_TOKEN")


@pytest.fixture
def secrets(monkeypatch) -> list[str]:
    values = []
    for name in SECRET_NAMES:
        value = f"{name.lower()}-{uuid.uuid4().hex}"
        monkeypatch.setenv(name, value)
        values.append(value)
    return values


def _call(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def _clean(text: str, secrets: list[str], host_paths: list[str]) -> None:
    assert "== /proc/1" in text, "the dump saw no processes: it would prove nothing"
    leaked = [s for s in secrets if s in text]
    assert not leaked, f"secrets visible inside the sandbox: {leaked}"
    for path in host_paths:
        assert path not in text, f"the host path {path} is visible inside the sandbox"


def test_one_shot_and_shell_see_no_secrets(secrets):
    with Sandbox.create(quota_bytes=16 * MiB, limits=LIMITS) as sb:
        host = [str(sb.workspace.path)]
        _clean(sb.run(DUMP, timeout_s=10).stdout, secrets, host)
        shell = sb.shell()
        try:
            _clean(shell.run(DUMP, timeout_s=10).stdout, secrets, host)
        finally:
            shell.close()


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="the desktop env needs Xvfb")
def test_desktop_terminal_sees_no_secrets(secrets):
    from guiforge.envs.desktop import DesktopEnv

    env = DesktopEnv(EnvSpec(domain="desktop", variant="terminal"))
    env.start()
    try:
        env.reset(TaskSpec(task_id="t", domain="desktop", instruction="look", setup={"files": {}}))
        step = env.step(Action(type="bash", text=DUMP))
        _clean(step.observation.text or "", secrets, [str(env.workspace.path)])
    finally:
        env.close()


def test_coding_tool_sees_no_secrets(secrets):
    env = ToolsEnv(EnvSpec(domain="tools"))
    env.start()
    try:
        env.reset(TaskSpec(task_id="t", domain="tools", instruction="look", setup={}))
        code = f"import subprocess\nprint(subprocess.run(['bash', '-c', {DUMP!r}], capture_output=True, text=True).stdout)"
        step = env.step(Action(type="call_tool", text=_call("coding_tool", code=code)))
        assert step.error is None, step.error
        _clean(step.feedback, secrets, [str(env.workspace.path)])
    finally:
        env.close()


def test_verifier_worker_gets_no_secrets(secrets, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pool = VerifierPool()
    try:
        proc = pool._worker()
        # read its environment once it is a running worker (not mid-exec, not exited)
        assert read_message(proc.stdout) == READY, "the verifier worker did not start"
        assert proc.poll() is None
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().decode(errors="replace")
        assert "PATH=" in environ
        assert not [s for s in secrets if s in environ]
        assert os.readlink(f"/proc/{proc.pid}/cwd") == "/"
    finally:
        pool.close()
