"""judge: a verdict per trajectory from what a VLM judge would see, the verifier's beside it,
SFT acceptance (every trajectory not accepted is an exclusion with its reason) and the
quality tier that refines it (``quality_tier``, guiforge.judge.tiers: a shard holds every
sample of a task, which the tiers' length rule compares).

One shard per few rollouts shards (``rollout_shards_per_shard``). The offline judge (the default with no keys) reads the key
screenshots with tesseract; a model judge gets them as images. With ``fallback_role`` set,
a trajectory whose primary judge gave no verdict is judged again by the fallback.

A trajectory that met a fault (``failure_kind``: environment, model, verifier) has no
outcome to judge: it gets no verdict and is never accepted. A judge call that fails for
good is a judgment of ``failure_kind`` ``model_failure``, with no verdict.
"""

from __future__ import annotations

from pydantic import Field

from guiforge.failures import FAULT_KINDS, failure_kind, is_fault
from guiforge.faults import shard_faults, unit
from guiforge.filters import apply_filters
from guiforge.judge.accept import (
    AcceptPolicy,
    accepted_reason,
    filters_for,
    policies_of,
    policy_for,
)
from guiforge.judge.evidence import JudgeView, build_view, choose_key_frames
from guiforge.judge.ocr import ScreenReader
from guiforge.judge.offline import OfflineJudge
from guiforge.judge.tiers import TierPolicy, assign_tiers
from guiforge.judge.verdict import Verdict
from guiforge.lake.images import ImageReader
from guiforge.models.loop import submit
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import read_with_optional

_STEP_COLUMNS = ["trajectory_id", "step_index", "image_sha256", "action", "feedback", "error", "target_json"]
_TIER_COLUMNS = ["attempts_json", "progress"]  # the tiers' parse retries and final progress (newer lakes)


class JudgeConfig(StageConfig):
    model_role: str = "judge"
    fallback_role: str | None = Field(default=None, description="a second judge for the primary's parse failures")
    key_frames: int = Field(default=3, ge=1, le=16, description="screenshots a judge sees: the last + most changed")
    accept: AcceptPolicy = Field(
        default="auto", description="SFT acceptance; auto: both where a verifier exists, judge where none")
    threshold: float = Field(default=0.6, ge=0, le=1, description="offline judge: score that counts as success")
    ocr_workers: int = Field(default=2, ge=1, le=32, description="tesseract processes at once (offline judge)")
    rollout_shards_per_shard: int = Field(
        default=8, ge=1, le=10_000,
        description="rollouts shards judged per shard: a model judge keeps its endpoint busy across all of them")
    tiers: TierPolicy = Field(default_factory=TierPolicy, description="gold / silver / partial / reject "
                                                                      "(judgments.quality_tier)")


def media_type(data: bytes) -> str:
    if data[:4] == b"\x89PNG":
        return "image/png"
    if data[:2] == b"\xff\xd8":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


