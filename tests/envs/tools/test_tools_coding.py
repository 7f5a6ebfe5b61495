"""coding_tool: real Python in the project's sandbox -- no network, only the workspace
writable, rlimits, and a deadline that kills the whole process tree. The hardening the
shared sandbox brings (an unprivileged uid, process limits, no nested namespaces, a sized
/tmp, the workspace quota, nothing of the host's Python install) is checked at the end."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from tools_helpers import ok, run

from guiforge.envs.sandbox import MiB, Sandbox, SandboxUser, Workspace
from guiforge.envs.tools import REGISTRY, ToolContext
from guiforge.envs.tools.coding import coding_sandbox
from guiforge.worlds.model import World

QUOTA = 32 * MiB


@pytest.fixture
def ctx(world: World):
    """A tools context over a quota'd workspace with the episode sandbox, as ToolsEnv makes."""
    user = SandboxUser.acquire()
    root = Path(tempfile.mkdtemp(prefix="guiforge-test-tools-"))
    root.chmod(0o755)
    workspace = Workspace(root / "workspace", user, QUOTA)
    sandbox: Sandbox = coding_sandbox(workspace)
    try:
        yield ToolContext(workspace=workspace.path, world=world, available=dict(REGISTRY), sandbox=sandbox)
    finally:
        sandbox.kill_all()
        workspace.close()
        user.release()
        shutil.rmtree(root, ignore_errors=True)


def test_runs_python_over_the_workspace(ctx: ToolContext):
    (ctx.workspace / "data.csv").write_text("region,amount\nNorth,10\nSouth,5\nNorth,2.5\n")
    code = (
        "import pandas as pd, os\n"
        "df = pd.read_csv('data.csv')\n"
        "total = df.groupby('region').amount.sum()\n"
        "total.to_csv('totals.csv')\n"
        "print(total['North'], os.getcwd())\n"
    )
    r = ok(ctx, "coding_tool", code=code)
    assert r["exit_code"] == 0 and r["stdout"] == "12.5 /workspace\n" and not r["timed_out"]
    assert r["files_changed"] == ["totals.csv"]
    assert (ctx.workspace / "totals.csv").read_text().splitlines()[1:] == ["North,12.5", "South,5.0"]


def test_errors_come_back_as_exit_code_and_stderr(ctx: ToolContext):
    r = ok(ctx, "coding_tool", code="print('before')\nraise ValueError('boom')\n")
    assert r["exit_code"] == 1 and r["stdout"] == "before\n"
    assert "ValueError: boom" in r["stderr"]


def test_no_network_not_even_the_hosts_loopback(ctx: ToolContext):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    code = (
        "import socket\n"
        f"for host in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('pypi.org', 443)]:\n"
        "    try:\n"
        "        socket.create_connection(host, timeout=2)\n"
        "        print('CONNECTED', host)\n"
        "    except OSError as e:\n"
        "        print('blocked', type(e).__name__)\n"
    )
    r = ok(ctx, "coding_tool", code=code)
    stop.set()
    t.join()
    server.close()
    assert "CONNECTED" not in r["stdout"] and r["stdout"].count("blocked") == 3, r
    assert accepted == []


