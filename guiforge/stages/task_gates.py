"""task_gates: the gates between a rendered candidate and a task in the lake.

In order: near-duplicates (same skill and nearly the same instruction, or the same text
as any other task), the instruction gates (it must not give the answer away and must name
only entities that exist), then the package gate in the real environment. Each rejection
is a row in exclusions with its gate and reason.

``until`` says how much to gate. ``all`` judges every candidate (a task bank). ``used``
judges candidates in the rollouts' order (guiforge.selection.balanced_sample) in waves and
stops once as many have passed as the stages reading these tasks take (their
``uses_first``); a number stops at that many. Candidates past the stop are never judged.
"""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Literal

from pydantic import Field

from guiforge.failures import FAULT_KINDS
from guiforge.faults import carried, shard_faults
from guiforge.lake.exclusions import exclusion_row
from guiforge.selection import balanced_sample
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import env_manager, task_world, world_index


class TaskGatesConfig(StageConfig):
    package_gate: bool = Field(default=True, description="run every reference solution in the real environment")
    near_duplicate_threshold: float = Field(default=0.9, gt=0, le=1)
    instances_per_domain: int = Field(default=2, ge=1, le=16, description="environment instances per domain")
    shard_size: int = Field(default=20, ge=1, le=10000,
                            description="candidates per shard (small shards keep every worker busy to the end)")
    concurrency: int = Field(default=1, ge=1, le=32,
                             description="package gates run at once per shard (a desktop gate mostly waits "
                                         "on LibreOffice, so several overlap well)")
    until: Literal["all", "used"] | Annotated[int, Field(ge=1)] = Field(
        default="all", description="gate every candidate (all), only as many as the rollouts use (used), or until "
                                   "this many passed; used and a number gate in the rollouts' order")


