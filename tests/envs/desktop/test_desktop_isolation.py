"""LibreOffice runs in the sandbox's namespaces like the terminal does: a network namespace
with nothing but its own loopback, and none of the caller's secrets in any of its
processes' environments (they are read from the host's /proc, the strongest view)."""

from __future__ import annotations

import os
from pathlib import Path

SECRET = f"sk-desktop-{os.getpid()}"


def test_libreoffice_has_only_loopback_and_no_secrets(hybrid_env, task, xlsx_bytes, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    hybrid_env.reset(task("office-netns", {"files": {"report.xlsx": xlsx_bytes}, "open": "report.xlsx"}))
    box = hybrid_env.office._box
    assert box is not None
    pids = box.pids()
    assert any("soffice" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace") for p in pids)
    for pid in pids:
        interfaces = [line.split(":")[0].strip() for line in Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]]
        assert interfaces == ["lo"], (pid, interfaces)
        assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
        assert SECRET.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
