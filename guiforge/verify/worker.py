"""The verifier worker process: reads length-prefixed pickled requests on stdin, writes
pickled verdicts on stdout. Started with ``python -I -m guiforge.verify.worker`` (not
through multiprocessing, which would re-import the caller's __main__): isolated, so the
check plugins and environment kinds it imports must be installed (site-packages or an
editable install), never found through the caller's directory.

A request is (rubric, state, feasible, fault, extra); ``extra`` names the run's declared
check plugins (loaded once) and, for a kind with its own reward, its evaluator and the task.
"""

from __future__ import annotations

import os
import sys
import threading

from guiforge.plugins import PluginError
from guiforge.verify.contract import VerifierResult
from guiforge.verify.registry import declare
from guiforge.verify.scoring import graded, score_rubric
from guiforge.verify.wire import READY, read_message, write_message

ISOLATED = ("the verifier worker runs isolated (python -I): install the package that provides it "
            "(pip install, or pip install -e for one you are writing)")


def answer(request: tuple) -> VerifierResult | str:
    """The verdict, or (a string) why the worker cannot give one: a declared check plugin or a
    kind's evaluator it cannot load is the verifier failing, never a score of 0."""
    rubric, state, feasible, _fault, *rest = request
    extra = rest[0] if rest else {}
    try:
        declare(extra.get("checks") or ())
        result = score_rubric(rubric, state, feasible)
        if extra.get("evaluator"):
            result = graded(result, extra["evaluator"], extra.get("task"), state)
    except PluginError as exc:
        return f"{exc}; {ISOLATED}"
    return result


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a check that prints must not corrupt the protocol
    write_message(stdout, READY)
    while (request := read_message(stdin)) is not None:
        fault = request[3]
        if fault == "crash":  # an injected fault (guiforge.faults): this process dies
            os._exit(70)
        if fault == "hang":  # ... or never answers, until the caller's deadline kills it
            threading.Event().wait()
        write_message(stdout, answer(request))


if __name__ == "__main__":
    main()
