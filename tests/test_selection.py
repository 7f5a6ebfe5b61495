"""Quota arithmetic and the RL band filters (guiforge/selection.py)."""

from __future__ import annotations

import random

import pytest

from guiforge.filters import apply_filters
from guiforge.selection import (
    Candidate,
    NoVariance,
    OutOfBand,
    TooFewValid,
    allocate,
    integer_quotas,
    pick,
)


def test_quotas_sum_to_the_budget_for_any_budget_and_shares():
    rng = random.Random(3)
    for _ in range(2000):
        domains = rng.sample(["web", "mobile", "desktop", "tools", "x", "y"], rng.randint(1, 6))
        shares = {d: rng.choice([0.0, 0.1, 1 / 3, 1.0, 2.5, rng.random()]) for d in domains}
        if sum(shares.values()) == 0:
            shares[domains[0]] = 1.0
        budget = rng.randint(0, 500)
        q = integer_quotas(budget, shares)
        assert sum(q.values()) == budget
        total = sum(shares.values())
        for d, s in shares.items():  # Hamilton: every quota within one of its exact share
            assert abs(q[d] - budget * s / total) < 1 + 1e-9
            if s == 0:
                assert q[d] == 0


def test_equal_shares_and_ties_go_to_the_domain_name():
    shares = dict.fromkeys(["web", "mobile", "desktop", "tools"], 1.0)
    assert integer_quotas(16, shares) == {"web": 4, "mobile": 4, "desktop": 4, "tools": 4}
    # 18 / 4 = 4.5 each: the two extra seats go to the first names in order, every run
    assert integer_quotas(18, shares) == {"web": 4, "mobile": 5, "desktop": 5, "tools": 4}
    assert integer_quotas(1, {"b": 1, "a": 1}) == {"b": 0, "a": 1}


def test_explicit_shares():
    assert integer_quotas(10, {"web": 0.5, "mobile": 0.3, "desktop": 0.2}) == {"web": 5, "mobile": 3, "desktop": 2}
    assert integer_quotas(7, {"web": 2, "mobile": 1}) == {"web": 5, "mobile": 2}  # 4.67 / 2.33


def test_bad_shares_are_errors():
    with pytest.raises(ValueError, match="sum to 0"):
        integer_quotas(3, {"web": 0})
    with pytest.raises(ValueError, match=">= 0"):
        integer_quotas(3, {"web": -1})


def test_fallback_moves_a_short_domain_remainder_to_the_others():
    shares = dict.fromkeys(["web", "mobile", "desktop", "tools"], 1.0)
    alloc = allocate(16, shares, {"web": 10, "mobile": 1, "desktop": 4, "tools": 9})
    assert alloc.quotas == {"web": 4, "mobile": 4, "desktop": 4, "tools": 4}
    assert alloc.filled["mobile"] == 1 and alloc.filled["desktop"] == 4
    assert sum(alloc.filled.values()) == 16 and alloc.shortfall == 0
    assert alloc.filled["web"] + alloc.filled["tools"] == 11  # 3 seats moved, split by share
    assert alloc.moved["mobile"] == -3


def test_fallback_reports_the_shortfall_when_nobody_can_fill():
    alloc = allocate(16, {"web": 1, "mobile": 1}, {"web": 3, "mobile": 5})
    assert alloc.filled == {"web": 3, "mobile": 5} and alloc.shortfall == 8


def test_fallback_respects_capacity_for_any_input():
    rng = random.Random(5)
    for _ in range(1000):
        domains = ["web", "mobile", "desktop", "tools"]
        shares = {d: rng.choice([0.5, 1.0, 2.0]) for d in domains}
        available = {d: rng.randint(0, 8) for d in domains}
        budget = rng.randint(0, 40)
        alloc = allocate(budget, shares, available)
        assert all(0 <= alloc.filled[d] <= available[d] for d in domains)
        assert sum(alloc.filled.values()) + alloc.shortfall == budget
        assert alloc.shortfall == max(0, budget - sum(available.values()))


def test_pick_prefers_closeness_to_half_then_new_skills():
    c = [Candidate("t1", "web", "a", 0.5), Candidate("t2", "web", "a", 0.5), Candidate("t3", "web", "b", 0.375),
         Candidate("t4", "web", "c", 0.25), Candidate("t0", "web", "a", 0.625)]
    assert [x.task_id for x in pick(c, 3)] == ["t1", "t3", "t4"]  # one per skill before a second "a"
    assert [x.task_id for x in pick(c, 5)] == ["t1", "t3", "t4", "t2", "t0"]
    assert pick(c, 0) == [] and len(pick(c, 99)) == 5


def test_band_filters_give_every_drop_a_reason():
    rows = [
        {"task_id": "few", "n_samples": 8, "n_valid": 2, "n_success": 1, "success_rate": 0.5},
        {"task_id": "all", "n_samples": 8, "n_valid": 8, "n_success": 8, "success_rate": 1.0},
        {"task_id": "none", "n_samples": 8, "n_valid": 7, "n_success": 0, "success_rate": 0.0},
        {"task_id": "high", "n_samples": 8, "n_valid": 8, "n_success": 7, "success_rate": 0.875},
        {"task_id": "good", "n_samples": 8, "n_valid": 8, "n_success": 3, "success_rate": 0.375},
    ]
    out = apply_filters([TooFewValid(4), NoVariance(), OutOfBand(0.2, 0.8)], rows, stage="rl_select",
                        subject="task_id", subject_table="tasks")
    assert [r["task_id"] for r in out.kept] == ["good"]
    reasons = {e["subject_id"]: (e["gate"], e["reason"]) for e in out.exclusions}
    assert reasons["few"][0] == "rl_valid" and "too few valid" in reasons["few"][1]
    assert "all 8 valid samples succeeded" in reasons["all"][1]
    assert "all 7 valid samples failed" in reasons["none"][1]
    assert reasons["high"] == ("rl_band", "success rate 0.875 outside the band [0.2, 0.8]")