class JudgeStage(Stage):
    kind = "judge"
    config_model = JudgeConfig
    description = "trajectory verdicts from instruction, action history and key screenshots; SFT acceptance"
    config: JudgeConfig

    @property
    def model_role(self) -> str:
        return self.config.model_role

    def model_roles(self) -> list[str]:
        return [self.config.model_role, *([self.config.fallback_role] if self.config.fallback_role else [])]

    def inputs(self) -> list[str]:
        return ["trajectories", "steps", "images", "tasks"]

    def outputs(self) -> list[str]:
        return ["judgments", "exclusions"]

    def failures(self, outputs: dict) -> tuple[dict[str, int], int]:
        """The judge's own faults (not the trajectories', nor its parse failures), out of its
        judgments."""
        rows = outputs.get("judgments") or []
        rows = rows.to_pylist() if hasattr(rows, "to_pylist") else rows
        kinds: dict[str, int] = {}
        for r in rows:
            if r.get("failure_kind") in FAULT_KINDS:
                kinds[r["failure_kind"]] = kinds.get(r["failure_kind"], 0) + 1
        return kinds, len(rows)

    def plan(self, ctx) -> list[ShardPlan]:
        steps = {s.fingerprint: s.path for s in ctx.input_shards("steps")}
        tasks = [s.fingerprint for s in ctx.input_shards("tasks")]
        rollouts = ctx.input_shards("trajectories")
        size = self.config.rollout_shards_per_shard
        plans = []
        for i in range(0, len(rollouts), size):
            group = rollouts[i:i + size]
            plans.append(ShardPlan(key=f"judge[{group[0].path.rsplit('/', 1)[-1]}+{len(group) - 1}]",
                                   params={"parts": [[s.path, steps.get(s.fingerprint)] for s in group]},
                                   inputs=[*(s.fingerprint for s in group), *tasks]))
        return plans

    # -- one shard ----------------------------------------------------------------------
    def _tasks(self, ctx) -> dict[str, dict]:
        def load():
            out = {}
            for s in ctx.input_shards("tasks"):
                out.update({r["task_id"]: r for r in ctx.lake.read_shard(s.path).to_pylist()})
            return out
        return ctx.resource(f"{self.name}:tasks", load)

    def run(self, ctx, shard: ShardPlan):
        with shard_faults(ctx, self.name, shard.key):
            return self._run(ctx, shard)

    def _run(self, ctx, shard: ShardPlan):
        trajectories: list[dict] = []
        by_trajectory: dict[str, list[dict]] = {}
        for trajectories_path, steps_path in shard.params["parts"]:
            trajectories.extend(ctx.lake.read_shard(trajectories_path).to_pylist())
            if steps_path:
                for r in read_with_optional(ctx.lake, steps_path, _STEP_COLUMNS, _TIER_COLUMNS).to_pylist():
                    by_trajectory.setdefault(r["trajectory_id"], []).append(r)
        tasks = self._tasks(ctx)
        views = [build_view(t, tasks[t["task_id"]], by_trajectory.get(t["trajectory_id"], [])) for t in trajectories]
        reader = ctx.resource("image-reader", lambda: ImageReader(ctx.lake))
        samples = {t["trajectory_id"]: t["sample_index"] for t in trajectories}
        verdicts: list[Verdict | None] = [no_outcome(t) if is_fault(t) else None for t in trajectories]
        todo = [i for i, v in enumerate(verdicts) if v is None]  # the rest has no outcome to judge
        # Key frames from the thumbnails stored with the frames; only frames a judge sees are read whole.
        thumbs = reader.thumbs(s.image_sha256 for i in todo for s in views[i].steps)
        for i in todo:
            views[i].key_frames = choose_key_frames(views[i], thumbs, self.config.key_frames)
        for i, v in zip(todo, self._judge(ctx, self.config.model_role, [views[i] for i in todo], reader, samples),
                        strict=True):
            verdicts[i] = v
        if self.config.fallback_role:
            redo = [i for i in todo if verdicts[i].success is None]
            if redo:
                again = self._judge(ctx, self.config.fallback_role, [views[i] for i in redo], reader, samples)
                for i, v in zip(redo, again, strict=True):
                    v.flags = [*v.flags, f"fallback_after:{verdicts[i].judge_model}"]
                    verdicts[i] = v
        out = self._rows(trajectories, tasks, views, verdicts)
        tiers = assign_tiers(trajectories, {r["trajectory_id"]: r["accepted"] for r in out["judgments"]},
                             {r["trajectory_id"]: r["score"] for r in out["judgments"]}, by_trajectory,
                             self.config.tiers)
        for r in out["judgments"]:
            r["quality_tier"] = tiers[r["trajectory_id"]]
        return out

    def _judge(self, ctx, role: str, views: list[JudgeView], reader: ImageReader,
               samples: dict[str, int]) -> list[Verdict]:
        if not views:
            return []
        model = ctx.model(role)
        if model.offline:
            ocr = ctx.resource(f"ocr:{self.config.ocr_workers}", lambda: ScreenReader(ctx.lake, self.config.ocr_workers))
            judge = OfflineJudge(self.config.threshold)
            wanted = sorted({sha for v in views for sha in judge.frames_needed(v)})
            images = reader.get_many(wanted, missing_ok=True)
            text = ocr.read_many((sha, images[sha]) for sha in wanted if sha in images)
            points = [p for v in views for p in judge.points_needed(v)]  # clicks that named no element
            under = ocr.read_points(points, reader.get_many({sha for sha, _, _ in points}, missing_ok=True))
            return [judge.judge(v, text, under) for v in views]

        # heavy: jinja2, imported when this runs
        from guiforge.judge.model_judge import ajudge

        client = ctx.client(role)
        images = reader.get_many((sha for v in views for _, sha in v.key_frames), missing_ok=True)
        types = {sha: media_type(data) for sha, data in images.items()}

        async def one(v: JudgeView) -> Verdict:
            # one unit of work per trajectory and judge, for an injected fault (guiforge.faults)
            with unit(v.task_id, f"{samples.get(v.trajectory_id)}/{role}"):
                return await ajudge(client, v, {sha: images[sha] for _, sha in v.key_frames}, types)

        futures = [submit(one(v)) for v in views]
        return [f.result() for f in futures]

    def _rows(self, trajectories, tasks, views, verdicts) -> dict:
        rows = []
        for t, view, v in zip(trajectories, views, verdicts, strict=True):
            task = tasks[t["task_id"]]
            verifier = None if is_fault(t) else t.get("success")
            rows.append({
                "trajectory_id": t["trajectory_id"], "task_id": t["task_id"], "domain": task["domain"],
                "skill_id": task.get("skill_id"), "judge": self.name, "judge_model": v.judge_model,
                "prompt_hash": v.prompt_hash, "success": v.success, "score": v.score,
                "verifier_success": verifier,
                "agrees": None if v.success is None or verifier is None else v.success == verifier,
                "rationale": v.rationale, "evidence_steps": v.evidence_steps,
                "evidence_images": v.evidence_images or [sha for _, sha in view.key_frames], "flags": v.flags,
                "parse_failure": v.parse_failure, "failure_kind": v.failure_kind, "input_tokens": v.input_tokens,
                "output_tokens": v.output_tokens, "cost_usd": v.cost_usd,
                # read by the acceptance filters only
                "trajectory_failure": failure_kind(t) if is_fault(t) else None, "verifier_score": t.get("score"),
                "trajectory_error": t.get("error"),
            })
        exclusions = []
        for policy in policies_of(self.config.accept):
            group = [r for r in rows if policy_for(self.config.accept, r) == policy]
            if not group:
                continue
            result = apply_filters(filters_for(policy), group, stage=self.name, subject="trajectory_id",
                                   subject_table="trajectories")
            kept = {r["trajectory_id"] for r in result.kept}
            reasons = {e["subject_id"]: e["reason"] for e in result.exclusions}
            for r in group:
                r["accept_policy"] = policy
                r["accepted"] = r["trajectory_id"] in kept
                r["accept_reason"] = accepted_reason(policy) if r["accepted"] else reasons[r["trajectory_id"]]
            exclusions.extend(result.exclusions)
        for r in rows:
            for k in ("trajectory_failure", "verifier_score", "trajectory_error"):
                r.pop(k)
        return {"judgments": rows, "exclusions": exclusions}


def no_outcome(trajectory: dict) -> Verdict:
    """The judgment of a trajectory that met a fault: nothing to judge, no verdict."""
    kind = failure_kind(trajectory)
    return Verdict(None, None, f"no outcome to judge: the trajectory is a {kind}", "none", flags=[kind])
