"""Which accepted data becomes training targets, and in which split.

- **Best of N**: a task's k samples of a near-deterministic teacher walk the same path, so
  SFT keeps the best accepted sample(s) of each task (quality tier, gold first, then success,
  then score, then fewest teacher mistakes, then fewest steps); the others are exclusions.
- **Teacher mistakes**: a step the scripted teacher got wrong on purpose
  (``trajectories.teacher_events_json``, ``{"turn", "event": "mistake"}``) is never a target;
  it stays in the history of the steps after it, whose targets notice and correct it.
- **Duplicates**: a row whose (images, history, target) another row already has is left out,
  and so is a repeat that the relabel stage marked (``duplicate_target``: the same spot on
  the same frame) when the row it repeats is exported.
- **Splits**: ``train`` / ``validation`` / ``test`` by world, so no world (and so no task)
  sits in two splits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from guiforge.lake.fingerprint import fingerprint

SPLITS = ("train", "validation", "test")


def mistake_turns(trajectory: dict[str, Any]) -> dict[int, str]:
    """step_index -> kind of each deliberate teacher mistake in ``trajectory``."""
    events = json.loads(trajectory.get("teacher_events_json") or "null") or []
    return {int(e["turn"]): e.get("kind") or "mistake" for e in events if e.get("event") == "mistake"}


def _rank(t: dict[str, Any], repeats: Callable[[dict[str, Any]], int], tier: Callable[[dict[str, Any]], int]) -> tuple:
    return (tier(t), not t.get("success"), -(t.get("score") or 0.0), len(mistake_turns(t)), repeats(t),
            t.get("n_steps") or 0, t.get("sample_index") or 0, t["trajectory_id"])


def best_of_n(trajectories: list[dict[str, Any]], per_task: int | None,
              exclude: Callable[[dict[str, Any], str], None],
              repeats: Callable[[dict[str, Any]], int] = lambda t: 0,
              tier: Callable[[dict[str, Any]], int] = lambda t: 0) -> list[dict[str, Any]]:
    """The best ``per_task`` accepted trajectories of each task (None: all), in the input's
    order; ``exclude(trajectory, reason)`` for each one left out. ``repeats(t)``: steps of
    ``t`` the relabel stage marked as repeats (a tie-break: fewer rows lost); ``tier(t)``:
    its quality tier's rank (guiforge.judge.tiers.TIER_RANK, the first key)."""
    if per_task is None:
        return list(trajectories)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for t in trajectories:
        by_task.setdefault(t["task_id"], []).append(t)
    kept: set[str] = set()
    for group in by_task.values():
        ranked = sorted(group, key=lambda t: _rank(t, repeats, tier))
        kept.update(t["trajectory_id"] for t in ranked[:per_task])
        for t in ranked[per_task:]:
            exclude(t, f"best of {len(group)}: the task's SFT rows come from {ranked[0]['trajectory_id']}")
    return [t for t in trajectories if t["trajectory_id"] in kept]


def row_key(messages: list[dict[str, Any]], images: list[str]) -> str:
    """What makes two rows the same example: every message (history and target) and the
    frames the placeholders stand for."""
    return fingerprint([messages, images], 32)


def split_group(columns: dict[str, Any]) -> str:
    """What a row is split by: its world, or its own task when it has none (a task source's
    tasks: one group for all of them would put every one in the same split)."""
    return columns.get("world_id") or f"task:{columns.get('task_id')}"


def assign_splits(world_ids: list[str | None], validation: float, test: float) -> dict[str | None, str]:
    """world_id -> split. Worlds are ordered by a hash of their id (stable, independent of
    the run's size); the last ``test`` share goes to test, the share before it to
    validation, each at least one world when there are three or more."""
    worlds = sorted({w for w in world_ids}, key=lambda w: fingerprint(["split", w or ""], 16))
    n = len(worlds)
    if n < 3 or (validation == 0 and test == 0):
        return dict.fromkeys(worlds, "train")
    n_test = max(1, round(n * test)) if test > 0 else 0
    n_val = max(1, round(n * validation)) if validation > 0 else 0
    n_test, n_val = min(n_test, n - 2), min(n_val, n - 1 - min(n_test, n - 2))
    out = {}
    for i, w in enumerate(worlds):
        out[w] = "test" if i >= n - n_test else "validation" if i >= n - n_test - n_val else "train"
    return out
