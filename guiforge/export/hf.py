"""The Hugging Face / TRL export: Parquet files that ``datasets.load_dataset`` reads with no
guiforge installed, images decoded as ``datasets.Image``.

Layout (each folder one config of the dataset card)::

    sft/<domain>/<split>-NNNNN.parquet                 conversational: messages + images
    sft_prompt_completion/<domain>/<split>-NNNNN.parquet  prompt + completion + images
    rl/<split>-NNNNN.parquet                           GRPO prompts: prompt + images + task spec
    sft_tiers/<tier>/<split>-NNNNN.parquet             conversational, one folder per quality tier
    rl_steps/<split>-NNNNN.parquet                     the RL pool's steps: prompt + completion + reward
    prm/<split>-NNNNN.parquet                          every valid step: prompt + completion + progress
    dpo/<split>-NNNNN.parquet                          preference pairs: prompt + chosen + rejected + images

``<split>`` is train, validation or test (by world: ``export.select``).

Each file is one row group with dictionary-encoded image bytes, so a frame that several rows
of a shard show (the last screenshots of a trajectory) is stored once in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, Image, List, Value

from guiforge.export.rows import ExportRow

ROWS_PER_FILE = 256
_CONTENT = List({"type": Value("string"), "text": Value("string")})
MESSAGES = List({"role": Value("string"), "content": _CONTENT})

_COLUMN_TYPES: dict[str, Any] = {
    "apps": List(Value("string")), "image_sha256": List(Value("string")),
    "step_index": Value("int32"), "sample_index": Value("int32"), "round": Value("int32"),
    "image_width": Value("int32"), "image_height": Value("int32"), "max_steps": Value("int32"),
    "n_samples": Value("int32"), "n_valid": Value("int32"), "n_success": Value("int32"),
    "chosen_step_index": Value("int32"), "shared_steps": Value("int32"),
    "trajectory_success": Value("bool"), "est_tokens": Value("int32"), "trajectory_score": Value("float64"), "success_rate": Value("float64"),
    "reward": Value("float64"), "progress": Value("float64"), "progress_before": Value("float64"),
    "undoes_progress": Value("bool"), "done": Value("bool"),
}


def features_for(kind: str, columns: list[str]) -> Features:
    """``kind``: sft (messages), prompt_completion (prompt, completion), rl (prompt) or dpo
    (prompt, chosen, rejected: TRL's conversational preference format)."""
    head: dict[str, Any] = {"sft": {"messages": MESSAGES}, "prompt_completion": {"prompt": MESSAGES,
                                                                                "completion": MESSAGES},
                            "rl": {"prompt": MESSAGES},
                            "dpo": {"prompt": MESSAGES, "chosen": MESSAGES, "rejected": MESSAGES}}[kind]
    return Features({**head, "images": List(Image()),
                     **{c: _COLUMN_TYPES.get(c, Value("string")) for c in columns}})


def _record(kind: str, row: ExportRow, images: dict[str, dict[str, Any]]) -> dict[str, Any]:
    frames = [{"bytes": images[sha]["data"], "path": f"{sha}.{images[sha].get('format') or 'png'}"}
              for sha in row.images]
    if kind == "sft":
        head = {"messages": row.messages}
    elif kind == "prompt_completion":
        head = {"prompt": row.messages[:-1], "completion": row.messages[-1:]}
    elif kind == "dpo":  # a pair row: the prompt, then chosen, then rejected (export.pairs)
        head = {"prompt": row.messages[:-2], "chosen": row.messages[-2:-1], "rejected": row.messages[-1:]}
    else:
        head = {"prompt": row.messages}
    return {**head, "images": frames, **row.columns}


def write_parquet(folder: Path, kind: str, rows: list[ExportRow], images: dict[str, dict[str, Any]],
                  split: str = "train") -> list[Path]:
    """Write ``rows`` under ``folder`` as <split>-NNNNN.parquet files; returns their paths."""
    if not rows:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    features = features_for(kind, list(rows[0].columns))
    schema = features.arrow_schema
    paths = []
    for n, start in enumerate(range(0, len(rows), ROWS_PER_FILE)):
        chunk = rows[start:start + ROWS_PER_FILE]
        table = pa.Table.from_pylist([_record(kind, r, images) for r in chunk], schema=schema)
        path = folder / f"{split}-{n:05d}.parquet"
        pq.write_table(table, path, row_group_size=len(chunk), compression="zstd",
                       use_dictionary=True, dictionary_pagesize_limit=1 << 30)
        paths.append(path)
    return paths
