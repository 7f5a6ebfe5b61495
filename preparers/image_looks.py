"""Which look (clean, scan, photo) a workspace image of a document gets, and its parameters.

A png entry of a workspace spec says ``look: clean | scan | photo | auto`` (default auto) or
gives the parameters themselves (``look: {kind: scan, skew_deg: 1.2, ...}``: those given are
kept, the rest drawn). ``auto`` follows the task's wording: an instruction that calls the
file a photo or a picture gets a phone photo, one that calls it a scan gets a scan, any other
wording a clean render. File names are not wording ("inv_scan.png" in a sentence about a
photo is a photo).

``resolve_setup_looks`` runs once per task when a card is rendered: it writes the full
parameters into the task's setup, so the lake's ``setup_json`` records the look each image
got (``$.files.documents[*].look.kind``) and every later build of the workspace (file gate,
package gate, rollouts) draws the same pixels.
"""

from __future__ import annotations

import re
from typing import Any

from guiforge.preparers.file_scan import LOOKS, Look, draw_look, parse_look

_FILE_NAME = re.compile(r"\S+\.(?:png|jpe?g|pdf|xlsx|docx|pptx|csv|txt|md)\b", re.I)
# "photocopy" is a copier's page, so it reads as a scan, not a photo
_PHOTO = re.compile(r"\b(?!photocop)(?:photo\w*|pic|pics|picture[sd]?|snapshot|snapped|camera)\b", re.I)
_SCAN = re.compile(r"\b(?:scan(?:s|ned|ner|ning)?|photocop\w*)\b", re.I)


def look_for_wording(instruction: str) -> str:
    """clean, scan or photo: what the instruction calls the image (a photo wins over a
    scan: "a photo of the scanned form" is a photo)."""
    text = _FILE_NAME.sub(" ", instruction)
    if _PHOTO.search(text):
        return "photo"
    if _SCAN.search(text):
        return "scan"
    return "clean"


def resolve_look(value: str | dict[str, Any] | None, key: list[Any], wording: str | None = None,
                 seed: int = 0) -> Look:
    """The full look for one image: what ``value`` gives, the rest drawn from ``key`` (world,
    document) and the look's seed (``seed`` unless ``value`` names one); ``auto`` without
    wording is clean. Resolving a resolved look gives it back unchanged."""
    value = "auto" if value is None else value
    if isinstance(value, str):
        if value == "auto":
            value = look_for_wording(wording) if wording else "clean"
        if value not in LOOKS:
            raise ValueError(f"look: {value!r} is not one of auto, {', '.join(LOOKS)}")
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ValueError(f"look: expected a name or a mapping, got {type(value).__name__}")
    kind = value.get("kind")
    if kind not in LOOKS:
        raise ValueError(f"look.kind: {kind!r} is not one of {', '.join(LOOKS)}")
    seed = value.get("seed", seed)
    return parse_look({**draw_look(kind, [*key, seed]), **value, "seed": seed})


def resolve_setup_looks(setup: dict[str, Any], instruction: str, world_id: str, seed: int) -> dict[str, Any]:
    """``setup`` with every png document entry's look resolved against the instruction's
    wording and written out in full (kind, seed, parameters); the pipeline seed is the
    look's seed, so another seed scans the same page again."""
    files = setup.get("files")
    docs = files.get("documents") if isinstance(files, dict) else None
    if not isinstance(docs, list) or not any(_is_png(d) for d in docs):
        return setup
    out = []
    for d in docs:
        if _is_png(d):
            look = resolve_look(d.get("look"), [world_id, d.get("document")], instruction, seed)
            d = {**d, "look": look.model_dump(mode="json")}
        out.append(d)
    return {**setup, "files": {**files, "documents": out}}


def _is_png(entry: Any) -> bool:
    return isinstance(entry, dict) and str(entry.get("format") or "").lower() == "png"
