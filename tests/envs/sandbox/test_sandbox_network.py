"""No protocol leaves a sandbox: TCP connects and UDP datagrams to the host's 127.0.0.1,
another loopback address and a non-loopback address of this host arrive nowhere, and the
sandbox's only interface is its own loopback. The same sends from this process arrive,
so the zero is isolation, not a broken probe."""

from __future__ import annotations

import socket

from guiforge.testing.leaks import Listeners, non_loopback_address

SEND = """
import socket, sys
for target in sys.argv[1:]:
    kind, host, port = target.split(':')
    try:
        if kind == 'udp':
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', (host, int(port)))
        else:
            socket.create_connection((host, int(port)), timeout=2)
            print('CONNECTED', target)
    except OSError as e:
        print(kind, type(e).__name__)
"""


def _targets(listeners: Listeners) -> list[str]:
    return [f"{kind}:{t}" for kind in ("udp", "tcp") for t in listeners.targets(kind)]


def _send(target: str) -> None:
    kind, host, port = target.split(":")
    if kind == "udp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", (host, int(port)))
    else:
        socket.create_connection((host, int(port)), timeout=2).close()


def test_nothing_leaves_by_udp_or_tcp(sandbox):
    hosts = ["127.0.0.1", "127.0.0.2"] + ([a] if (a := non_loopback_address()) else [])
    listeners = Listeners(hosts)
    try:
        result = sandbox.run(["python3", "-c", SEND, *_targets(listeners)], timeout_s=30)
        assert result.exit_code == 0 and "CONNECTED" not in result.stdout, result
        interfaces = sandbox.run(["cat", "/proc/net/dev"]).stdout.splitlines()[2:]
        assert [line.split(":")[0].strip() for line in interfaces] == ["lo"]
        assert listeners.drained() == []
    finally:
        listeners.close()
    control = Listeners(hosts)  # the same sends from the host do arrive
    try:
        for target in _targets(control):
            _send(target)
        assert sorted(control.drained()) == sorted((kind, h) for kind in ("udp", "tcp") for h in hosts)
    finally:
        control.close()
