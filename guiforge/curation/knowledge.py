"""The offline diagnoser's knowledge level: failure rates aggregated over tasks, and the
weaknesses that stand out.

Only tasks solved at least once count (see ``solved``). Two kinds of groups: of samples (per skill, app, domain, task length: the share of samples
that fail) and of actions (per action type, target size, typed script: the share of actions
where a failed sample departed from a successful one). A group stands out when its rate is
well above the rest's (a two-proportion z-test plus a minimum gap and support). Standouts
are taken greedily, strongest first, and each one explains away what it covers (the app's
samples, the small targets' departures) before the next is tested, so a weak app does not
also surface as each of its skills or as "clicks fail".
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SampleFacts:
    trajectory_id: str
    task_id: str
    failed: bool
    groups: set[str]  # skill:..., app:..., domain:..., task_length:>N
    step_groups: list[set[str]] = field(default_factory=list)  # per step: action_type:..., target_size:...
    departure_groups: set[str] = field(default_factory=set)  # the departing step's (expected) groups


@dataclass
class Standout:
    key: str
    unit: str  # samples | actions
    n: int
    failures: int
    rate: float
    rest_rate: float
    z: float
    tasks: list[str]
    trajectories: list[str]


@dataclass(frozen=True)
class Thresholds:
    z: float = 3.0
    sample_gap: float = 0.2
    action_gap: float = 0.08
    min_samples: int = 8
    min_actions: int = 8
    min_failures: int = 3


def baseline(group: str) -> bool:
    """Groups that name the ordinary case (targets of normal size, ASCII text): never a
    weakness themselves, only the rest a weakness is measured against."""
    return group.startswith("target_size:>=") or group == "text:ascii"


def _z(f1: int, n1: int, f2: int, n2: int) -> float:
    if n1 == 0 or n2 == 0:
        return 0.0
    p = (f1 + f2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 1e-9) * (1 / n1 + 1 / n2))
    return (f1 / n1 - f2 / n2) / se


def counts(samples: list[SampleFacts], explained: set[str] = frozenset()) -> tuple[Counter, Counter, Counter, Counter]:
    """(samples, failed samples) per sample group and (actions, departures) per action
    group; actions and departures in an ``explained`` group are left out."""
    n, f, an, af = Counter(), Counter(), Counter(), Counter()
    for s in samples:
        for g in s.groups:
            n[g] += 1
            f[g] += s.failed
        for groups in s.step_groups:
            if not groups & explained:
                an.update(groups)
        if not s.departure_groups & explained:
            af.update(s.departure_groups)
    return n, f, an, af


def rates(samples: list[SampleFacts]) -> dict[str, dict[str, dict]]:
    """dimension -> group -> {n, failures, rate}: the table a researcher reads first."""
    out: dict[str, dict[str, dict]] = {}
    n, f, an, af = counts(samples)
    for totals, fails, unit in ((n, f, "samples"), (an, af, "actions")):
        for g, total in totals.items():
            dim = g.split(":", 1)[0]
            out.setdefault(dim, {})[g] = {"unit": unit, "n": total, "failures": fails[g],
                                          "rate": round(fails[g] / total, 4)}
    return out


def solved(samples: list[SampleFacts]) -> tuple[list[SampleFacts], list[str]]:
    """(samples of tasks solved at least once, the tasks never solved). A weakness is
    something the teacher can do but does unreliably; a task no sample solves may as well be
    broken or out of reach, so it is reported apart, not counted for or against a group."""
    wins: dict[str, bool] = {}
    for s in samples:
        wins[s.task_id] = wins.get(s.task_id, False) or not s.failed
    return [s for s in samples if wins[s.task_id]], sorted(t for t, ok in wins.items() if not ok)


def _contrast(failures: int, n: int, total_failures: int, total_n: int) -> tuple[float, float, float]:
    """(failure rate in the group, rate in the rest, z of the difference), rounded."""
    rest_n, rest_f = total_n - n, total_failures - failures
    rate, rest = failures / n, (rest_f / rest_n if rest_n else 0.0)
    return round(rate, 4), round(rest, 4), round(_z(failures, n, rest_f, rest_n), 2)


def _better(best: Standout | None, candidate: Standout, gap: float, th: Thresholds) -> Standout | None:
    """``candidate`` where it stands out (z and rate gap over the thresholds) more than ``best``."""
    if candidate.z >= th.z and candidate.rate - candidate.rest_rate >= gap and (best is None or candidate.z > best.z):
        return candidate
    return best


def standouts(samples: list[SampleFacts], th: Thresholds = Thresholds()) -> list[Standout]:
    """The standouts among ``samples`` (pass the solved ones, see :func:`solved`)."""
    active = {s.trajectory_id: s for s in samples}
    explained_actions: set[str] = set()
    found: list[Standout] = []
    while True:
        best: Standout | None = None
        live = list(active.values())
        total_n, total_f = len(live), sum(s.failed for s in live)
        n, f, an, af = counts(live, explained_actions)
        total_an = sum(1 for s in live for groups in s.step_groups if not groups & explained_actions)
        total_af = sum(1 for s in live if s.departure_groups and not s.departure_groups & explained_actions)
        done = {x.key for x in found}
        for g in n:
            if g in done or n[g] < th.min_samples or f[g] < th.min_failures:
                continue
            members = [s for s in live if g in s.groups and s.failed]
            best = _better(best, Standout(g, "samples", n[g], f[g], *_contrast(f[g], n[g], total_f, total_n),
                                          sorted({s.task_id for s in members}),
                                          sorted(s.trajectory_id for s in members)), th.sample_gap, th)
        for g in an:
            if g in done or baseline(g) or an[g] < th.min_actions or af[g] < th.min_failures:
                continue
            members = [s for s in live if g in s.departure_groups]
            best = _better(best, Standout(g, "actions", an[g], af[g], *_contrast(af[g], an[g], total_af, total_an),
                                          sorted({s.task_id for s in members}),
                                          sorted(s.trajectory_id for s in members)), th.action_gap, th)
        if best is None:
            return found
        found.append(best)
        if best.unit == "samples":
            for s in [s for s in live if best.key in s.groups]:
                del active[s.trajectory_id]
        else:
            explained_actions.add(best.key)
            for s in [s for s in live if best.key in s.departure_groups]:
                del active[s.trajectory_id]
