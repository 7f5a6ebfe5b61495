"""task_gates: the gates between a rendered candidate and a task in the lake.

In order: near-duplicates (same skill and nearly the same instruction, or the same text
as any other task), the instruction gates (it must not give the answer away and must name
only entities that exist), then the package gate in the real environment. Each rejection
is a row in exclusions with its gate and reason.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from pydantic import Field

from guiforge.failures import FAULT_KINDS
from guiforge.faults import carried, shard_faults
from guiforge.lake.exclusions import exclusion_row
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import env_manager, world_index


class TaskGatesConfig(StageConfig):
    package_gate: bool = Field(default=True, description="run every reference solution in the real environment")
    near_duplicate_threshold: float = Field(default=0.9, gt=0, le=1)
    instances_per_domain: int = Field(default=2, ge=1, le=16, description="environment instances per domain")
    shard_size: int = Field(default=20, ge=1, le=10000,
                            description="candidates per shard (small shards keep every worker busy to the end)")
    concurrency: int = Field(default=1, ge=1, le=32,
                             description="package gates run at once per shard (a desktop gate mostly waits "
                                         "on LibreOffice, so several overlap well)")


class TaskGatesStage(Stage):
    kind = "task_gates"
    config_model = TaskGatesConfig
    code = ("guiforge.stages.task_gates", "guiforge.stages.tasks", "guiforge.stages.shared", "guiforge.envs", "guiforge.gates", "guiforge.harness", "guiforge.teacher", "guiforge.verify",
            "guiforge.tasks", "guiforge.preparers", "guiforge.worlds", "guiforge.models", "guiforge.skills",
            "guiforge.errors", "guiforge.paths")
    description = "near-duplicate, instruction and package gates; accepted candidates become tasks"
    config: TaskGatesConfig

    def inputs(self) -> list[str]:
        return ["task_candidates", "worlds"]

    def outputs(self) -> list[str]:
        return ["tasks", "exclusions"]

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        """Candidates excluded for a fault, out of every candidate the shard judged."""
        return count_gate_failures(outputs.get("exclusions") or [], len(outputs.get("tasks") or []))

    def plan(self, ctx) -> list[ShardPlan]:
        shards = ctx.input_shards("task_candidates")
        everything = [s.fingerprint for s in shards]  # duplicates are judged against all candidates
        size = self.config.shard_size
        return [ShardPlan(key=f"gates<{s.fingerprint}[{i}:{i + size}]",
                          params={"path": s.path, "rows": [i, i + size], "all": [x.path for x in shards]},
                          inputs=[s.fingerprint, *everything])
                for s in shards for i in range(0, s.rows, size)]

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
        gate = PackageGate(env_manager(ctx, self.config.instances_per_domain)) if self.config.package_gate else None
        accepted, excluded = [], []

        def reject(row: dict, gate_name: str, reason: str, details: dict | None = None) -> None:
            excluded.append(exclusion_row(self.name, gate_name, reason, row["task_id"], "task_candidates",
                                          {"skill_id": row["skill_id"], "domain": row["domain"], **(details or {})}))

        pending = []  # rows that passed the text gates, in shard order
        start, end = shard.params["rows"]
        for row in ctx.lake.read_shard(shard.params["path"]).slice(start, end - start).to_pylist():
            row.pop("run_id", None)
            if row["task_id"] in dupes:
                reject(row, "near_duplicate", f"repeats task {dupes[row['task_id']]}")
                continue
            binding = json.loads(row["binding_json"] or "{}")
            world = worlds[row["world_id"]]
            revealed = leaks(row["instruction"], binding.get("leaks", []))
            if revealed:
                reject(row, "leak", f"the instruction gives the answer away: {revealed[0]!r}")
                continue
            to_model = speaks_to_model(row["instruction"])
            if to_model:
                reject(row, "voice", f"the instruction speaks to the model, not as a user: {to_model!r}")
                continue
            missing = unknown_entities(row["instruction"], world.model_dump_json())
            if missing:
                reject(row, "entities", f"the instruction names {missing[0]!r}, which the world does not contain")
                continue
            pending.append(row)

        def package(row: dict):
            return gate.check(task_spec(row, worlds[row["world_id"]]), json.loads(row["reference_json"]),
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
