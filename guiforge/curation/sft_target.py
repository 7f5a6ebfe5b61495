"""What training reads from a relabeled step: the mode (reasoning or direct, mixed at
``reasoning_ratio`` as GUI-Libra does), the assistant text (the SFT target, guiforge JSON
through ``harness.parser.format_reply``), the character span of the action inside it (so a
trainer can weight action tokens), and Mage's one-query-per-target-per-frame rule."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, MutableMapping
from typing import Any

from guiforge.envs.actions import Action
from guiforge.harness.parser import format_reply
from guiforge.lake.fingerprint import fingerprint


def choose_mode(trajectory_id: str, step_index: int, ratio: float, seed: int) -> str:
    rng = random.Random(fingerprint([seed, trajectory_id, step_index, "mode"]))
    return "reasoning" if rng.random() < ratio else "direct"


def assistant_text(mode: str, thought: str, action: dict[str, Any]) -> tuple[str, int, int]:
    """(text, start, end): the SFT target and the span of the action object inside it."""
    canonical = Action.model_validate({k: v for k, v in action.items() if v is not None})
    body = json.dumps(canonical.model_dump(exclude_none=True), ensure_ascii=False)
    if mode == "reasoning":
        text = format_reply(thought, canonical)
    else:
        text = json.dumps({"action": canonical.model_dump(exclude_none=True)}, ensure_ascii=False)
    start = text.rfind(body)
    if start < 0:  # format_reply's layout changed: fail loudly, a wrong span would train the wrong tokens
        raise ValueError(f"the action {body} is not inside the assistant text {text[:120]}")
    return text, start, start + len(body)


def location(action: dict[str, Any], target: dict[str, Any] | None) -> str:
    """Where a query aims: the element under the point, else the point (to ~1% of the
    screen), else the action itself (a key press, a typed text)."""
    if target and target.get("box"):
        return "box:" + ",".join(str(round(v)) for v in target["box"])
    if action.get("x") is not None and action.get("y") is not None:
        return f"pt:{action['x'] // 10},{action['y'] // 10}"
    return "act:" + json.dumps({k: v for k, v in action.items() if v is not None}, sort_keys=True, ensure_ascii=False)


def mark_duplicates(rows: Iterable[MutableMapping[str, Any]]) -> None:
    """Set ``duplicate_target`` (and ``duplicate_of``) on every row that aims at a spot an
    earlier row already aimed at on the same screenshot; the first one keeps it."""
    seen: dict[tuple[str, str], str] = {}
    for row in rows:
        sha = row.get("image_sha256")
        if not sha:
            row["duplicate_target"] = False
            continue
        key = (sha, location(row["action"], row.get("target")))
        first = seen.setdefault(key, f"{row['trajectory_id']}:{row['step_index']}")
        row["duplicate_target"] = first != f"{row['trajectory_id']}:{row['step_index']}"
        if row["duplicate_target"]:
            row["duplicate_of"] = first
