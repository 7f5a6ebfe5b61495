"""The environment service's body format: a JSON document whose bytes travel raw beside it.

A screenshot, a task's file or a workspace archive is never base64 inside JSON: every
``bytes`` value in the document is replaced by ``{"$bytes": i}`` and its bytes follow the
JSON as part ``i``. A body is ``<4-byte big-endian JSON length><JSON><part 0><part 1>...``
with each part's length listed in the JSON (``"$parts"``). Both sides use it (the server's
binary responses and the client's reset bodies), with codecs for the environment contract's
types: observations, step results, final states (a desktop's workspace as a tar archive).
"""

from __future__ import annotations

import io
import json
import struct
import tarfile
from pathlib import Path
from typing import Any

from guiforge.envs.base import FinalState, Observation, StepResult

MEDIA_TYPE = "application/x-guiforge-frame"
_HEAD = struct.Struct(">I")


def pack(doc: Any) -> bytes:
    """``doc`` (JSON values and bytes) as one body."""
    parts: list[bytes] = []

    def pull(value: Any) -> Any:
        if isinstance(value, bytes | bytearray | memoryview):
            parts.append(bytes(value))
            return {"$bytes": len(parts) - 1}
        if isinstance(value, dict):
            return {str(k): pull(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [pull(v) for v in value]
        return value

    head = json.dumps({"doc": pull(doc), "$parts": [len(p) for p in parts]}, separators=(",", ":")).encode()
    return b"".join([_HEAD.pack(len(head)), head, *parts])


def unpack(body: bytes) -> Any:
    """The document :func:`pack` made, its bytes back in place; ValueError for a body that
    is not one."""
    if len(body) < _HEAD.size:
        raise ValueError("not a guiforge frame: too short")
    (size,) = _HEAD.unpack_from(body)
    try:
        head = json.loads(body[_HEAD.size:_HEAD.size + size])
        lengths = [int(n) for n in head["$parts"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a guiforge frame: {exc}") from None
    parts, at = [], _HEAD.size + size
    for n in lengths:
        parts.append(body[at:at + n])
        at += n
    if at != len(body):
        raise ValueError("not a guiforge frame: its parts do not add up to its length")

    def put(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"$bytes"}:
                return parts[value["$bytes"]]
            return {k: put(v) for k, v in value.items()}
        if isinstance(value, list):
            return [put(v) for v in value]
        return value

    return put(head["doc"])


# -- the environment contract's types ----------------------------------------------------

def observation_doc(obs: Observation) -> dict[str, Any]:
    return {"screenshot": obs.screenshot, "width": obs.width, "height": obs.height, "format": obs.format,
            "text": obs.text, "feedback": obs.feedback, "debug": obs.debug, "seq": obs.seq}


def observation_of(doc: dict[str, Any]) -> Observation:
    return Observation(screenshot=doc.get("screenshot"), width=doc.get("width", 0), height=doc.get("height", 0),
                       format=doc.get("format", "png"), text=doc.get("text"), feedback=doc.get("feedback", ""),
                       debug=doc.get("debug") or {}, seq=doc.get("seq"))


def step_doc(result: StepResult) -> dict[str, Any]:
    return {"observation": observation_doc(result.observation), "feedback": result.feedback,
            "error": result.error, "done": result.done, "answer": result.answer, "status": result.status}


def step_of(doc: dict[str, Any]) -> StepResult:
    return StepResult(observation_of(doc["observation"]), feedback=doc.get("feedback", ""), error=doc.get("error"),
                      done=bool(doc.get("done")), answer=doc.get("answer"), status=doc.get("status"))


def final_state_doc(state: FinalState) -> dict[str, Any]:
    """A final state with its workspace (a folder on the serving host) as a tar archive."""
    return {"apps": state.apps, "answer": state.answer, "status": state.status, "terminal": state.terminal,
            "initial_apps": state.initial_apps, "initial_files": state.initial_files,
            "workspace": _tar(state.workspace) if state.workspace is not None else None}


def final_state_of(doc: dict[str, Any], workspace_root: Path | None) -> FinalState:
    """The final state a verifier reads here; a workspace is unpacked under ``workspace_root``."""
    workspace = None
    if doc.get("workspace") is not None:
        if workspace_root is None:
            raise ValueError("a final state with a workspace needs a folder to unpack it in")
        workspace = _untar(doc["workspace"], workspace_root)
    return FinalState(apps=doc.get("apps") or {}, workspace=workspace, answer=doc.get("answer"),
                      status=doc.get("status"), terminal=doc.get("terminal") or [],
                      initial_apps=doc.get("initial_apps"), initial_files=doc.get("initial_files"))


def _tar(folder: Path) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        tar.add(str(folder), arcname=".")
    return out.getvalue()


def _untar(data: bytes, root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        # "data": no links out of the folder, no devices, no absolute names (a host is not trusted)
        tar.extractall(root, filter="data")
    return root
