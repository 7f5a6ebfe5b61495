"""Shards that lost an env host, run again by the rerun.

An episode or a gate whose env host died under it (guiforge.envs.service; its failure
message carries ``guiforge.failures.ENV_HOST_LOST``) is an env_failure row like any other, so
the run goes on and its tables say what happened. Nothing about the task is known from it,
though, so its shard is committed with ``redo`` (how many such units) in its manifest entry,
and the next run of the same pipeline plans that shard under a new fingerprint derived from
the one it redoes. The new shard runs, commits with ``redo_of`` naming its base, and the old
one is pruned at the end of the stage like any superseded shard; the stages that read it see
a new input fingerprint and run again too, so no table keeps a row made from the lost host's
episodes. A redone shard that loses a host again is redone again on the next run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from guiforge.failures import lost_env_host
from guiforge.lake.fingerprint import fingerprint


def lost_host_units(tables: Mapping[str, Any]) -> int:
    """Rows of a shard's output whose failure (``error``, or an exclusion's ``reason``) is a
    lost env host."""
    n = 0
    for rows in tables.values():
        for row in rows.to_pylist() if hasattr(rows, "to_pylist") else rows:
            if isinstance(row, Mapping) and (lost_env_host(row.get("error")) or lost_env_host(row.get("reason"))):
                n += 1
    return n


def redo_fingerprint(base: str, previous: str) -> str:
    """The fingerprint of the run of ``base`` that redoes its committed shard ``previous``."""
    return fingerprint({"redo_of": base, "after": previous}, len(base))


def current_fingerprints(bases: Iterable[str], entries: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """base fingerprint -> the fingerprint this run plans for it: its latest committed shard
    (the base itself, or a redo of it) unless that one lost an env host, then a new redo."""
    latest: dict[str, Mapping[str, Any]] = {}
    for e in entries:
        base = e.get("redo_of") or e["fingerprint"]
        if base not in latest or e.get("committed_at", 0) >= latest[base].get("committed_at", 0):
            latest[base] = e
    out = {}
    for base in bases:
        e = latest.get(base)
        if e is None:
            out[base] = base
        elif e.get("redo"):
            out[base] = redo_fingerprint(base, e["fingerprint"])
        else:
            out[base] = e["fingerprint"]
    return out


def redo_meta(base: str, fingerprint_: str, lost: int) -> dict[str, Any]:
    """What a shard's manifest entry says about redoing: whose redo it is, and how many of its
    units lost their env host."""
    return {**({"redo_of": base} if fingerprint_ != base else {}), **({"redo": lost} if lost else {})}
