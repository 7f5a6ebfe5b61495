"""TRL's own DPO data path over an export's preference pairs (run with the trainer venv's
python): ``python trl_dpo.py EXPORT_DIR``.

Every row of the ``dpo`` config must be conversational preference data to TRL's data utilities,
and go through ``DataCollatorForVisionPreference`` (what ``DPOTrainer`` batches vision data
with: ``prepare_multimodal_messages``, ``apply_chat_template``, the real Qwen2-VL processor over
the screenshots) with prompt + chosen and prompt + rejected inside DPOConfig's default
max_length, so nothing is cut. Prints one JSON line of figures.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import load_dataset  # noqa: E402
from tiny_qwen_vl import build  # noqa: E402
from trl import DPOConfig  # noqa: E402
from trl.data_utils import is_conversational  # noqa: E402
from trl.trainer.dpo_trainer import DataCollatorForVisionPreference  # noqa: E402

out = sys.argv[1]
pairs = load_dataset(out, "dpo")
rows = [row for split in pairs for row in pairs[split]]
assert rows, "no preference pairs in the export"
texts = [p["text"] for row in rows for column in ("prompt", "chosen", "rejected") for m in row[column]
         for p in m["content"] if p["type"] == "text"]
_, processor = build(texts)
default_max = DPOConfig(output_dir="/tmp/unused", use_cpu=True).max_length
collate = DataCollatorForVisionPreference(processor=processor)
longest = 0
for row in rows:
    assert is_conversational(row), row["pair_id"]
    assert [m["role"] for m in row["chosen"]] == ["assistant"] == [m["role"] for m in row["rejected"]]
    assert row["chosen"] != row["rejected"], row["pair_id"]
    batch = collate([dict(row)])  # chosen and rejected, each after the prompt
    assert batch["pixel_values"].shape[0] > 0 and batch["input_ids"].shape[0] == 2
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    longest = max(longest, *lengths)
    assert max(lengths) <= default_max, (row["pair_id"], lengths, default_max)
print(json.dumps({"pairs": len(rows), "longest": longest, "default_max_length": default_max}))
