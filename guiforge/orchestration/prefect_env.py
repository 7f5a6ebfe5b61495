"""Prefect settings guiforge needs, applied before Prefect is imported.

Quiet logging (Prefect's errors too: guiforge prints its own one line), batched server writes, no analytics, no API log shipping. Values a user
set in the environment win.
"""

from __future__ import annotations

import contextlib
import os

DEFAULTS = {
    # guiforge reports every failure itself, as one line: Prefect's own error reports (with
    # their tracebacks) show with -v only.
    "PREFECT_LOGGING_LEVEL": "CRITICAL",
    "PREFECT_INTERNAL_LOGGING_LEVEL": "CRITICAL",
    "PREFECT_LOGGING_TO_API_ENABLED": "false",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "500",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "500",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_UI_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}


# A shard task's retries (a shard is idempotent) and the waits before them, in seconds.
SHARD_RETRIES = int(os.environ.get("GUIFORGE_SHARD_RETRIES", "2"))
SHARD_RETRY_DELAYS = [float(s) for s in os.environ.get("GUIFORGE_SHARD_RETRY_DELAYS", "2,10").split(",")]


def configure(verbose: bool = False) -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if verbose:
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
        os.environ["PREFECT_INTERNAL_LOGGING_LEVEL"] = "ERROR"


def drain_events(timeout_s: float = 10.0) -> None:
    """Send the state events still queued (a failed or interrupted run leaves some) before
    the temporary server stops, instead of retrying them against a dead server at exit."""
    with contextlib.suppress(Exception):
        # heavy: prefect, imported when this runs
        from prefect.events.worker import EventsWorker

        EventsWorker.drain_all(timeout=timeout_s)
