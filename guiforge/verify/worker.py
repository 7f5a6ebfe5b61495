"""The verifier worker process: reads length-prefixed pickled requests on stdin, writes
pickled verdicts on stdout. Started with ``python -m guiforge.verify.worker`` (not through
multiprocessing, which would re-import the caller's __main__)."""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading

READY = "ready"  # the first message of a worker: its imports are done, deadlines may start


def read_message(stream) -> object | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return pickle.loads(stream.read(size))


def write_message(stream, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def main() -> None:
    from guiforge.verify.runner import score_rubric

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a check that prints must not corrupt the protocol
    write_message(stdout, READY)
    while (request := read_message(stdin)) is not None:
        rubric, state, feasible, fault = request
        if fault == "crash":  # an injected fault (guiforge.faults): this process dies
            os._exit(70)
        if fault == "hang":  # ... or never answers, until the caller's deadline kills it
            threading.Event().wait()
        write_message(stdout, score_rubric(rubric, state, feasible))


if __name__ == "__main__":
    main()
