"""The LLaMA-Factory export: sharegpt multimodal JSON (``messages`` + ``images``, one
``<image>`` token per image, in order), the image files beside it (each frame once, by
hash) and a ``dataset_info.json`` entry per split naming the columns and tags; preference
pairs in its pairwise form (``chosen`` / ``rejected`` turns, ``ranking: true``). Train on the
last turn only with ``mask_history: true`` (the dataset card says why).

LLaMA-Factory's sharegpt reader wants a system turn first (optional), then user and
assistant turns alternating, ending with the assistant: consecutive user messages of a
harness prompt (the task, earlier steps, an observation) are joined into one turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guiforge.export.rows import ExportRow

DATASET = "guiforge_sft"
PAIRS = "guiforge_dpo"
IMAGE_TOKEN = "<image>"


def _text(content: list[dict[str, Any]]) -> str:
    return "\n".join(IMAGE_TOKEN if part["type"] == "image" else part["text"] for part in content)


def image_name(sha: str, images: dict[str, dict[str, Any]]) -> str:
    return f"images/{sha}.{images[sha].get('format') or 'png'}"


def _turns(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Trainer messages as sharegpt turns, consecutive messages of one role joined."""
    out: list[dict[str, str]] = []
    for m in messages:
        text = _text(m["content"])
        if out and out[-1]["role"] == m["role"]:
            out[-1]["content"] += "\n" + text
        else:
            out.append({"role": m["role"], "content": text})
    return out


def sharegpt(row: ExportRow, images: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"messages": _turns(row.messages), "images": [image_name(sha, images) for sha in row.images],
            **{k: row.columns[k] for k in ("trajectory_id", "step_index", "task_id", "domain")}}


def pairwise(row: ExportRow, images: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A preference row in LLaMA-Factory's pairwise sharegpt form: the prompt's turns (ending
    with the user's), then ``chosen`` and ``rejected`` as one assistant turn each."""
    chosen, rejected = (_turns([m])[0] for m in row.messages[-2:])
    return {"messages": _turns(row.messages[:-2]), "chosen": chosen, "rejected": rejected,
            "images": [image_name(sha, images) for sha in row.images],
            **{k: row.columns[k] for k in ("pair_id", "task_id", "domain", "failure_mode")}}


def write_llamafactory(folder: Path, rows: list[ExportRow], images: dict[str, dict[str, Any]],
                       options: Any = None, pairs: list[ExportRow] = ()) -> dict[str, Any]:
    """One dataset per split (``guiforge_sft``: train, ``guiforge_sft_validation``,
    ``guiforge_sft_test``), rows with a screenshot only; the text-only rows (terminal, tools)
    as ``guiforge_sft_text`` (and its splits) without an images column; the preference pairs
    as ``guiforge_dpo`` (and its splits, ``ranking: true``: stage ``dpo`` in LLaMA-Factory)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "images").mkdir(exist_ok=True)
    written = 0
    for sha in sorted({sha for r in (*rows, *pairs) for sha in r.images}):
        path = folder / image_name(sha, images)
        if not path.exists():
            path.write_bytes(images[sha]["data"])
            written += 1
    tags = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
            "system_tag": "system"}
    info: dict[str, Any] = {}
    n = _write_datasets(folder, info, DATASET, rows, lambda r: sharegpt(r, images), {"messages": "messages"}, tags)
    n_pairs = _write_datasets(folder, info, PAIRS, pairs, lambda r: pairwise(r, images),
                              {"messages": "messages", "chosen": "chosen", "rejected": "rejected"}, tags,
                              ranking=True)
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=1))
    return {"rows": n, "images": written, "pairs": n_pairs}


def _write_datasets(folder: Path, info: dict[str, Any], name: str, rows: list, record, columns: dict[str, str],
                    tags: dict[str, str], ranking: bool = False) -> int:
    """One JSON file per (with or without images, split) of ``rows``, each entered in
    ``info`` (dataset_info.json); returns the records written."""
    n = 0
    for entry_name, visual in ((name, True), (f"{name}_text", False)):
        for split in ("train", "validation", "test"):
            part = [r for r in rows if bool(r.images) == visual and r.split == split]
            if not part:
                continue
            entry = entry_name if split == "train" else f"{entry_name}_{split}"
            records = [record(r) for r in part]
            if not visual:
                for rec in records:
                    rec.pop("images")
            (folder / f"{entry}.json").write_text(json.dumps(records, ensure_ascii=False))
            info[entry] = {"file_name": f"{entry}.json", "formatting": "sharegpt", **({"ranking": True} if ranking else {}),
                           "columns": {**columns, **({"images": "images"} if visual else {})}, "tags": tags}
            n += len(records)
    return n
