"""TRL's SFTTrainer with its default settings trains a few steps on an export (run with the
trainer venv's python): ``python trl_sft.py EXPORT_DIR WORK_DIR [--fit-only]``.

Only what a run needs is set (output folder, a few steps, a small batch, no reports or
saves, the CPU: TRL's default bf16 needs a GPU); max_length, truncation and the loss masks are TRL's defaults. Before training,
every row of the conversational and prompt-completion configs is tokenized with the real
processor and must fit TRL's default max_length, so no row can be truncated inside an
image's tokens (``--fit-only``: that check alone, no training). Prints one JSON line of figures.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import load_dataset  # noqa: E402
from tiny_qwen_vl import build  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402
from trl.data_utils import prepare_multimodal_messages  # noqa: E402

out, work = sys.argv[1], Path(sys.argv[2])
conversational = load_dataset(out, "all")
texts = [p["text"] for split in conversational for row in conversational[split] for m in row["messages"]
         for p in m["content"] if p["type"] == "text"]
model, processor = build(texts)

default_max = SFTConfig(output_dir=str(work / "probe"), use_cpu=True).max_length
lengths = []
for row in conversational["train"]:
    messages = prepare_multimodal_messages(row["messages"], row["images"])
    ids = processor.apply_chat_template(messages, tokenize=True, return_dict=True)["input_ids"]
    lengths.append(len(ids[0]) if ids and isinstance(ids[0], list) else len(ids))
assert max(lengths) <= default_max, (max(lengths), default_max)

figures = {"default_max_length": default_max, "rows": len(lengths), "longest": max(lengths)}
for config, split in () if "--fit-only" in sys.argv else (("all", "train"), ("prompt_completion", "train")):
    ds = load_dataset(out, config, split=split)
    args = SFTConfig(output_dir=str(work / config), max_steps=3, per_device_train_batch_size=2,
                     report_to="none", save_strategy="no", logging_steps=1, use_cpu=True)
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=processor)
    result = trainer.train()
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    assert result.global_step == 3 and losses and all(math.isfinite(x) for x in losses), trainer.state.log_history
    figures[config] = {"steps": result.global_step, "loss": losses}
print(json.dumps(figures))
