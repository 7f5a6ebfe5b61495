"""The escape battery: every way out of the sandbox a terminal agent might try, each with a
concrete check that it was contained."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import guiforge
from guiforge.envs.sandbox.procs import pids_of_user

REPO = Path(guiforge.__file__).resolve().parents[1]


def test_writes_outside_the_workspace_do_not_reach_the_host(shell, sandbox):
    marker = f"escape-{uuid.uuid4().hex}"
    host_targets = [Path("/") / marker, Path("/etc") / marker, Path("/usr") / marker,
                    Path.home() / marker, Path("/tmp") / marker, REPO / marker]
    for target in host_targets:
        result = shell.run(f"echo pwned > {target}", timeout_s=5)
        assert not target.exists(), f"{target} was written from inside the sandbox"
        if target.parent == Path("/tmp"):
            # /tmp inside is the sandbox's own tmpfs: the write succeeds there, not on the host
            assert result.exit_code == 0
            assert shell.run(f"cat {target}").stdout == "pwned\n"
        else:
            assert result.exit_code != 0
            assert "Read-only file system" in result.stderr or "No such file" in result.stderr
    # the workspace is the one place that reaches the host
    assert shell.run("echo kept > inside.txt").ok
    assert (sandbox.workspace.path / "inside.txt").read_text() == "kept\n"


def test_host_files_are_not_readable(shell, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the lake credentials")
    secret.chmod(0o644)
    lake = REPO / "data" / "lake"
    for path in (REPO, REPO / "pyproject.toml", lake, Path("/root"), Path.home(), secret,
                 Path("/work"), Path("/etc/shadow"), Path("/etc/passwd-")):
        result = shell.run(f"test -e {path} && echo visible || echo absent")
        assert result.stdout == "absent\n", f"{path} is visible inside the sandbox"
    # the sandbox's passwd knows only the agent, not the host's users
    assert shell.run("cut -d: -f1 /etc/passwd").stdout.split() == ["agent", "nobody"]


def test_runs_as_an_unprivileged_user(shell):
    assert shell.run("id -u; id -g").stdout.split() == ["1000", "1000"]
    if os.geteuid() == 0:
        assert shell._shell_pid is not None
        assert os.stat(f"/proc/{shell._shell_pid}").st_uid != 0  # not root on the host either
    assert shell.run("unshare --user true").exit_code != 0  # no nested user namespaces


def test_no_network_not_even_host_loopback(shell):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        connect = shell.run(
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\"",
            timeout_s=10)
        assert connect.exit_code != 0 and "ConnectionRefusedError" in connect.stderr
        try:
            conn, _ = listener.accept()
            conn.close()
            raise AssertionError("the host listener received a connection from the sandbox")
        except TimeoutError:
            pass
    finally:
        listener.close()
    dns = shell.run("python3 -c \"import socket; socket.getaddrinfo('pypi.org', 443)\"", timeout_s=10)
    assert dns.exit_code != 0 and "gaierror" in dns.stderr
    outside = shell.run("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\"",
                        timeout_s=10)
    assert outside.exit_code != 0 and "Network is unreachable" in outside.stderr
    assert shell.run("ls /sys/class/net 2>/dev/null; cat /proc/net/dev | tail -n +3 | cut -d: -f1").stdout.split() == ["lo"]


def test_fork_bomb_is_bounded_and_the_next_command_runs(shell, sandbox):
    nproc = sandbox.limits.nproc
    bomb = shell.run(":(){ :|:& };:", timeout_s=5)
    assert bomb.exit_code == 0  # the bomb runs in the background
    time.sleep(0.5)
    if sandbox.user.dedicated:
        assert len(pids_of_user(sandbox.user.uid)) <= nproc + 2  # +2: bwrap's two processes
    assert subprocess.run(["true"]).returncode == 0  # the host can still fork
    after = shell.run("ls -d /workspace && echo forked", timeout_s=10)
    assert after.ok and after.stdout.endswith("forked\n")
    assert any("process limit" in n for n in after.notices)
    assert shell.strays() == []


def test_disk_fill_stops_at_file_limit_and_quota(shell, sandbox):
    before = shutil.disk_usage("/tmp").used
    one = shell.run("head -c 100M /dev/zero > big.bin", timeout_s=10)
    assert one.signal == "SIGXFSZ"
    assert (sandbox.workspace.path / "big.bin").stat().st_size == sandbox.limits.file_bytes
    # many files under the per-file limit: stopped by the workspace quota
    many = shell.run("for i in $(seq 100); do head -c 15M /dev/zero > f$i.bin || exit 9; done",
                     timeout_s=20)
    assert many.exit_code == 9 and "No space left on device" in many.stderr
    used = sum(f.stat().st_size for f in sandbox.workspace.path.iterdir())
    assert used <= 64 * 1024 * 1024
    # the private /tmp and /dev/shm are capped too
    for place in ("/tmp", "/dev/shm"):
        fill = shell.run(f"for i in $(seq 10); do head -c 15M /dev/zero > {place}/f$i || exit 9; done")
        assert fill.exit_code == 9 and "No space left on device" in fill.stderr
    assert shutil.disk_usage("/tmp").used - before < 200 * 1024 * 1024
    assert shell.run("rm -f *.bin && echo cleaned").stdout == "cleaned\n"


def test_hang_is_killed_at_the_deadline_and_the_shell_recovers(shell):
    assert shell.run("mkdir -p sub && cd sub && export KEEP=1").ok
    hang = shell.run("sleep 1000", timeout_s=1)  # returning at all is the deadline's doing
    assert hang.timed_out and hang.exit_code is None
    assert shell.strays() == []  # the sleep was killed, not left to run out
    # the shell survived: directory and variables are intact
    assert shell.run("pwd; echo $KEEP").stdout == "/workspace/sub\n1\n"
    # a hang in the shell itself (a builtin loop) costs the shell, not the episode
    stuck = shell.run("while :; do :; done", timeout_s=0.5)  # under the 1 s CPU limit
    assert stuck.timed_out and any("replaced" in n for n in stuck.notices)
    assert shell.run("pwd; echo ${KEEP:-unset}").stdout == "/workspace/sub\nunset\n"


def test_one_shot_deadline_kills_detached_children(sandbox):
    result = sandbox.run("setsid sleep 1000 & nohup sleep 1000 >/dev/null & sleep 1000", timeout_s=0.5)
    assert result.timed_out and result.exit_code is None
    if sandbox.user.dedicated:
        deadline = time.monotonic() + 2
        while pids_of_user(sandbox.user.uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pids_of_user(sandbox.user.uid) == []


def test_cpu_burn_is_stopped_by_the_cpu_limit(shell):
    burn = shell.run("python3 -c 'while True: pass'", timeout_s=15)
    assert not burn.timed_out and burn.signal == "SIGXCPU"  # the CPU limit, not the 15 s deadline
    assert shell.run("echo alive").stdout == "alive\n"


def test_memory_balloon_is_refused(shell):
    balloon = shell.run("python3 -c 'x = bytearray(1 << 30); print(len(x))'", timeout_s=15)
    assert balloon.exit_code == 1 and "MemoryError" in balloon.stderr
    small = shell.run("python3 -c 'x = bytearray(64 << 20); print(len(x))'", timeout_s=15)
    assert small.ok and small.stdout == f"{64 << 20}\n"
