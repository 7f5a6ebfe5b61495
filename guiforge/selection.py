"""RL task selection: the success-rate band as filters, and integer domain quotas.

After MintAct: a task is worth an RL trainer's time when its k samples disagree (a group
with no outcome variance gives GRPO no signal) and its success rate p sits near 0.5. A
budget B is split into integer quotas q_d with sum(q_d) = B by the largest-remainder method
(exact fractions, ties to the domain name, so the split is deterministic); a domain short
of candidates hands its remainder to the domains that still have some, by their shares.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from guiforge.filters import Drop, Filter

# Rollouts' tiers (trajectories.tier): breadth samples cover the tasks for SFT, one or two
# each; depth samples (k per task) are what a success rate is measured on.
BREADTH, DEPTH = "breadth", "depth"


def measures_rate(tier: str | None) -> bool:
    """Whether a trajectory of ``tier`` counts toward its task's success rate (a lake from
    before the tiers has none: every sample counts)."""
    return tier in (None, DEPTH)


def balanced_sample(rows: list[dict], n: int | None, seed: int) -> list[dict]:
    """The rollouts' order of tasks: round-robin over domains (seeded), preferring skills not
    yet picked in a domain; every prefix is domain-balanced. The package gate follows the
    same order over the candidates when it gates only what the rollouts use."""
    rng = random.Random(seed)
    by_domain: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["task_id"]):
        by_domain.setdefault(r["domain"], []).append(r)
    for group in by_domain.values():
        rng.shuffle(group)
    order: list[dict] = []
    seen: dict[str, set[str]] = {d: set() for d in by_domain}
    domains = sorted(by_domain)
    while any(by_domain.values()) and (n is None or len(order) < n):
        for d in domains:
            group = by_domain[d]
            if not group or (n is not None and len(order) >= n):
                continue
            pick = next((r for r in group if r["skill_id"] not in seen[d]), group[0])
            group.remove(pick)
            seen[d].add(pick["skill_id"])
            order.append(pick)
    return order


def integer_quotas(budget: int, shares: Mapping[str, float]) -> dict[str, int]:
    """Quotas proportional to ``shares`` that sum to ``budget`` exactly (Hamilton's method)."""
    if budget < 0:
        raise ValueError(f"budget must be >= 0, not {budget}")
    weights = {d: Fraction(s) for d, s in shares.items()}
    if any(w < 0 for w in weights.values()):
        raise ValueError(f"shares must be >= 0: {dict(shares)}")
    total = sum(weights.values())
    if total == 0:
        if budget:
            raise ValueError("shares sum to 0: no domain can take the budget")
        return dict.fromkeys(shares, 0)
    exact = {d: budget * w / total for d, w in weights.items()}
    quotas = {d: math.floor(x) for d, x in exact.items()}
    left = budget - sum(quotas.values())
    for d in sorted(exact, key=lambda d: (-(exact[d] - quotas[d]), d))[:left]:
        quotas[d] += 1
    return quotas


@dataclass
class Allocation:
    quotas: dict[str, int]  # the split of the budget by shares
    filled: dict[str, int]  # what each domain gets after the fallback
    shortfall: int  # budget left unfilled: no domain had candidates left

    @property
    def moved(self) -> dict[str, int]:
        """Per domain: seats gained (+) or given up (-) by the fallback."""
        return {d: self.filled[d] - self.quotas[d] for d in self.quotas}


def allocate(budget: int, shares: Mapping[str, float], available: Mapping[str, int]) -> Allocation:
    """Quotas by shares, capped by the candidates each domain has; what a short domain
    leaves is split again (by share) among the domains with candidates left, until the
    budget is met or nobody has any."""
    quotas = integer_quotas(budget, shares)
    filled = {d: min(q, available.get(d, 0)) for d, q in quotas.items()}
    remainder = budget - sum(filled.values())
    while remainder > 0:
        spare = {d: s for d, s in shares.items() if s > 0 and available.get(d, 0) > filled[d]}
        if not spare:
            break
        for d, extra in integer_quotas(remainder, spare).items():
            take = min(extra, available[d] - filled[d])
            filled[d] += take
            remainder -= take
    return Allocation(quotas, filled, remainder)


@dataclass
class Candidate:
    task_id: str
    domain: str
    skill_id: str | None
    success_rate: float
    extra: dict[str, Any] = field(default_factory=dict)


def pick(candidates: Sequence[Candidate], n: int) -> list[Candidate]:
    """``n`` candidates by closeness to 0.5, a skill not yet picked first (round-robin over
    skills once each has one); ties by task id."""
    pool = sorted(candidates, key=lambda c: (abs(c.success_rate - 0.5), c.task_id))
    chosen: list[Candidate] = []
    used: set[str | None] = set()
    while pool and len(chosen) < n:
        best = next((c for c in pool if c.skill_id not in used), None)
        if best is None:
            used.clear()
            continue
        pool.remove(best)
        used.add(best.skill_id)
        chosen.append(best)
    return chosen


# -- the band, as filters over per-task rows {n_samples, n_valid, n_success, success_rate} -------

class TooFewValid(Filter):
    gate = "rl_valid"

    def __init__(self, min_valid: int):
        self.min_valid = min_valid

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        if row["n_valid"] < self.min_valid:
            return Drop(f"too few valid samples ({row['n_valid']} of {row['n_samples']}; need {self.min_valid})",
                        {"env_failures": row["n_samples"] - row["n_valid"]})
        return None


class NoVariance(Filter):
    gate = "rl_variance"

    def check(self, row: Mapping[str, Any]) -> str | None:
        if row.get("graded"):  # a kind's own graded reward: its rewards must differ
            return None if row["reward_spread"] > 0 else f"all {row['n_valid']} valid samples have the same reward"
        if row["n_success"] == row["n_valid"]:
            return f"all {row['n_valid']} valid samples succeeded (no outcome variance)"
        if row["n_success"] == 0:
            return f"all {row['n_valid']} valid samples failed (no outcome variance)"
        return None


class OutOfBand(Filter):
    gate = "rl_band"

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi

    def check(self, row: Mapping[str, Any]) -> Drop | None:
        p = row["success_rate"]
        if not self.lo <= p <= self.hi:
            return Drop(f"success rate {p:.3f} outside the band [{self.lo}, {self.hi}]", {"success_rate": p})
        return None
