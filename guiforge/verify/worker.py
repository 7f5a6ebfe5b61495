"""The verifier worker process: reads length-prefixed pickled requests on stdin, writes
pickled verdicts on stdout. Started with ``python -m guiforge.verify.worker`` (not through
multiprocessing, which would re-import the caller's __main__)."""

from __future__ import annotations

import os
import sys
import threading

from guiforge.verify.runner import score_rubric
from guiforge.verify.wire import READY, read_message, write_message


def main() -> None:
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
