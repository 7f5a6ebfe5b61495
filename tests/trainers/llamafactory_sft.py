"""LLaMA-Factory's SFT with its default settings trains a few steps on a guiforge LLaMA-Factory
export (run with the LLaMA-Factory venv's python, scripts/bootstrap-lf.sh):
``python llamafactory_sft.py EXPORT_DIR WORK_DIR``.

The tiny Qwen2-VL of tiny_qwen_vl.py (BPE trained on the export's text, the real Qwen2-VL image
processor with the hub limits) is saved to WORK_DIR/model, and LLaMA-Factory's own entry point
(``run_exp``, what ``llamafactory-cli train`` calls) trains it with stage sft and template
qwen2_vl on the export's SFT training datasets (dataset_info.json's entries that are neither a
ranking set nor a validation or test split). Only what a run needs is set (a few steps, a small
batch, no checkpoints or reports, the CPU); finetuning type (LoRA on every linear layer of the
language model, the vision tower frozen), cutoff length (2048) and the rest are LLaMA-Factory's
defaults. Prints one JSON line of figures: steps, their losses (finite), the images the model's
forward passes were given.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llamafactory.train.tuner import run_exp  # noqa: E402
from tiny_qwen_vl import CHAT_TEMPLATE, _image_only, build  # noqa: E402
from transformers import AutoProcessor, Qwen2VLConfig  # noqa: E402


class ImageOnlyProcessor(_image_only()):
    """tiny_qwen_vl's image-only Qwen2-VL processor, saved and loaded without a video processor:
    LLaMA-Factory loads the processor with ``AutoProcessor.from_pretrained``, which would load
    Qwen2VLVideoProcessor, and that needs torchvision (no CPU wheel here, see bootstrap-lf.sh)."""

    @classmethod
    def get_attributes(cls):
        return [name for name in super().get_attributes() if name != "video_processor"]


# LLaMA-Factory runs in this process: AutoProcessor finds the class by the name the save records
AutoProcessor.register(Qwen2VLConfig, ImageOnlyProcessor, exist_ok=True)

STEPS = 3
out, work = Path(sys.argv[1]), Path(sys.argv[2])
info = json.loads((out / "dataset_info.json").read_text())
# the training splits of SFT (the ranking sets are stage dpo's; validation and test are held out)
names = [name for name, entry in info.items() if not entry.get("ranking") and not name.endswith(("_validation", "_test"))]
assert names, f"no SFT dataset in {out / 'dataset_info.json'}"
rows = [row for name in names for row in json.loads((out / info[name]["file_name"]).read_text())]
model, processor = build(m["content"] for row in rows for m in row["messages"])
model_dir = work / "model"
model.save_pretrained(model_dir)
processor = ImageOnlyProcessor(image_processor=processor.image_processor, tokenizer=processor.tokenizer,
                               chat_template=CHAT_TEMPLATE)
processor.save_pretrained(model_dir)

images_seen = []  # per forward pass: the image grids LLaMA-Factory's collator handed the model
original_forward = type(model).forward


def counting_forward(self, *args, **kwargs):
    grid = kwargs.get("image_grid_thw")
    images_seen.append(0 if grid is None else int(grid.shape[0]))
    return original_forward(self, *args, **kwargs)


type(model).forward = counting_forward
run_exp({"stage": "sft", "do_train": True, "model_name_or_path": str(model_dir), "template": "qwen2_vl",
         "dataset": ",".join(names), "dataset_dir": str(out), "media_dir": str(out),
         "output_dir": str(work / "run"), "max_steps": STEPS, "per_device_train_batch_size": 2,
         "logging_steps": 1, "save_strategy": "no", "report_to": "none", "use_cpu": True,
         "overwrite_output_dir": True})
# LLaMA-Factory's own log of the run, one line a logging step
losses = [json.loads(line)["loss"] for line in (work / "run" / "trainer_log.jsonl").read_text().splitlines()
          if "loss" in json.loads(line)]
steps = len(images_seen)
assert steps == STEPS and len(losses) == STEPS and all(math.isfinite(x) for x in losses), (images_seen, losses)
print(json.dumps({"steps": steps, "loss": losses, "images_seen": sum(images_seen), "rows": len(rows),
                  "datasets": names}))
