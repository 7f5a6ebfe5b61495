"""Export formats: how an export's rows become files. Each is an entry point of the
``guiforge.exports`` group (guiforge's ``hf``, ``trl`` and ``llamafactory`` too), or a
``module:Class`` in an export's ``formats``; :class:`ExportFormat` is the base to write one.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from guiforge.export.figures import image_token_table
from guiforge.export.llamafactory import write_llamafactory
from guiforge.export.rows import ExportRow
from guiforge.export.select import SPLITS
from guiforge.export.source import Source
from guiforge.export.target import Target
from guiforge.harness.context import ContextPolicy
from guiforge.judge.tiers import TIERS
from guiforge.plugins import Registry


@dataclass
class ExportJob:
    """What a format writes: the rows of one export and how they were made. ``figures``
    collects what the format measured (``sft_bytes_per_step`` at least)."""

    out: Path
    source: Source
    sft: list[ExportRow]
    rl: list[ExportRow]
    images: dict[str, dict[str, Any]]
    coords: str
    target: Target
    policy: ContextPolicy | None
    figures: dict[str, Any] = field(default_factory=dict)
    options: Any = None  # export.run.ExportOptions
    tiered: list[ExportRow] = field(default_factory=list)  # every tier's SFT rows (the column quality_tier)
    rl_steps: list[ExportRow] = field(default_factory=list)  # the RL pool's samples step by step, with rewards
    prm: list[ExportRow] = field(default_factory=list)  # process-reward rows (an option)
    pairs: list[ExportRow] = field(default_factory=list)  # preference rows (export.pairs)


class ExportFormat(ABC):
    """One way to write an export folder."""

    name: ClassVar[str]

    @abstractmethod
    def write(self, job: ExportJob) -> list[tuple[str, int]]:
        """Write ``job.out``; return (dataset kind, rows) for each dataset written (an
        ``exports`` row each)."""


def dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


class HuggingFace(ExportFormat):
    """Parquet that ``datasets`` and TRL load: SFT (conversational and prompt-completion,
    a config per domain and one per quality tier), the RL prompt set and its per-step
    rewards, process-reward rows when asked for, the preference pairs (TRL's DPO format), a
    dataset card."""

    name = "hf"

    def write(self, job: ExportJob) -> list[tuple[str, int]]:
        # heavy: the writers import `datasets` (about a second), only for an export that uses them
        from guiforge.export.card import write_card

        # heavy: datasets, numpy, pandas, imported when this runs
        from guiforge.export.hf import features_for, write_parquet

        out, rl, figures = job.out, job.rl, job.figures
        # the image configs hold rows with a screenshot (a desktop terminal's is its window);
        # tools steps (text observations) go to their own `text_only` config
        sft = [r for r in job.sft if r.images]
        text = [r for r in job.sft if not r.images]
        by_domain: dict[str, list] = {}
        for r in sft:
            by_domain.setdefault(r.domain, []).append(r)
        for domain, rows in sorted(by_domain.items()):
            for split, part in by_split(rows).items():
                write_parquet(out / "sft" / domain, "sft", part, job.images, split)
                write_parquet(out / "sft_prompt_completion" / domain, "prompt_completion", part, job.images, split)
        for split, part in by_split(text).items():
            write_parquet(out / "sft_text", "sft", part, job.images, split)
        for split, part in by_split(rl).items():
            write_parquet(out / "rl", "rl", part, job.images, split)
        for split, part in by_split(job.pairs).items():
            write_parquet(out / "dpo", "dpo", part, job.images, split)
        # one config per tier (reject is never written); step rows labelled with their progress
        more = []
        for tier in TIERS[:3]:
            rows = [r for r in job.tiered if r.columns["quality_tier"] == tier and r.images]
            more.append((f"sft_{tier}", f"sft_tiers/{tier}/{{split}}-*.parquet", "sft", rows))
        more += [("rl_steps", "rl_steps/{split}-*.parquet", "prompt_completion", [r for r in job.rl_steps if r.images]),
                 ("prm", "prm/{split}-*.parquet", "prompt_completion", [r for r in job.prm if r.images])]
        for _, pattern, kind, rows in more:
            for split, part in by_split(rows).items():
                write_parquet(out / pattern.split("/{split}")[0], kind, part, job.images, split)
        extra = [(name, pattern, features_for(kind, list(rows[0].columns)), Counter(r.split for r in rows))
                 for name, pattern, kind, rows in more if rows]
        sft_bytes = dir_bytes(out / "sft") if sft else 0
        figures["sft_bytes_per_step"] = round(sft_bytes / max(len(sft), 1))
        columns = list(job.sft[0].columns) if job.sft else []
        rl_columns = list(rl[0].columns) if rl else []
        policy = job.policy
        write_card(out, run_id=job.source.run_id, acceptance=job.source.acceptance, coords=job.coords,
                   target=job.target, policy=policy, options=job.options,
                   token_table=image_token_table(sft, job.images),
                   sft_splits=Counter((r.domain, r.split) for r in sft), rl_splits=Counter(r.split for r in rl),
                   text_splits=Counter(r.split for r in text),
                   sft_features=features_for("sft", columns), pc_features=features_for("prompt_completion", columns),
                   rl_features=features_for("rl", rl_columns), n_rl=len(rl),
                   dpo_splits=Counter(r.split for r in job.pairs),
                   dpo_features=features_for("dpo", list(job.pairs[0].columns) if job.pairs else []),
                   exclusions=Counter(e["reason"] for e in job.source.exclusions), figures=figures, extra=extra)
        return [("sft", len(sft)), ("sft_prompt_completion", len(sft)), ("sft_text", len(text)), ("rl", len(rl)),
                ("dpo", len(job.pairs)), *((name, sum(counts.values())) for name, _, _, counts in extra)]


class TRL(HuggingFace):
    """The same folder as ``hf``, recorded as a TRL export."""

    name = "trl"


class LlamaFactory(ExportFormat):
    """LLaMA-Factory's sharegpt JSON (SFT, and the preference pairs in its pairwise form), the
    frames beside it and a dataset_info.json entry per dataset."""

    name = "llamafactory"

    def write(self, job: ExportJob) -> list[tuple[str, int]]:
        info = write_llamafactory(job.out, job.sft, job.images, job.options, job.pairs)
        job.figures["sft_bytes_per_step"] = round(dir_bytes(job.out) / max(len(job.sft), 1))
        job.figures["images_written"] = info["images"]
        return [("sft", len(job.sft)), ("dpo", info["pairs"])]


def by_split(rows: list[ExportRow]) -> dict[str, list[ExportRow]]:
    """Rows grouped by split, in the order train, validation, test."""
    out: dict[str, list[ExportRow]] = {}
    for split in SPLITS:
        part = [r for r in rows if r.split == split]
        if part:
            out[split] = part
    return out


def _is_format(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, ExportFormat) and not inspect.isabstract(obj)


def _check_format(name: str, cls: type[ExportFormat]) -> str | None:
    if ":" not in name and getattr(cls, "name", None) != name:
        return f"registered as {name!r} but the class says name {getattr(cls, 'name', None)!r}; make them the same"
    return None


EXPORT_FORMATS: Registry[type[ExportFormat]] = Registry(
    "guiforge.exports", "export format", "an ExportFormat subclass (guiforge.export.formats)", _is_format,
    _check_format)
