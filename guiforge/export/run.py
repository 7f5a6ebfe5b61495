"""One export of a run: read the lake, build the rows, write the folder in the format asked
for, and say what was written (the ``exports`` row and the exclusions to commit)."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guiforge.errors import GuiforgeError
from guiforge.export.budget import PIXEL_CONVENTIONS, Budget, fit_rows
from guiforge.export.figures import export_figures, screen_figures
from guiforge.export.formats import EXPORT_FORMATS, ExportJob
from guiforge.export.pairs import fit_pair_rows, pair_rows
from guiforge.export.rewards import progress_rows, rl_step_rows
from guiforge.export.rows import rl_rows, sft_rows
from guiforge.export.select import assign_splits, split_group
from guiforge.export.source import load_source, pick_run, read_images, task_world_json
from guiforge.export.target import check_target
from guiforge.harness.context import ContextPolicy
from guiforge.judge.tiers import TIERS
from guiforge.lake.check import verify_run
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.plugins import PluginError

MARKER = ".guiforge-export"
# The default context: the current screenshot, earlier steps as one line each (fits a trainer's
# max_length; the recorded prompts carry up to 10 past screenshots)
DEFAULT_CONTEXT = "summary:1"
RL_PROTOCOLS = ("tools", "completion")


@dataclass(frozen=True)
class ExportOptions:
    """What an export keeps and how it shapes rows (the export stage's config, the CLI's options).

    ``per_task``: SFT trajectories per task, the best first (None: every accepted one);
    ``max_length``: tokens a row may reach in the trainer (TRL's SFTConfig default; None: no
    fitting); ``min_image_tokens``: the least a screenshot may shrink to; ``validation`` and
    ``test``: shares of worlds held out; ``rl_protocol``: how the RL prompts ask for actions,
    ``tools`` (one ``act`` tool call a turn: TRL's multi-turn GRPO with GuiforgeEnv) or
    ``completion`` (every action in one reply: TaskReward replays it); ``sft_tiers``: the
    quality tiers the default SFT configs hold (every tier but reject has a config of its
    own); ``prm``: also write process-reward rows for every valid trajectory."""

    per_task: int | None = 1
    max_length: int | None = 1024
    min_image_tokens: int = 256
    validation: float = 0.05
    test: float = 0.05
    rl_protocol: str = "tools"
    sft_tiers: tuple[str, ...] = ("gold", "silver")
    prm: bool = False


@dataclass
class ExportResult:
    run_id: str
    out: Path
    fmt: str
    coords: str
    n_sft: int
    n_rl: int
    acceptance: str
    figures: dict[str, Any]
    context: str = "recorded"
    action_format: str = "guiforge"
    exports: list[dict[str, Any]] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    n_pairs: int = 0


def parse_context(spec: str | None) -> ContextPolicy | None:
    """``--context``: 'recorded', a policy kind ('summary', 'summary:1' (screenshots kept),
    'full', 'last_k:3', 'window:10:2') or the policy as JSON."""
    if spec in (None, "", "recorded"):
        return None
    try:
        if spec.strip().startswith("{"):
            return ContextPolicy.model_validate_json(spec)
        kind, *nums = spec.split(":")
        fields: dict[str, Any] = {"kind": kind}
        if kind == "last_k" and nums:
            fields["k"] = int(nums[0])
        if kind == "summary" and nums:
            fields["images"] = int(nums[0])
        if kind == "window" and nums:
            fields["window"] = int(nums[0])
            if len(nums) > 1:
                fields["overlap"] = int(nums[1])
        return ContextPolicy.model_validate(fields)
    except ValidationError as exc:
        why = exc.errors()[0]["msg"]
    except ValueError as exc:  # a number that is not one
        why = str(exc)
    raise GuiforgeError(f"--context: {spec!r} is not a context policy (recorded, full, summary, summary:N, "
                        f"last_k:K, window:K:O or JSON): {why}")


def export_run(lake: Lake, out: Path, *, run_id: str | None = None, fmt: str = "hf", coords: str | None = None,
               context: str | None = None, action_format: str | None = None,
               options: ExportOptions | None = None) -> ExportResult:
    """``action_format`` and ``coords``: what the student writes (``export.target``); the
    defaults are the harness's JSON on the 0-999 grid, or the format's own convention.
    ``context``: how prompts are built (default :data:`DEFAULT_CONTEXT`)."""
    options = options or ExportOptions()
    unknown = set(options.sft_tiers) - set(TIERS[:3])
    if unknown or not options.sft_tiers:
        raise GuiforgeError(f"--sft-tiers: {', '.join(sorted(unknown)) or 'none given'}: give some of gold, silver, "
                            "partial")
    if options.rl_protocol not in RL_PROTOCOLS:
        raise GuiforgeError(f"--rl-protocol: {options.rl_protocol!r} is not one of {', '.join(RL_PROTOCOLS)}")
    context = DEFAULT_CONTEXT if context is None else context
    try:
        writer = EXPORT_FORMATS.get(fmt)
    except PluginError as exc:
        raise GuiforgeError(f"--format: {exc}") from None
    target = check_target(action_format, coords)
    coords = target.coords
    policy = parse_context(context)
    started = time.perf_counter()

    verify_run(lake, pick_run(lake, run_id), "export")  # a damaged shard stops here, not as a wrong dataset
    src = load_source(lake, run_id)
    # every tier's rows (best of N: accepted ones gold first; partial ones apart), then the default SFT's tiers
    tiered = sft_rows(src, target, policy, options.per_task) + sft_rows(src, target, policy, options.per_task,
                                                                          pool=src.partial)
    worlds = task_world_json(lake, src.run_id, {r["world_id"] for r in src.rl_tasks if r.get("world_id")})
    rl = rl_rows(src, target, worlds, options.rl_protocol)
    rewards = rl_step_rows(src, target, policy)
    prm = progress_rows(src, target, policy, src.valid) if options.prm else []
    pairs = pair_rows(src, target, policy)
    every = (*tiered, *rl, *rewards, *prm, *pairs)
    images = read_images(lake, {sha for r in every for sha in r.images})
    missing = {sha for r in every for sha in r.images} - set(images)
    if missing:
        raise GuiforgeError(f"{lake.root}: images: {len(missing)} frame(s) the steps name are not in the images "
                            f"table (e.g. {sorted(missing)[0]}): run `guiforge lake check`")
    # points in a frame's own pixels pin its size: such rows are not fitted (the card says so)
    fitted = options.max_length if target.coords not in PIXEL_CONVENTIONS else None
    if fitted is not None:
        tiered = fit_rows(tiered, images, Budget(fitted, options.min_image_tokens), True,
                          lambda r, why: src.exclude("budget", why, f"{r.columns['trajectory_id']}#"
                                                                    f"{r.columns['step_index']}", "steps"))
        pairs = fit_pair_rows(pairs, images, Budget(fitted, options.min_image_tokens),
                              lambda r, why: src.exclude("budget", why, r.columns["pair_id"], "preference_pairs"))
    sft = [r for r in tiered if r.columns["quality_tier"] in options.sft_tiers]
    if not sft and not rl and not pairs:
        reasons = Counter(e["reason"].split(":")[0] for e in src.exclusions).most_common(3)
        raise GuiforgeError(f"{lake.root}: run {src.run_id}: nothing to export: no SFT row, RL prompt or preference pair "
                            f"(left out: {'; '.join(f'{r} ({n})' for r, n in reasons) or 'nothing accepted'}); "
                            "see `guiforge stats` for why")
    split_of = assign_splits([split_group(r.columns) for r in (*tiered, *rl, *rewards, *prm, *pairs)],
                             options.validation, options.test)
    for r in (*tiered, *rl, *rewards, *prm, *pairs):
        r.split = r.columns["split"] = split_of.get(split_group(r.columns), "train")
    _fresh_folder(out)

    n_steps = sum(len(src.steps[t["trajectory_id"]]) for t in src.trajectories) or 1
    lake_steps = lake.read_table("steps", run_id=src.run_id, columns=["step_index"]).num_rows
    raw_per_step = sum(src.raw_bytes.values()) / max(lake_steps, 1)
    # two significant figures: the raw lake's size moves by a byte or so with how its
    # wall-clock columns compress, which is no property of the data
    raw_per_step = float(f"{raw_per_step:.2g}") if raw_per_step >= 1 else raw_per_step
    figures: dict[str, Any] = {"raw_bytes_per_step": round(raw_per_step), **export_figures(sft, rl),
                               "max_length": fitted, "rl_protocol": options.rl_protocol,
                               "tier_rows": dict(Counter(r.columns["quality_tier"] for r in tiered)),
                               "rl_step_rows": len(rewards), "prm_rows": len(prm), "dpo_pairs": len(pairs),
                               "screens": screen_figures(sft, src.tasks)}
    job = ExportJob(out, src, sft, rl, images, coords, target, policy, figures, options, tiered=tiered,
                    rl_steps=rewards, prm=prm, pairs=pairs)
    kinds = [(kind, n, fmt) for kind, n in writer().write(job)]
    seconds = time.perf_counter() - started
    figures.update({"seconds": round(seconds, 3), "rows_per_s": round((len(sft) + len(rl)) / max(seconds, 1e-9), 1),
                    "steps_considered": n_steps, "excluded": len(src.exclusions)})
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    details = {"acceptance": src.acceptance, "context": context, "action_format": target.action_format,
               "figures": figures,
               "exclusions": dict(Counter(e["reason"] for e in src.exclusions).most_common(50))}
    exports = [{"export_id": "exp_" + fingerprint([src.run_id, str(out), kind, fmt, coords, target.action_format, context or "",
                                                   created],
                                                  14),
                "kind": kind, "path": str(out), "n_rows": n, "format": f, "coords": coords,
                "source_run": src.run_id, "created_at": created, "details_json": json.dumps(details)}
               for kind, n, f in kinds]
    return ExportResult(src.run_id, out, fmt, coords, len(sft), len(rl), src.acceptance, figures,
                        context, target.action_format, exports, src.exclusions, len(pairs))


def _fresh_folder(out: Path) -> None:
    """An export folder is rebuilt whole, never mixed with an older export; a folder that
    holds anything else is never deleted."""
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise GuiforgeError(f"{out}: --out: the folder exists and is not a guiforge export; "
                                "give an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by guiforge export; the whole folder is replaced on the next export\n")


def commit_export(lake: Lake, result: ExportResult, stage: str = "export") -> None:
    """The ``exports`` rows and the exclusions of an export made outside a pipeline run
    (``guiforge export``), committed under the source run like any stage's shard."""
    # the same export again (same run, folder, format, convention) replaces its shard
    fp = fingerprint([result.run_id, str(result.out.resolve()), result.fmt, result.coords, result.context,
                      *([result.action_format] if result.action_format != "guiforge" else [])])
    commit_shard(lake, ShardCommit(stage, result.run_id, fp, f"export[{result.out.name}]"),
                 {"exports": result.exports, "exclusions": result.exclusions}, replace=True)
