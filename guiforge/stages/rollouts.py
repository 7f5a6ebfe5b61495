"""rollouts: teacher samples of the gated tasks in the real environments, through the harness.

Two tiers (``depth``): every task rolled out ``samples`` times for SFT breadth, and a
domain-balanced subset of ``depth.tasks`` rolled out ``depth.samples`` times, whose success
rate rl_select reads (each trajectory records its ``tier``). Without ``depth`` every task
gets ``samples`` samples, all of the ``depth`` tier.

The offline teacher is the scripted teacher (reference solution + seeded noise); with a
teacher model configured, the same stage rolls out that model. Each trajectory records its
outcome and every step; screenshots are stored once, by hash, in ``images``. A sample that
meets a fault is a trajectory of its ``failure_kind`` with no outcome; an instance that
failed (or would not start) is replaced before the next sample.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guiforge.envs.base import EnvFailure
from guiforge.failures import ENV_FAILURE, FAULT_KINDS
from guiforge.faults import carried, shard_faults, unit
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import Episode
from guiforge.harness.policies import ModelPolicy, Noise, ScriptedTeacher
from guiforge.lake.blobs import ShardContent
from guiforge.lake.fingerprint import fingerprint
from guiforge.models.base import Message
from guiforge.models.base import prompt_hash as hash_messages
from guiforge.selection import BREADTH, DEPTH, balanced_sample
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import env_manager, task_world, world_index
from guiforge.teacher.weaknesses import Weaknesses


class DepthTier(BaseModel):
    """The k-sample tier: a domain-balanced subset of the rolled-out tasks, sampled k times
    so that rl_select can measure each task's success rate."""

    model_config = ConfigDict(extra="forbid")
    tasks: Annotated[int, Field(ge=1)] | Literal["all"] = Field(
        default=48, description="tasks in the k-sample tier (the first of the domain-balanced order)")
    samples: int = Field(default=8, ge=1, le=256, description="rollouts per task of this tier (k)")


class RolloutsConfig(StageConfig):
    samples: int = Field(default=8, ge=1, le=256, description="rollouts per task (the breadth tier's, with depth)")
    tasks: Annotated[int, Field(ge=1)] | Literal["all"] = Field(
        default=48, description="a domain-balanced sample of this many tasks, or all")
    depth: DepthTier | None = Field(
        default=None, description="the k-sample tier for RL selection; without it every task is of that tier")
    tasks_per_shard: int = Field(default=3, ge=1, le=1000)
    model_role: str = "teacher"
    context: ContextPolicy = Field(default_factory=ContextPolicy)
    noise: Noise = Field(default_factory=Noise)
    weaknesses: Weaknesses | None = Field(default=None, description="planted, situation-dependent teacher mistakes")
    instances_per_domain: int = Field(default=2, ge=1, le=16)
    phone_screenshots: Literal["device", "css"] = Field(
        default="device", description="mobile frames in device pixels (1082x2202) or CSS pixels (412x839, ~6x cheaper)")
    concurrency: int = Field(default=1, ge=1, le=32,
                             description="tasks of a shard rolled out at once (each in its own environment)")
    max_parse_retries: int = Field(default=2, ge=0, le=10)
    progress: bool = Field(default=True, description="score the rubric after every step: steps.progress, "
                                                     "progress_delta, criteria_flips_json, undoes_progress")

    @model_validator(mode="after")
    def _depth_is_deeper(self) -> RolloutsConfig:
        if self.depth is not None and self.depth.samples < self.samples:
            raise ValueError(f"depth.samples ({self.depth.samples}) is below samples ({self.samples}): the k-sample "
                             "tier's tasks are rolled out at least as often as the others")
        return self

    def tiers(self, chosen: list[dict]) -> list[tuple[dict, int, str]]:
        """(task row, samples, tier) for each task of ``chosen`` (in the domain-balanced
        order, whose every prefix is balanced too: the depth tier is its first tasks)."""
        if self.depth is None:
            return [(r, self.samples, DEPTH) for r in chosen]
        n = len(chosen) if self.depth.tasks == "all" else self.depth.tasks
        return [(r, self.depth.samples, DEPTH) if i < n else (r, self.samples, BREADTH) for i, r in enumerate(chosen)]


