"""A stop sent to the whole process group (Prefect cancels a flow run with killpg SIGTERM; ^C
in a terminal sends SIGINT to the foreground group) reaches guiforge, not the processes
under a shard: after the group's SIGTERM the page still answers and the verifier worker
still checks, so nothing a dying browser or worker does can become a row before guiforge's
own shutdown flag decides what to keep."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from guiforge.paths import PROJECT_ROOT

CHILD = r"""
import signal, sys, threading
from guiforge.envs.web.browser import launch
from guiforge.verify.contract import Criterion, FinalState
from guiforge.verify.runner import VerifierPool

stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
session = launch(lambda pw: {})
verifier = VerifierPool()
rubric = [Criterion(id="seven", check={"fn": "answer_matches", "value": "7"})]
assert verifier.verify(rubric, FinalState(answer="7")).success
print("ready", flush=True)
assert stopped.wait(60), "no SIGTERM"
print("page", session.page.evaluate("1 + 1"), flush=True)
print("verifier", verifier.verify(rubric, FinalState(answer="7")).success, flush=True)
verifier.close()
session.close()
"""


def test_the_groups_sigterm_leaves_the_page_and_the_verifier_to_guiforge():
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        first = child.stdout.readline()
        assert first.strip() == "ready", first + child.stdout.read()
        os.killpg(child.pid, signal.SIGTERM)  # what Prefect's runner does to a cancelled flow run
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert "page 2" in out and "verifier True" in out, out
    assert child.returncode == 0, out