class TaskGatesStage(Stage):
    kind = "task_gates"
    config_model = TaskGatesConfig
    code = ("guiforge.stages.task_gates", "guiforge.stages.tasks", "guiforge.stages.shared", "guiforge.envs", "guiforge.gates", "guiforge.harness", "guiforge.teacher", "guiforge.verify",
            "guiforge.tasks", "guiforge.preparers", "guiforge.worlds", "guiforge.models", "guiforge.skills",
            "guiforge.errors", "guiforge.paths")
    description = "near-duplicate, instruction and package gates; accepted candidates become tasks"
    config: TaskGatesConfig
    in_waves = True  # with ``until``: the next wave follows the verdicts so far

    optional_inputs = ("worlds",)  # candidates without worlds (from a task-source stage) need none
    absent_inputs: frozenset[str] = frozenset()  # set by the compile step (compile_graph.py)

    def inputs(self) -> list[str]:
        return ["task_candidates", *(t for t in self.optional_inputs if t not in self.absent_inputs)]

    def outputs(self) -> list[str]:
        return ["tasks", "exclusions"]

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        """Candidates excluded for a fault, out of every candidate the shard judged."""
        return count_gate_failures(outputs.get("exclusions") or [], len(outputs.get("tasks") or []))

    def plan(self, ctx) -> list[ShardPlan]:
        target = self.target(ctx)
        shards = ctx.input_shards("task_candidates")
        everything = [s.fingerprint for s in shards]  # duplicates are judged against all candidates
        size = self.config.shard_size
        if target is None:
            return [ShardPlan(key=f"gates<{s.fingerprint}[{i}:{i + size}]",
                              params={"path": s.path, "rows": [i, i + size], "all": [x.path for x in shards]},
                              inputs=[s.fingerprint, *everything])
                    for s in shards for i in range(0, s.rows, size)]
        return self._wave(ctx, 0, target + math.ceil(target / 4))  # a few spare for rejections

    def plan_more(self, ctx, done: list[tuple[ShardPlan, dict | None]]) -> list[ShardPlan]:
        """The next wave of the rollouts' order, sized by the pass rate so far, until
        ``target`` candidates passed or none is left."""
        target = self.target(ctx)
        if target is None or not done or any(entry is None for _, entry in done):
            return []  # a shard that did not commit: the rerun decides
        passed = sum((entry["outputs"].get("tasks") or {}).get("rows", 0) for _, entry in done)
        judged = sum(len(plan.params["tasks"]) for plan, _ in done)
        return self._wave(ctx, judged, next_wave(target, passed, judged))

    def target(self, ctx) -> int | None:
        """How many candidates must pass before the gate stops; None: every candidate."""
        until = self.config.until
        if until == "all":
            return None
        if until == "used":
            wants = [r.uses_first("tasks") for r in ctx.pipeline.readers("tasks", self.name)]
            wants = [w for w in wants if w is not None]
            return None if not wants or "all" in wants else max(wants)
        return until

    def order(self, ctx) -> list[dict]:
        """Every candidate as {task_id, domain, skill_id, path, row}, in the rollouts' order."""
        def build():
            rows = []
            for s in ctx.input_shards("task_candidates"):
                t = ctx.lake.read_shard(s.path, columns=["task_id", "domain", "skill_id"])
                rows.extend({"task_id": a, "domain": b, "skill_id": c, "path": s.path, "row": i}
                            for i, (a, b, c) in enumerate(zip(*(t.column(x).to_pylist()
                                                                for x in ("task_id", "domain", "skill_id")), strict=True)))
            return balanced_sample(rows, None, ctx.seed)

        return ctx.resource(f"gate-order:{self.name}", build)

    def _wave(self, ctx, start: int, size: int) -> list[ShardPlan]:
        """Shards over candidates [start, start + size) of the rollouts' order."""
        order = self.order(ctx)
        shards = ctx.input_shards("task_candidates")
        everything, paths = [s.fingerprint for s in shards], [s.path for s in shards]
        end, step = min(start + size, len(order)), self.config.shard_size
        return [ShardPlan(key=f"gates<used>[{i}:{min(i + step, end)}]",
                          params={"tasks": [[r["task_id"], r["path"], r["row"]] for r in order[i:min(i + step, end)]],
                                  "all": paths},
                          inputs=everything)
                for i in range(start, end, step)]

    def duplicates(self, ctx, paths: list[str]) -> dict[str, str]:
        # heavy: faker, jinja2, imported when this runs
        from guiforge.gates.text_gates import near_duplicates

        def build():
            items = []
            for path in paths:
                t = ctx.lake.read_shard(path, columns=["task_id", "skill_id", "instruction"])
                items.extend(zip(*(t.column(c).to_pylist() for c in ("task_id", "skill_id", "instruction")), strict=True))
            return near_duplicates(items, self.config.near_duplicate_threshold)

        return ctx.resource(f"duplicates:{self.name}", build)

    def run(self, ctx, shard: ShardPlan):
        with shard_faults(ctx, self.name, shard.key):
            return self._gates(ctx, shard)

    def _gates(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.gates.package_gate import PackageGate
        from guiforge.gates.text_gates import leaks, speaks_to_model, unknown_entities
        from guiforge.tasks.materialize import task_spec

        dupes = self.duplicates(ctx, shard.params["all"])
        worlds = world_index(ctx)
        kinds = ctx.pipeline.kinds()  # the run's environment kinds, by domain
        gate = PackageGate(env_manager(ctx, self.config.instances_per_domain)) if self.config.package_gate else None
        accepted, excluded = [], []

        def reject(row: dict, gate_name: str, reason: str, details: dict | None = None) -> None:
            excluded.append(exclusion_row(self.name, gate_name, reason, row["task_id"], "task_candidates",
                                          {"skill_id": row["skill_id"], "domain": row["domain"], **(details or {})}))

        pending = []  # rows that passed the text gates, in shard order
        for row in candidate_rows(ctx, shard.params):
            row.pop("run_id", None)
            if row["task_id"] in dupes:
                reject(row, "near_duplicate", f"repeats task {dupes[row['task_id']]}")
                continue
            binding = json.loads(row["binding_json"] or "{}")
            world = task_world(worlds, row)
            revealed = leaks(row["instruction"], binding.get("leaks", []))
            if revealed:
                reject(row, "leak", f"the instruction gives the answer away: {revealed[0]!r}")
                continue
            to_model = speaks_to_model(row["instruction"])
            if to_model:
                reject(row, "voice", f"the instruction speaks to the model, not as a user: {to_model!r}")
                continue
            missing = unknown_entities(row["instruction"], world.model_dump_json()) if world is not None else []
            if missing:
                reject(row, "entities", f"the instruction names {missing[0]!r}, which the world does not contain")
                continue
            pending.append(row)

        def package(row: dict):
            kind = kinds.kind(row["domain"])
            return gate.check(task_spec(row, task_world(worlds, row), kind), json.loads(row["reference_json"] or "[]"),
                              row["variant"])

        verdicts = [None] * len(pending)
        if gate is not None:
            # Tasks that need the same instance run next to each other: a desktop's screen size
            # and look are fixed when LibreOffice starts, so interleaved looks restart it often.
            order = sorted(range(len(pending)), key=lambda i: _pool_order(pending[i]))
            with ThreadPoolExecutor(self.config.concurrency, thread_name_prefix="package-gate") as pool:
                for i, verdict in zip(order, pool.map(carried(package), [pending[i] for i in order]), strict=True):
                    verdicts[i] = verdict  # back in the shard's order
        for row, result in zip(pending, verdicts, strict=True):
            verdict = {"passed": True, "skipped": True}
            if result is not None:
                if not result.passed:  # gate: package, or the kind of a fault that repeated
                    reject(row, result.gate, result.reason, result.details)
                    continue
                verdict = {"passed": True, **result.details}
            row["gate_json"] = json.dumps({**json.loads(row["gate_json"] or "{}"), "package": verdict})
            accepted.append(row)
        return {"tasks": accepted, "exclusions": excluded}


def candidate_rows(ctx, params: dict) -> list[dict]:
    """The candidates a shard judges: a slice of one candidate shard, or listed ones."""
    if "rows" in params:
        start, end = params["rows"]
        return ctx.lake.read_shard(params["path"]).slice(start, end - start).to_pylist()
    by_path: dict[str, list[int]] = {}
    for _, path, row in params["tasks"]:
        by_path.setdefault(path, []).append(row)
    picked = {}
    for path, rows in by_path.items():
        for i, r in zip(rows, ctx.lake.read_shard(path).take(rows).to_pylist(), strict=True):
            picked[(path, i)] = r
    return [picked[(path, row)] for _, path, row in params["tasks"]]


def next_wave(target: int, passed: int, judged: int) -> int:
    """Candidates to judge next: what is missing over the pass rate so far (taken as at
    least a quarter, so that a run of rejections cannot ask for thousands at once)."""
    if passed >= target:
        return 0
    rate = max(passed / judged, 0.25) if judged else 1.0
    return math.ceil((target - passed) / rate)


def _pool_order(row: dict) -> str:
    """The environment pool a task's package gate acquires, as a sort key."""
    # heavy: faker, jinja2, imported when this runs
    from guiforge.gates.package_gate import env_spec

    presentation = json.loads(row.get("presentation_json") or "null")
    return repr(env_spec(row["domain"], row["variant"], presentation=presentation).pool_key)


def count_gate_failures(exclusions, accepted: int) -> tuple[dict[str, int], int]:
    """(exclusions for a fault by kind, candidates judged) of one shard's rows."""
    rows = exclusions.to_pylist() if hasattr(exclusions, "to_pylist") else list(exclusions)
    kinds: dict[str, int] = {}
    for r in rows:
        if r["gate"] in FAULT_KINDS:
            kinds[r["gate"]] = kinds.get(r["gate"], 0) + 1
    return kinds, accepted + len(rows)