class RolloutsStage(Stage):
    kind = "rollouts"
    config_model = RolloutsConfig
    code = ("guiforge.stages.rollouts", "guiforge.stages.task_gates", "guiforge.stages.tasks", "guiforge.stages.shared", "guiforge.envs", "guiforge.gates", "guiforge.harness", "guiforge.teacher", "guiforge.verify",
            "guiforge.tasks", "guiforge.preparers", "guiforge.worlds", "guiforge.models", "guiforge.skills",
            "guiforge.errors", "guiforge.paths")
    description = "k teacher rollouts per task through the harness: trajectories, steps, images"
    config: RolloutsConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    optional_inputs = ("worlds",)  # tasks without worlds (from a task-source stage) need none
    absent_inputs: frozenset[str] = frozenset()  # set by the compile step (compile_graph.py)

    def inputs(self) -> list[str]:
        return ["tasks", *(t for t in self.optional_inputs if t not in self.absent_inputs)]

    def outputs(self) -> list[str]:
        return ["trajectories", "steps", "images"]

    def uses_first(self, table: str):
        return self.config.tasks if table == "tasks" else None

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        return count_failures(outputs.get("trajectories") or [])

    def plan(self, ctx) -> list[ShardPlan]:
        shards = ctx.input_shards("tasks")
        rows = []
        for s in shards:
            t = ctx.lake.read_shard(s.path, columns=["task_id", "domain", "skill_id", "rubric_json"])
            rows.extend({"task_id": a, "domain": b, "skill_id": c, "path": s.path, "checks": check_names(r)}
                        for a, b, c, r in zip(*(t.column(x).to_pylist()
                                                for x in ("task_id", "domain", "skill_id", "rubric_json")), strict=True))
        n = None if self.config.tasks == "all" else self.config.tasks
        chosen = self.config.tiers(balanced_sample(rows, n, ctx.seed))
        inputs = [s.fingerprint for s in shards]
        plans = []
        for tier in (DEPTH, BREADTH):
            mine = [(r, k) for r, k, t in chosen if t == tier]
            if not mine:
                continue
            # shards of about the same work: a breadth shard holds as many episodes as a depth one
            size = self.config.tasks_per_shard
            if tier == BREADTH and self.config.depth is not None:
                size = max(size, size * self.config.depth.samples // self.config.samples)
            plans += [ShardPlan(key=f"rollouts[{tier}:{i}:{i + size}]" if self.config.depth else f"rollouts[{i}:{i + size}]",
                                params={"tasks": [[r["task_id"], r["path"], k, tier] for r, k in mine[i:i + size]],
                                        **used_plugins([r for r, _ in mine[i:i + size]])},
                                inputs=inputs)
                      for i in range(0, len(mine), size)]
        return plans

    def policy_for(self, ctx, row: dict, sample: int):
        model = ctx.model(self.model_role)
        if model.offline:
            return ScriptedTeacher(json.loads(row["reference_json"]), row["domain"], row["variant"], self.config.noise,
                                   seed=int(fingerprint([ctx.seed, sample], 8), 16), task_id=row["task_id"],
                                   weaknesses=self.config.weaknesses, apps=list(row.get("apps") or []),
                                   instruction=row["instruction"])
        return ModelPolicy(ctx.client(self.model_role), sample=sample)

    def run(self, ctx, shard: ShardPlan):
        manager = env_manager(ctx, self.config.instances_per_domain)
        worlds = world_index(ctx)
        images = ShardContent(ctx.content_store("images"))  # this run's committed frames
        harness = {"context": self.config.context.model_dump(), "noise": self.config.noise.model_dump(),
                   **({"weaknesses": self.config.weaknesses.model_dump()} if self.config.weaknesses else {}),
                   "max_parse_retries": self.config.max_parse_retries}
        try:
            with shard_faults(ctx, self.name, shard.key):
                return self._rollouts(ctx, shard, manager, worlds, images, harness)
        except BaseException:
            images.abandon()  # claimed frames were never committed: let other shards store them
            raise

    def _rollouts(self, ctx, shard, manager, worlds, images, harness) -> dict:
        # heavy: faker, jinja2, imported when this runs
        from guiforge.gates.package_gate import env_spec
        from guiforge.harness.episode import run_episode, system_prompt

        # heavy: faker, jinja2, imported when this runs
        from guiforge.tasks.materialize import task_spec

        cache: dict[str, dict] = {}
        for _, path, *_ in shard.params["tasks"]:
            if path not in cache:
                cache[path] = {r["task_id"]: r for r in ctx.lake.read_shard(path).to_pylist()}
        rows = [cache[path][task_id] for task_id, path, *_ in shard.params["tasks"]]
        # (samples, tier) per task; a plan from before the tiers: the stage's samples, depth
        tiers = {p[0]: (p[2], p[3]) if len(p) > 2 else (self.config.samples, DEPTH) for p in shard.params["tasks"]}

        kinds = ctx.pipeline.kinds()  # the run's environment kinds, by domain

        def collect(row: dict) -> list:
            """The k episodes of one task, in one environment lease while it stays sound."""
            kind = kinds.kind(row["domain"])
            spec = task_spec(row, task_world(worlds, row), kind)
            out = []
            wanted = env_spec(row["domain"], row["variant"], self.config.phone_screenshots, spec.presentation, kind)
            lease = None
            try:
                for sample in range(tiers[row["task_id"]][0]):
                    policy = self.policy_for(ctx, row, sample)
                    if lease is not None and lease.broken:  # the next sample gets a new instance
                        lease.release()
                        lease = None
                    with unit(row["task_id"], sample, env=EPISODE_SPAN, model=EPISODE_SPAN):
                        if lease is None:
                            lease, episode = acquire(manager, wanted, row["task_id"])
                        if lease is not None:
                            episode = run_episode(lease, spec, policy, self.config.context, row["variant"],
                                                  self.config.max_parse_retries, progress=self.config.progress)
                    out.append((sample, policy.name, episode, getattr(policy, "events", None)))
            finally:
                if lease is not None:
                    lease.release()
            return out

        with ThreadPoolExecutor(self.config.concurrency, thread_name_prefix="rollout") as pool:
            collected = list(pool.map(carried(collect), rows))  # map keeps the shard's order

        trajectories, steps = [], []
        for row, episodes in zip(rows, collected, strict=True):
            task_id = row["task_id"]
            default_system = system_prompt(row["domain"], row["variant"])
            wanted = env_spec(row["domain"], row["variant"], self.config.phone_screenshots, None,
                              kinds.kind(row["domain"]))
            phone = {"phone_screenshots": wanted.screenshot_scale} if wanted.screenshot_scale else {}
            model = ctx.model(self.model_role)
            for sample, policy_name, episode, events in episodes:
                system_hash = hash_messages([Message("system", episode.system_prompt or default_system)])
                # How the teacher was asked: its action format, coordinates and sampling.
                lineage = {} if model.offline else {
                    "action_format": episode.action_format, "coords": episode.coords,
                    "sampling": model.sampling(sample)}
                trajectory_id = "trj_" + fingerprint([task_id, sample, policy_name, ctx.seed, harness], 14)
                verdict = episode.verdict
                trajectories.append({
                    "trajectory_id": trajectory_id, "task_id": task_id, "sample_index": sample,
                    "success": None if verdict is None else verdict.success,
                    "score": None if verdict is None else verdict.score,
                    "env_failure": episode.env_failure, "failure_kind": episode.failure_kind,
                    "n_steps": len(episode.steps),
                    "criteria_json": json.dumps(verdict.as_dict() if verdict else None),
                    "teacher_model": policy_name,
                    "harness_json": json.dumps({**harness, "variant": row["variant"], "answer": episode.answer,
                                                "status": episode.status, **phone, **lineage}),
                    "prompt_hash": system_hash, "seed": ctx.seed, "wall_s": episode.wall_s,
                    "input_tokens": episode.input_tokens, "output_tokens": episode.output_tokens,
                    "error": episode.error,
                    "teacher_events_json": json.dumps(events) if events is not None else None,
                    "tier": tiers[task_id][1],
                })
                for s in episode.steps:
                    sha = images.add_image(s.screenshot, s.image_format)[0] if s.screenshot else None
                    steps.append({
                        "trajectory_id": trajectory_id, "step_index": s.step_index, "image_sha256": sha,
                        "image_width": s.width or None, "image_height": s.height or None,
                        "thought": s.thought, "raw_output": s.raw_output,
                        "action": s.action.row() if s.action else None,
                        "action_pixels_json": json.dumps(s.action_pixels) if s.action_pixels else None,
                        "feedback": s.feedback, "error": s.error, "latency_s": round(s.latency_s, 4),
                        "input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                        "prompt_hash": s.prompt_hash, "prompt_messages": s.prompt_messages,
                        "prefix_messages": s.prefix_messages,
                        "prompt_json": json.dumps(s.prompt, ensure_ascii=False),
                        "target_json": json.dumps(s.target, ensure_ascii=False) if s.target else None,
                        "attempts_json": json.dumps(s.attempts, ensure_ascii=False),
                        "screen_json": json.dumps(s.screen, ensure_ascii=False) if s.screen else None,
                        **(s.progress or {}),
                    })
        return {"trajectories": trajectories, "steps": steps, "images": images.rows}


# An injected fault strikes one of an episode's first steps or model calls (guiforge.faults).
EPISODE_SPAN = 3


def acquire(manager, wanted, task_id: str):
    """(lease, None), or (None, an env_failure episode) when no instance would start."""
    try:
        return manager.acquire(wanted, timeout_s=1800), None
    except EnvFailure as exc:
        return None, Episode(task_id, env_failure=True, failure_kind=ENV_FAILURE,
                             error=f"environment failure: no {wanted.domain} instance: {exc}")


def check_names(rubric_json: str | None) -> list[str]:
    """The checks a task's rubric names (for the shard's plugin fingerprint)."""
    rubric = json.loads(rubric_json) if rubric_json else []
    return sorted({str(c.get("check", {}).get("fn")) for c in rubric if isinstance(c, dict)} - {"None"})


def used_plugins(rows: list[dict]) -> dict:
    """The domains (environment kinds) and checks a shard's tasks use: the engine puts the
    plugins behind them in the shard's fingerprint (orchestration/provenance.py)."""
    return {"domains": sorted({r["domain"] for r in rows}), "checks": sorted({c for r in rows for c in r["checks"]})}


def count_failures(trajectories) -> tuple[dict[str, int], int]:
    """(faults by kind, trajectories) of a shard's rows, for the run's failure share (a
    parse failure is the policy's own outcome, not a fault of the machinery)."""
    rows = trajectories.to_pylist() if hasattr(trajectories, "to_pylist") else list(trajectories)
    kinds: dict[str, int] = {}
    for r in rows:
        if r.get("failure_kind") in FAULT_KINDS:
            kinds[r["failure_kind"]] = kinds.get(r["failure_kind"], 0) + 1
    return kinds, len(rows)
