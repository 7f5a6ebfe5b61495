"""The fault plan is a function of the config and the unit of work: a rerun of the same
pipeline, whose shard keys name other upstream files, meets the same faults."""

from __future__ import annotations

from guiforge.faults import FaultsConfig, Injector, unit
from guiforge.faults.plan import inject

CONFIG = FaultsConfig(seed=3, model={"server_error": 0.3, "timeout": 0.2})


def _met(shard_key: str, units: list[tuple[str, int]]) -> dict[tuple[str, int], str | None]:
    injector, out = Injector(CONFIG), {}
    with injector.shard("rollouts", shard_key):
        for task, sample in units:
            with unit(task, sample):
                hit = inject("model")
                out[task, sample] = hit and hit.kind
    return out


def test_a_unit_meets_the_same_fault_whatever_its_shard_is_called():
    units = [(f"tsk_{i:03d}", s) for i in range(40) for s in range(2)]
    first = _met("rollouts[part-aaaa.parquet+0:2]", units)
    again = _met("rollouts[part-bbbb.parquet+0:2]", list(reversed(units)))
    assert first == again
    met = [kind for kind in first.values() if kind]
    assert {"server_error", "timeout"} <= set(met) and len(met) < len(units)  # the rates strike some, not all


def test_operations_outside_a_unit_draw_by_shard():
    injector = Injector(FaultsConfig(seed=0, model={"server_error": 0.5}))
    hits = set()
    for i in range(40):
        with injector.shard("judge", f"judge[{i}]"):
            hits.add(inject("model") is not None)
    assert hits == {True, False}
