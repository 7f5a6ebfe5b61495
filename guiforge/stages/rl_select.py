"""rl_select: the RL task pool. Per task of rollouts' depth tier the success rate p over its k samples (samples
that met a fault, or have no verdict, left out: guiforge.failures), mixed outcomes only, p inside a band around 0.5, then integer domain
quotas summing to the budget, filled by closeness to 0.5 and skill diversity, with the
fallback when a domain runs short. Every task left out is an exclusion with its reason.

One shard: the quotas are a choice over every task of the run.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, field_validator

from guiforge.failures import valid_sample
from guiforge.filters import apply_filters
from guiforge.lake.exclusions import exclusion_row
from guiforge.selection import (
    Candidate,
    NoVariance,
    OutOfBand,
    TooFewValid,
    allocate,
    measures_rate,
    pick,
)
from guiforge.stages.base import ShardPlan, Stage, StageConfig


class RlSelectConfig(StageConfig):
    budget: int = Field(default=16, ge=0, le=1_000_000, description="tasks in the pool (B)")
    band: tuple[float, float] = Field(default=(0.2, 0.8), description="[lo, hi] around 0.5 for p")
    min_valid: int = Field(default=4, ge=1, le=1024, description="samples left after the faults")
    balance: Literal["equal"] | dict[str, float] = Field(
        default="equal", description="equal shares over the domains rolled out, or explicit shares per domain")

    @field_validator("band")
    @classmethod
    def _band(cls, v: tuple[float, float]) -> tuple[float, float]:
        lo, hi = v
        if not 0 <= lo <= 0.5 <= hi <= 1:
            raise ValueError(f"band [{lo}, {hi}] must hold 0.5 and lie in [0, 1]")
        return v

    @field_validator("balance")
    @classmethod
    def _shares(cls, v):
        if isinstance(v, dict) and (not v or any(s < 0 for s in v.values()) or sum(v.values()) <= 0):
            raise ValueError("explicit shares are non-negative numbers per domain with a positive sum")
        return v


def graded_rewards(valid: list[dict]) -> dict:
    """For a task whose environment kind grades its own reward (``graded`` in the verdict):
    the band is on the mean reward and the variance is the rewards', not success's (samples
    scored 1.0, 0.6 and 0.2 all succeed yet give GRPO a signal)."""
    if not any((json.loads(s.get("criteria_json") or "null") or {}).get("graded") is not None for s in valid):
        return {}
    scores = [float(s["score"] or 0.0) for s in valid]
    return {"success_rate": sum(scores) / len(scores), "graded": True, "reward_spread": max(scores) - min(scores)}


class RlSelectStage(Stage):
    kind = "rl_select"
    config_model = RlSelectConfig
    description = "RL tasks with success rate near 0.5 and mixed outcomes, under integer domain quotas"
    config: RlSelectConfig

    def inputs(self) -> list[str]:
        return ["trajectories", "tasks"]

    def outputs(self) -> list[str]:
        return ["rl_tasks", "exclusions"]

    def plan(self, ctx) -> list[ShardPlan]:
        trajectories = ctx.input_shards("trajectories")
        tasks = ctx.input_shards("tasks")
        if not trajectories:
            return []
        return [ShardPlan(key="rl_select", params={"trajectories": [s.path for s in trajectories],
                                                   "tasks": [s.path for s in tasks]},
                          inputs=[s.fingerprint for s in trajectories + tasks])]

    def run(self, ctx, shard: ShardPlan):
        outcomes: dict[str, list[dict]] = {}
        for path in shard.params["trajectories"]:
            table = ctx.lake.read_shard(path)
            wanted = ("task_id", "success", "env_failure", "failure_kind", "score", "criteria_json", "tier")
            for t in table.select([c for c in wanted if c in table.column_names]).to_pylist():
                if measures_rate(t.get("tier")):  # breadth samples (one or two a task) measure no rate
                    outcomes.setdefault(t["task_id"], []).append(t)
        tasks = {}
        for path in shard.params["tasks"]:
            tasks.update({r["task_id"]: r for r in ctx.lake.read_shard(path).to_pylist() if r["task_id"] in outcomes})
        rows = []
        for task_id in sorted(outcomes):
            samples = outcomes[task_id]
            valid = [s for s in samples if valid_sample(s)]
            n_success = sum(bool(s["success"]) for s in valid)
            task = tasks[task_id]
            rows.append({"task_id": task_id, "domain": task["domain"], "skill_id": task.get("skill_id"),
                         "n_samples": len(samples), "n_valid": len(valid), "n_success": n_success,
                         "success_rate": n_success / len(valid) if valid else 0.0, **graded_rewards(valid)})
        band = apply_filters([TooFewValid(self.config.min_valid), NoVariance(), OutOfBand(*self.config.band)], rows,
                             stage=self.name, subject="task_id", subject_table="tasks")
        domains = sorted({r["domain"] for r in rows})
        shares = dict.fromkeys(domains, 1.0) if self.config.balance == "equal" else dict(self.config.balance)
        by_domain: dict[str, list[Candidate]] = {d: [] for d in shares}
        for r in band.kept:
            if r["domain"] in by_domain:
                by_domain[r["domain"]].append(Candidate(r["task_id"], r["domain"], r["skill_id"],
                                                        r["success_rate"], dict(r)))
        alloc = allocate(self.config.budget, shares, {d: len(c) for d, c in by_domain.items()})
        exclusions = list(band.exclusions)
        selected = []
        for domain in sorted(by_domain):
            chosen = pick(by_domain[domain], alloc.filled[domain])
            ids = {c.task_id for c in chosen}
            for rank, c in enumerate(chosen):
                selected.append(self._row(tasks[c.task_id], c, rank, alloc, domain))
            for c in by_domain[domain]:
                if c.task_id not in ids:
                    exclusions.append(exclusion_row(
                        self.name, "rl_quota", f"over the {domain} quota ({alloc.filled[domain]} tasks)",
                        c.task_id, "tasks", {"success_rate": c.success_rate}))
        for r in band.kept:
            if r["domain"] not in by_domain:
                exclusions.append(exclusion_row(self.name, "rl_quota", f"domain {r['domain']} has no share",
                                                r["task_id"], "tasks", {"shares": shares}))
        return {"rl_tasks": selected, "exclusions": exclusions}

    def _row(self, task: dict, c: Candidate, rank: int, alloc, domain: str) -> dict:
        quota, filled = alloc.quotas[domain], alloc.filled[domain]
        moved = f"; fallback {filled - quota:+d} (budget shortfall {alloc.shortfall})" if filled != quota else ""
        return {
            "task_id": c.task_id, "domain": domain, "skill_id": c.skill_id, "world_id": task.get("world_id"),
            "variant": task.get("variant"), "apps": list(task.get("apps") or []), "instruction": task["instruction"],
            "n_samples": c.extra["n_samples"], "n_valid": c.extra["n_valid"], "n_success": c.extra["n_success"],
            "success_rate": c.success_rate,
            "selected_reason": f"p={c.success_rate:.3f} in {list(self.config.band)}, mixed outcomes; "
                               f"{domain} quota {quota}, filled {filled}{moved}",
            "rank": rank, "round": task.get("round"), "quota": quota, "filled": filled,
            "task_json": json.dumps({k: v for k, v in task.items() if k != "run_id"}, ensure_ascii=False, default=str),
        }
