"""Checks a pipeline can pass before anything runs (``guiforge validate`` and ``run``):
every stage's own files and names (``Stage.preflight``: cards and card folders, scenarios,
include names) and that the lake can be written. Each failure is one line."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from guiforge.errors import ConfigError, GuiforgeError
from guiforge.lake.store import Lake
from guiforge.orchestration.pipeline import Pipeline
from guiforge.yamlfile import line_of


def check_lake_writable(uri: str) -> None:
    """Raise a one-line error if the lake at ``uri`` cannot be written (nothing is created
    on a local disk; elsewhere a probe file is written and deleted)."""
    lake = Lake(uri)
    if lake.is_local:
        path = Path(lake.root)
        if path.exists() and not path.is_dir():
            raise GuiforgeError(f"lake {uri}: is a file, not a folder; pass another --lake")
        existing = path
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise GuiforgeError(f"lake {uri}: {existing} is not writable; check its permissions or pass another --lake")
        return
    probe = lake.path("_locks", f".probe-{uuid.uuid4().hex[:8]}")
    try:
        with lake.fs.open(probe, "wb") as fh:
            fh.write(b"guiforge")
        lake.fs.rm(probe)
    except Exception as exc:  # noqa: BLE001 - any storage error is the same advice
        first = (str(exc).strip().splitlines() or [""])[0]
        raise GuiforgeError(f"lake {uri}: cannot write ({type(exc).__name__}: {first}); check the URI and the "
                            "storage's credentials (for s3://: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                            "AWS_ENDPOINT_URL)") from None


def _in_pipeline_file(pipeline: Pipeline, exc: GuiforgeError) -> GuiforgeError:
    """A stage's complaint about its own config (``stages.<name>.<field>: ...``) as a line
    that names the pipeline file and the field's line too."""
    text = str(exc)
    field, sep, rest = text.partition(": ")
    if not sep or not field.startswith("stages.") or " " in field:
        return exc
    loc = tuple(field.split("."))
    return ConfigError(pipeline.source, field, rest, line_of(getattr(pipeline, "lines", {}), loc))


def preflight(pipeline: Pipeline, lake: bool = True) -> None:
    """Everything that can be checked before running; raises the first problem."""
    for stage in pipeline.stages:
        try:
            stage.preflight()
        except ConfigError:
            raise
        except GuiforgeError as exc:
            raise _in_pipeline_file(pipeline, exc) from None
        except UnicodeDecodeError as exc:
            raise GuiforgeError(f"stage {stage.name}: a file it reads is not UTF-8 text ({exc.reason}); "
                                "remove or fix binary files in its folder") from None
    if lake:
        check_lake_writable(pipeline.config.lake)