def test_only_the_workspace_is_writable(ctx: ToolContext, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    marker = f"/tmp/guiforge-test-{uuid.uuid4().hex}"
    venv_file = Path(sys.prefix) / f"pwned-{uuid.uuid4().hex}"
    code = (
        "import os\n"
        f"for path in [{str(outside)!r}, {str(venv_file)!r}, '/etc/pwned', '/usr/pwned', '/pwned']:\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('WROTE', path)\n"
        "    except OSError as e:\n"
        "        print('refused', e.errno)\n"
        f"open({marker!r}, 'w').write('private tmp')\n"
        "open('inside.txt', 'w').write('ok')\n"
        "print(sorted(os.listdir('/')))\n"
        "print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    )
    r = ok(ctx, "coding_tool", code=code)
    assert r["exit_code"] == 0, r["stderr"]
    lines = r["stdout"].splitlines()
    assert "WROTE" not in r["stdout"] and sum(x.startswith("refused") for x in lines) == 5
    assert not outside.exists() and not venv_file.exists() and not Path(marker).exists()
    assert (ctx.workspace / "inside.txt").read_text() == "ok"
    assert "home" not in lines[-2]  # the host's /home, /var, /root content are not mounted
    assert int(lines[-1]) <= 3  # its own PID namespace: host processes are invisible


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_deadline_kills_the_program_and_its_children(ctx: ToolContext):
    marker = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10_000}"
    code = (
        "import subprocess\n"
        f"subprocess.Popen(['sleep', '{marker}'])\n"
        "print('spawned', flush=True)\n"
        "while True:\n"
        "    pass\n"
    )
    needle = f"sleep\x00{marker}"
    result: list[dict] = []
    runner = threading.Thread(target=lambda: result.append(ok(ctx, "coding_tool", code=code, timeout_s=2)))
    runner.start()
    seen = False
    while runner.is_alive() and not seen:
        seen = bool(_processes_with(needle))
        time.sleep(0.05)
    runner.join()
    assert seen, "the sandboxed child never showed up: this test would prove nothing"
    r = result[0]
    assert r["timed_out"] is True and r["exit_code"] is None and r["stdout"] == "spawned\n"
    deadline = time.monotonic() + 3
    while _processes_with(needle) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(needle) == []


def test_memory_limit(ctx: ToolContext):
    r = ok(ctx, "coding_tool", code="b = bytearray(6 * 1024**3)\nprint('allocated')\n")
    assert r["exit_code"] == 1 and "MemoryError" in r["stderr"] and "allocated" not in r["stdout"]


def test_timeout_argument_is_validated(ctx: ToolContext):
    r = run(ctx, "coding_tool", code="print(1)", timeout_s=600)
    assert not r.ok and "timeout_s" in r.error


# -- the shared sandbox's hardening (the stand-in this tool had before lacked each of these) --


def test_runs_as_an_unprivileged_host_user(ctx: ToolContext):
    r = ok(ctx, "coding_tool", code="open('mine.txt', 'w').write('x')\nimport os\nprint(os.getuid())\n")
    assert r["exit_code"] == 0 and r["stdout"] == "1000\n", r
    if os.geteuid() == 0:  # uid 1000 inside must not be the host's root outside
        assert (ctx.workspace / "mine.txt").stat().st_uid != 0


def test_process_limit_stops_a_fork_flood(ctx: ToolContext):
    code = (
        "import os, time\n"
        "n = 0\n"
        "for _ in range(300):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print(n)\n"
    )
    r = ok(ctx, "coding_tool", code=code, timeout_s=10)
    assert r["exit_code"] == 0, r
    assert int(r["stdout"]) < 100  # nproc, not 300


def test_no_nested_user_namespaces_or_mounts(ctx: ToolContext):
    code = (
        "import subprocess\n"
        "for argv in (['unshare', '--user', '--map-root-user', 'true'],\n"
        "             ['unshare', '--user', '--map-root-user', 'mount', '-t', 'tmpfs', 'x', '/tmp']):\n"
        "    print(subprocess.run(argv, capture_output=True).returncode)\n"
    )
    r = ok(ctx, "coding_tool", code=code)
    assert r["exit_code"] == 0, r
    assert "0" not in r["stdout"].split(), r["stdout"]


FILL = (
    "import errno\n"
    "written = 0\n"
    "try:\n"
    "    for i in range(40):\n"
    "        with open(f'{where}/fill{{i}}', 'wb') as f:\n"
    "            f.write(b'x' * (8 << 20))\n"
    "        written += 8 << 20\n"
    "except OSError as e:\n"
    "    print(errno.errorcode[e.errno])\n"
    "print(written >> 20)\n"
)


def test_tmp_is_size_capped(ctx: ToolContext):
    r = ok(ctx, "coding_tool", code=FILL.format(where="/tmp"))
    code, mib = r["stdout"].split()
    assert code == "ENOSPC" and int(mib) <= 64, r


def test_workspace_has_a_quota(ctx: ToolContext):
    if os.geteuid() != 0:
        pytest.skip("the workspace quota is a tmpfs mount, which needs root")
    r = ok(ctx, "coding_tool", code=FILL.format(where="."))
    code, mib = r["stdout"].split()
    assert code == "ENOSPC" and int(mib) <= QUOTA >> 20, r


def test_nothing_of_the_hosts_python_install_is_visible(ctx: ToolContext):
    hidden = [str(Path(sys.base_prefix).resolve()), sys.prefix, "/root", "/home", "/work"]
    hidden = [p for p in hidden if not p.startswith("/usr/")]
    code = f"import os\nprint([p for p in {hidden!r} if os.path.exists(p)])\n"
    r = ok(ctx, "coding_tool", code=code)
    assert r["stdout"] == "[]\n", r


# Needs 0.3 s of a CPU whatever the machine's speed, then says so.
CPU_BOUND = "import time\nwhile time.process_time() < 0.3:\n    pass\nprint('finished')\n"


def test_time_limits_count_the_programs_own_time_not_the_loads(ctx: ToolContext, oversubscribed_cores):
    """On cores oversubscribed three times over, 0.3 s of work takes over a second of wall
    time: under a 0.8 s limit the coding tool and the sandbox shell still let it finish (a
    wall-clock limit killed it), a command that never ends is still killed, and what the
    agent reads says the limit, never how long the loaded machine took."""
    done = ok(ctx, "coding_tool", code=CPU_BOUND, timeout_s=0.8)
    assert not done["timed_out"] and done["stdout"] == "finished\n" and "duration_s" not in done
    shell = ctx.sandbox.shell()
    try:
        (ctx.workspace / "spin.py").write_text(CPU_BOUND)
        ran = shell.run("python3 spin.py", timeout_s=0.8)
        assert not ran.timed_out and ran.stdout == "finished\n" and ran.exit_code == 0
        stuck = shell.run("while :; do :; done", timeout_s=0.3)
        assert stuck.timed_out and stuck.summary().startswith("command ran past its 0.3s time limit")
    finally:
        shell.close()
