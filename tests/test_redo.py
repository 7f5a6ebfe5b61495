"""Which fingerprint a rerun plans for a shard that lost its env host (orchestration/redo.py),
on manifest entries as the engine writes them."""

from __future__ import annotations

from guiforge.failures import ENV_HOST_LOST
from guiforge.orchestration.redo import (
    current_fingerprints,
    lost_host_units,
    redo_fingerprint,
    redo_meta,
)


def test_a_shard_that_lost_its_host_is_planned_anew_and_its_redo_kept_once_sound():
    assert current_fingerprints(["a", "b"], []) == {"a": "a", "b": "b"}  # nothing committed
    lost = {"fingerprint": "a", "redo": 2, "committed_at": 1}
    sound = {"fingerprint": "b", "committed_at": 1}
    first = current_fingerprints(["a", "b"], [lost, sound])
    assert first["b"] == "b" and first["a"] == redo_fingerprint("a", "a") != "a"
    redone = {"fingerprint": first["a"], "redo_of": "a", "committed_at": 2}
    # the redo is what the next run keeps (the lost shard is pruned, or still there after a stop)
    assert current_fingerprints(["a"], [redone]) == {"a": first["a"]}
    assert current_fingerprints(["a"], [lost, redone]) == {"a": first["a"]}
    # a redo that lost a host too is redone again, under yet another fingerprint
    again = current_fingerprints(["a"], [lost, {**redone, "redo": 1}])["a"]
    assert again not in ("a", first["a"])


def test_lost_host_rows_are_counted_and_recorded():
    rows = {"trajectories": [{"error": f"environment failure: {ENV_HOST_LOST}: http://h:1: ConnectError"},
                             {"error": "environment failure: step click crashed"}, {"error": None}],
            "exclusions": [{"reason": f"env_failure: {ENV_HOST_LOST}: lease gone"}]}
    assert lost_host_units(rows) == 2
    assert redo_meta("a", "a", 0) == {} and redo_meta("a", "x", 2) == {"redo_of": "a", "redo": 2}
