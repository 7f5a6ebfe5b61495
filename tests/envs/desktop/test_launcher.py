"""The launcher's side of LibreOffice's single-instance pipe, against a stand-in office
that speaks the protocol and parses arguments as officeipcthread.cxx does (the real one is
exercised by test_desktop_office.py's reset test)."""

from __future__ import annotations

import socket
import threading

import pytest

from guiforge.envs.desktop.launcher import escape, hand_over


def _unescape_arguments(payload: str) -> tuple[str, list[str]]:
    """officeipcthread.cxx's Parser: ``1<cwd>`` then ``,<arg>`` per argument."""
    assert payload.startswith("InternalIPC::Arguments1")
    fields, cur, i, body = [], "", 0, payload[len("InternalIPC::Arguments1"):]
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            cur += {"0": "\0", ",": ",", "\\": "\\"}[nxt]
            i += 2
            continue
        if c == ",":
            fields.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    fields.append(cur)
    return fields[0], fields[1:]


@pytest.fixture
def office(tmp_path):
    path = str(tmp_path / "OSL_PIPE_1000_SingleOfficeIPC_test")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    received: list[str] = []

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"InternalIPC::SendArguments\0")
            data = b""
            while not data.endswith(b"\0"):
                data += conn.recv(1024)
            received.append(data[:-1].decode())
            conn.sendall(b"InternalIPC::ProcessingDone\0")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    thread.join(timeout=5)
    server.close()


def test_arguments_survive_commas_and_backslashes(office):
    path, received = office
    args = ["--infilter=CSV:44,34,76,1", "/workspace/a\\b, c.csv"]
    hand_over(path, args, "/workspace")
    cwd, parsed = _unescape_arguments(received[0])
    assert cwd == "file:///workspace" and parsed == args


def test_escape_matches_the_office_parser():
    assert escape("a,b\\c\0") == "a\\,b\\\\c\\0"
