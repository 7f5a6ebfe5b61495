"""The persistent shell's contract: state carries over, errors are feedback, a dead shell
is replaced, output is bounded; and the one-shot ``Sandbox.run``."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from guiforge.envs.sandbox import Sandbox


def test_state_carries_over_between_commands(shell):
    assert shell.run("mkdir -p a/b && cd a/b && export GREETING=hi && f() { echo fn:$1; }").ok
    result = shell.run("pwd; echo $GREETING; f x")
    assert result.stdout == "/workspace/a/b\nhi\nfn:x\n"
    assert shell.cwd == "/workspace/a/b"


def test_output_streams_and_exit_codes(shell):
    result = shell.run("echo out; echo err >&2; printf tail; exit_code() { return 3; }; exit_code")
    assert (result.stdout, result.stderr, result.exit_code) == ("out\ntail", "err\n", 3)
    missing = shell.run("cat no-such-file")
    assert missing.exit_code == 1 and "No such file or directory" in missing.stderr
    assert not missing.ok and missing.summary() == "exit code 1"
    syntax = shell.run("if then fi")
    assert syntax.exit_code == 2 and "syntax error" in syntax.stderr
    assert shell.run("echo still here").stdout == "still here\n"


def test_commands_cannot_read_the_next_command(shell):
    # stdin is /dev/null: `cat` ends at once instead of eating the protocol
    assert shell.run("cat; echo done", timeout_s=5).stdout == "done\n"
    assert shell.run("read -r line; echo rc=$?").stdout == "rc=1\n"


def test_a_command_that_ends_the_shell_gets_a_fresh_one(shell, sandbox):
    assert shell.run("mkdir -p keep && cd keep && echo data > f.txt && export X=1").ok
    ended = shell.run("echo bye; exit 7")
    assert ended.exit_code == 7 and ended.stdout == "bye\n"
    assert any("ended the shell" in n for n in ended.notices)
    again = shell.run("pwd; cat f.txt; echo ${X:-unset}")
    assert again.stdout == "/workspace/keep\ndata\nunset\n"
    killed = shell.run("kill -9 $$")
    assert killed.signal == "SIGKILL" and shell.restarts == 2
    assert (sandbox.workspace.path / "keep" / "f.txt").read_text() == "data\n"


def test_output_is_bounded(shell, sandbox):
    flood = shell.run("yes 0123456789 | head -c 5000000; echo; echo END", timeout_s=20)
    limit = sandbox.limits.output_bytes
    assert flood.truncated and flood.ok
    assert len(flood.stdout) < limit + 100 and flood.stdout.endswith("END\n")
    assert "bytes of output omitted" in flood.stdout


def test_one_shot_run(sandbox):
    (sandbox.workspace.path / "a.py").write_text("import sys; print(6 * 7); sys.exit(4)")
    result = sandbox.run(["python3", "a.py"], timeout_s=10)
    assert (result.exit_code, result.stdout) == (4, "42\n")
    piped = sandbox.run("tr a-z A-Z", stdin=b"shout", timeout_s=5)
    assert piped.stdout == "SHOUT"


def test_adopting_an_existing_directory():
    work = Path(tempfile.mkdtemp(prefix="guiforge-test-adopt-"))
    try:
        (work / "in.txt").write_text("x")
        with Sandbox(work) as sb:
            assert sb.workspace.quota_enforced is False
            result = sb.run("cat in.txt && echo y > out.txt")
            assert result.ok, result.stderr
        assert (work / "out.txt").read_text() == "y\n"
    finally:
        shutil.rmtree(work)


def test_adopting_an_unreachable_directory_says_why(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root drops to another uid that cannot reach private directories")
    with pytest.raises(PermissionError, match="not searchable"):
        Sandbox(tmp_path)


def test_the_host_namespace_is_never_emptied():
    from guiforge.envs.sandbox.procs import pidns_of, pids_in_pidns

    assert pids_in_pidns(pidns_of(os.getpid())) == []


def test_multiline_commands_and_here_documents(shell):
    script = "cat > hello.py <<'EOF'\nimport sys\nprint('  indented', sys.argv[1])\nEOF\npython3 hello.py \"$(printf 'a\\\\b')\""
    result = shell.run(script, timeout_s=10)
    assert result.ok and result.stdout == "  indented a\\b\n"
    assert shell.run("  echo '  spaces kept  '  ").stdout == "  spaces kept  \n"


def test_stale_workspace_mounts_are_swept():
    from guiforge.envs.sandbox import SandboxUser, Workspace
    from guiforge.envs.sandbox.workspace import sweep_stale_mounts

    if os.geteuid() != 0:
        pytest.skip("workspace quotas (tmpfs mounts) need root")
    user = SandboxUser.acquire()
    path = Path(tempfile.mkdtemp(prefix="guiforge-test-sweep-"))
    ws = Workspace(path, user, quota_bytes=8 * 1024 * 1024)
    assert ws.quota_enforced and os.path.ismount(path)
    assert str(path) not in sweep_stale_mounts()  # its sandbox is alive: left alone
    user.release()  # the owner goes away without closing its workspace, as in a crash
    assert str(path) in sweep_stale_mounts()
    assert not os.path.ismount(path) and not path.exists()


def test_the_populated_files_have_one_fixed_time_and_new_ones_the_real_time(sandbox):
    # `ls -l` in a terminal task shows the workspace as every run of that task shows it
    sandbox.workspace.populate({"data/sales.csv": b"a,1\n", "notes.txt": b"hi\n"})
    session = sandbox.shell()
    try:
        listed = session.run("ls -l --time-style=+%Y-%m-%dT%H:%M -R . | awk 'NF > 5 {print $6, $7}'").stdout
        assert sorted(listed.split("\n")[:-1]) == ["2024-01-01T09:00 data", "2024-01-01T09:00 notes.txt",
                                                  "2024-01-01T09:00 sales.csv"]
        assert session.run("touch new.txt && date -r new.txt +%Y").stdout.strip() != "2024"
    finally:
        session.close()
