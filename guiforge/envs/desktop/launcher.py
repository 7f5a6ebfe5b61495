"""Runs inside a LibreOffice sandbox, under the system's python3 (stdlib only): starts
``soffice.bin`` with no document, says ``ready`` once its single-instance pipe exists, then
waits for one JSON line of arguments (what would follow ``soffice`` on a command line) and
hands them to the running office over that pipe, as a second ``soffice`` would, but
without starting one (a cold ``soffice.bin`` costs about a second of CPU before it even
looks for the pipe). It prints ``opened`` or ``error: ...`` and then lives as long as
LibreOffice does, exiting with its exit code.

The pipe protocol (LibreOffice's desktop/source/app/officeipcthread.cxx): the office sends
``InternalIPC::SendArguments\\0``; the client answers ``InternalIPC::Arguments1<cwd url>``
then ``,<argument>`` per argument (``\\``, ``,`` and NUL escaped with a backslash) and a NUL;
the office replies ``InternalIPC::ProcessingDone\\0`` once it has handled them.

    python3 -c "$(cat launcher.py)" /path/to/soffice.bin ARGS...
"""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

PIPES = "/tmp/OSL_PIPE_*_SingleOfficeIPC_*"
START_TIMEOUT_S = 60.0
OPEN_TIMEOUT_S = 60.0


def escape(arg):
    return arg.replace("\\", "\\\\").replace(",", "\\,").replace("\0", "\\0")


def read_token(sock):
    data = b""
    while not data.endswith(b"\0"):
        chunk = sock.recv(1024)
        if not chunk:
            raise OSError(f"the office closed the pipe after {data!r}")
        data += chunk
    return data[:-1].decode()


def hand_over(pipe, args, cwd):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(OPEN_TIMEOUT_S)
        sock.connect(pipe)
        hello = read_token(sock)
        if hello != "InternalIPC::SendArguments":
            raise OSError(f"unexpected greeting {hello!r}")
        message = "InternalIPC::Arguments1" + escape("file://" + cwd)
        message += "".join("," + escape(a) for a in args)
        sock.sendall(message.encode() + b"\0")
        done = read_token(sock)
        if done != "InternalIPC::ProcessingDone":
            raise OSError(f"unexpected reply {done!r}")


def exit_like(code):
    sys.exit(128 - code if code < 0 else code)  # killed by signal N -> 128+N, as a shell says


def main():
    office = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: (office.kill(), sys.exit(143)))
    until = time.monotonic() + START_TIMEOUT_S
    pipes = []
    while not pipes:
        if office.poll() is not None:
            exit_like(office.returncode)
        if time.monotonic() > until:
            print("error: no office pipe appeared", flush=True)
            office.kill()
            exit_like(office.wait())
        time.sleep(0.02)
        pipes = glob.glob(PIPES)
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line:  # nobody will ask: stop the office with us
        office.kill()
        sys.exit(0)
    try:
        hand_over(pipes[0], json.loads(line), os.getcwd())
        print("opened", flush=True)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", flush=True)
    exit_like(office.wait())


if __name__ == "__main__":
    main()
