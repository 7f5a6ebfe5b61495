"""The LLaMA-Factory export: sharegpt multimodal JSON (``messages`` + ``images``, one
``<image>`` token per image, in order), the image files beside it (each frame once, by
hash) and a ``dataset_info.json`` entry naming the columns and tags.

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
IMAGE_TOKEN = "<image>"


def _text(content: list[dict[str, Any]]) -> str:
    return "\n".join(IMAGE_TOKEN if part["type"] == "image" else part["text"] for part in content)


def image_name(sha: str, images: dict[str, dict[str, Any]]) -> str:
    return f"images/{sha}.{images[sha].get('format') or 'png'}"


def sharegpt(row: ExportRow, images: dict[str, dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, str]] = []
    for m in row.messages:
        text = _text(m["content"])
        if messages and messages[-1]["role"] == m["role"]:
            messages[-1]["content"] += "\n" + text
        else:
            messages.append({"role": m["role"], "content": text})
    return {"messages": messages, "images": [image_name(sha, images) for sha in row.images],
            **{k: row.columns[k] for k in ("trajectory_id", "step_index", "task_id", "domain")}}


def write_llamafactory(folder: Path, rows: list[ExportRow], images: dict[str, dict[str, Any]]) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "images").mkdir(exist_ok=True)
    written = 0
    for sha in sorted({sha for r in rows for sha in r.images}):
        path = folder / image_name(sha, images)
        if not path.exists():
            path.write_bytes(images[sha]["data"])
            written += 1
    records = [sharegpt(r, images) for r in rows]
    (folder / f"{DATASET}.json").write_text(json.dumps(records, ensure_ascii=False))
    info = {DATASET: {"file_name": f"{DATASET}.json", "formatting": "sharegpt",
                      "columns": {"messages": "messages", "images": "images"},
                      "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                               "assistant_tag": "assistant", "system_tag": "system"}}}
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=1))
    return {"rows": len(records), "images": written}
