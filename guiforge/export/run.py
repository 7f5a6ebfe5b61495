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
from guiforge.export.source import load_source, pick_run, read_images, task_world_json
from guiforge.export.target import check_target
from guiforge.harness.context import ContextPolicy
from guiforge.lake.check import verify_run
from guiforge.lake.fingerprint import fingerprint
from guiforge.lake.store import Lake

FORMATS = ("hf", "trl", "llamafactory")
MARKER = ".guiforge-export"


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


def parse_context(spec: str | None) -> ContextPolicy | None:
    """``--context``: 'recorded' (default), a policy kind ('summary', 'full', 'last_k:3',
    'window:10:2') or the policy as JSON."""
    if spec in (None, "", "recorded"):
        return None
    try:
        if spec.strip().startswith("{"):
            return ContextPolicy.model_validate_json(spec)
        kind, *nums = spec.split(":")
        fields: dict[str, Any] = {"kind": kind}
        if kind == "last_k" and nums:
            fields["k"] = int(nums[0])
        if kind == "window" and nums:
            fields["window"] = int(nums[0])
            if len(nums) > 1:
                fields["overlap"] = int(nums[1])
        return ContextPolicy.model_validate(fields)
    except ValidationError as exc:
        why = exc.errors()[0]["msg"]
    except ValueError as exc:  # a number that is not one
        why = str(exc)
    raise GuiforgeError(f"--context: {spec!r} is not a context policy (recorded, full, summary, last_k:K, "
                        f"window:K:O or JSON): {why}")


def _dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def export_run(lake: Lake, out: Path, *, run_id: str | None = None, fmt: str = "hf", coords: str | None = None,
               context: str | None = None, action_format: str | None = None) -> ExportResult:
    """``action_format`` and ``coords``: what the student writes (``export.target``); the
    defaults are the harness's JSON on the 0-999 grid, or the format's own convention."""
    if fmt not in FORMATS:
        raise GuiforgeError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    target = check_target(action_format, coords)
    coords = target.coords
    policy = parse_context(context)
    started = time.perf_counter()
    from guiforge.export.rows import rl_rows, sft_rows

    verify_run(lake, pick_run(lake, run_id), "export")  # a damaged shard stops here, not as a wrong dataset
    src = load_source(lake, run_id)
    sft = sft_rows(src, target, policy)
    worlds = task_world_json(lake, src.run_id, {r["world_id"] for r in src.rl_tasks if r.get("world_id")})
    rl = rl_rows(src, target, worlds)
    images = read_images(lake, {sha for r in (*sft, *rl) for sha in r.images})
    missing = {sha for r in (*sft, *rl) for sha in r.images} - set(images)
    if missing:
        raise GuiforgeError(f"{lake.root}: images: {len(missing)} frame(s) the steps name are not in the images "
                            f"table (e.g. {sorted(missing)[0]}): run `guiforge lake check`")
    _fresh_folder(out)

    n_steps = sum(len(v) for v in src.steps.values()) or 1
    lake_steps = lake.read_table("steps", run_id=src.run_id, columns=["step_index"]).num_rows
    raw_per_step = sum(src.raw_bytes.values()) / max(lake_steps, 1)
    figures: dict[str, Any] = {"raw_bytes_per_step": round(raw_per_step)}
    kinds: list[tuple[str, int, str]] = []
    if fmt == "llamafactory":
        from guiforge.export.llamafactory import write_llamafactory

        info = write_llamafactory(out, sft, images)
        figures["sft_bytes_per_step"] = round(_dir_bytes(out) / max(len(sft), 1))
        kinds.append(("sft", len(sft), "llamafactory"))
        figures["images_written"] = info["images"]
    else:
        from guiforge.export.card import write_card
        from guiforge.export.hf import features_for, write_parquet

        by_domain: dict[str, list] = {}
        for r in sft:
            by_domain.setdefault(r.domain, []).append(r)
        for domain, rows in sorted(by_domain.items()):
            write_parquet(out / "sft" / domain, "sft", rows, images)
            write_parquet(out / "sft_prompt_completion" / domain, "prompt_completion", rows, images)
        write_parquet(out / "rl", "rl", rl, images)
        sft_bytes = _dir_bytes(out / "sft") if sft else 0
        figures["sft_bytes_per_step"] = round(sft_bytes / max(len(sft), 1))
        columns = list(sft[0].columns) if sft else []
        rl_columns = list(rl[0].columns) if rl else []
        write_card(out, run_id=src.run_id, acceptance=src.acceptance, coords=coords, target=target,
                   context="as recorded" if policy is None else f"rebuilt with context policy {policy.kind}",
                   sft_domains=Counter({d: len(v) for d, v in by_domain.items()}),
                   sft_features=features_for("sft", columns), pc_features=features_for("prompt_completion", columns),
                   rl_features=features_for("rl", rl_columns), n_rl=len(rl),
                   exclusions=Counter(e["reason"] for e in src.exclusions), figures=figures)
        kinds += [("sft", len(sft), fmt), ("sft_prompt_completion", len(sft), fmt), ("rl", len(rl), fmt)]
    seconds = time.perf_counter() - started
    figures.update({"seconds": round(seconds, 3), "rows_per_s": round((len(sft) + len(rl)) / max(seconds, 1e-9), 1),
                    "steps_considered": n_steps, "excluded": len(src.exclusions)})
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    details = {"acceptance": src.acceptance, "context": context or "recorded", "action_format": target.action_format,
               "figures": figures,
               "exclusions": dict(Counter(e["reason"] for e in src.exclusions).most_common(50))}
    exports = [{"export_id": "exp_" + fingerprint([src.run_id, str(out), kind, fmt, coords, target.action_format, context or "",
                                                   created],
                                                  14),
                "kind": kind, "path": str(out), "n_rows": n, "format": f, "coords": coords,
                "source_run": src.run_id, "created_at": created, "details_json": json.dumps(details)}
               for kind, n, f in kinds]
    return ExportResult(src.run_id, out, fmt, coords, len(sft), len(rl), src.acceptance, figures,
                        context or "recorded", target.action_format, exports, src.exclusions)


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
    from guiforge.lake.writer import ShardCommit, commit_shard

    # the same export again (same run, folder, format, convention) replaces its shard
    fp = fingerprint([result.run_id, str(result.out.resolve()), result.fmt, result.coords, result.context,
                      *([result.action_format] if result.action_format != "guiforge" else [])])
    commit_shard(lake, ShardCommit(stage, result.run_id, fp, f"export[{result.out.name}]"),
                 {"exports": result.exports, "exclusions": result.exclusions})
