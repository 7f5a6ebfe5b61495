"""LLaMA-Factory's own dataset parser and sharegpt converter over an export's pairwise datasets
(run with the trainer venv's python): ``python llamafactory_pairwise.py EXPORT_DIR``.

Each ``ranking: true`` entry of the export's dataset_info.json is read by LLaMA-Factory's
``get_dataset_list``, its JSON loaded as LLaMA-Factory's loader does (``datasets`` json) and
aligned by ``align_dataset`` (its ``SharegptDatasetConverter``): a row it finds broken comes out
with an empty prompt and response. Every row must come out whole: the prompt ending with the
user's turn, a chosen and a rejected assistant turn, as many ``<image>`` tokens as images, each
image a file in the export. Prints one JSON line of figures.

The trainer venv holds llamafactory without its dependencies (scripts/bootstrap-train.sh):
its package ``__init__`` files import the whole training stack (torchaudio, which has no CPU
wheel here), so the three packages are entered directly and only the data modules import.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

root = Path(importlib.util.find_spec("llamafactory").origin).parent
for name in ("llamafactory", "llamafactory.data", "llamafactory.extras", "llamafactory.hparams"):
    package = types.ModuleType(name)
    package.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
    sys.modules[name] = package

from datasets import load_dataset  # noqa: E402
from llamafactory.data.converter import align_dataset  # noqa: E402
from llamafactory.data.parser import get_dataset_list  # noqa: E402
from llamafactory.hparams.data_args import DataArguments  # noqa: E402
from transformers import Seq2SeqTrainingArguments  # noqa: E402

out = sys.argv[1]
info = json.loads((Path(out) / "dataset_info.json").read_text())
names = [name for name, entry in info.items() if entry.get("ranking")]
assert names, "no pairwise dataset in dataset_info.json"
data_args = DataArguments(dataset_dir=out, media_dir=out, overwrite_cache=True)
training_args = Seq2SeqTrainingArguments(output_dir="/tmp/unused", use_cpu=True, report_to=[])
n = 0
for attr in get_dataset_list(names, out):
    assert attr.ranking and attr.formatting == "sharegpt", attr
    dataset = load_dataset("json", data_files=str(Path(out) / attr.dataset_name), split="train")
    for row in align_dataset(dataset, attr, data_args, training_args):
        prompt, response = row["_prompt"], row["_response"]
        assert prompt and len(prompt) % 2 == 1 and prompt[-1]["role"] == "user", prompt
        assert [r["role"] for r in response] == ["assistant", "assistant"] and response[0] != response[1]
        images = row["_images"] or []
        assert sum(m["content"].count("<image>") for m in prompt) == len(images)
        assert all(Path(p).is_file() for p in images), images
        n += 1
print(json.dumps({"pairwise_rows": n, "datasets": names}))
