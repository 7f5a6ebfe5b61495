"""The dataset card (README.md with YAML front matter) of an export: a config per domain
and one for all, the prompt-completion variant and the RL prompt set, their features and
row counts, how the data was made and which columns carry lineage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

LINEAGE = ("run_id", "persona_id", "world_id", "scenario", "world_builder", "world_prompt_hash", "skill_id",
           "skill_version", "task_id", "parent_task_id", "round", "task_author_model", "task_prompt_hash",
           "trajectory_id", "sample_index", "step_index", "teacher_model", "teacher_prompt_hash",
           "step_prompt_hash", "judge", "judge_model", "judge_prompt_hash", "accept_policy", "relabeler_model",
           "relabel_prompt_hash", "relabel_mode", "image_sha256")


def _config(folder: Path, name: str, path: str, features, n: int, default: bool = False) -> tuple[dict, dict]:
    config: dict[str, Any] = {"config_name": name, "data_files": [{"split": "train", "path": path}]}
    if default:
        config["default"] = True
    size = sum(p.stat().st_size for p in folder.glob(path))
    info = {"config_name": name, "features": features._to_yaml_list(),
            "splits": [{"name": "train", "num_bytes": size, "num_examples": n}], "download_size": size}
    return config, info


def write_card(folder: Path, *, run_id: str, acceptance: str, coords: str, context: str, sft_domains: Counter,
               sft_features, pc_features, rl_features, n_rl: int, exclusions: Counter, figures: dict,
               target=None) -> None:
    configs, infos = [], []
    n_sft = sum(sft_domains.values())
    if n_sft:
        for c in (_config(folder, "all", "sft/*/*.parquet", sft_features, n_sft, default=True),
                  *(_config(folder, d, f"sft/{d}/*.parquet", sft_features, n) for d, n in sorted(sft_domains.items())),
                  _config(folder, "prompt_completion", "sft_prompt_completion/*/*.parquet", pc_features, n_sft)):
            configs.append(c[0])
            infos.append(c[1])
    if n_rl:
        c = _config(folder, "rl", "rl/*.parquet", rl_features, n_rl, default=not n_sft)
        configs.append(c[0])
        infos.append(c[1])
    front = {"pretty_name": f"guiforge {run_id}", "tags": ["computer-use", "gui-agent", "guiforge", "synthetic"],
             "task_categories": ["image-text-to-text"], "configs": configs, "dataset_info": infos}
    how = ("accepted by the run's judgments (`judgments.accepted`)" if acceptance == "judgments" else
           "**no judgments in this run: trajectories whose code verifier succeeded** (no judge looked at them)")
    domains = ", ".join(f"{d} {n}" for d, n in sorted(sft_domains.items())) or "none"
    fmt = getattr(target, "action_format", "guiforge")
    reply = ('the harness\'s reply format `{"thought": ..., "action": {...}}`' if fmt == "guiforge" else
             f"the `{fmt}` action format (the system prompt is that format's own, past replies are re-encoded in it, "
             "and `guiforge.rl` reads completions back with the same codec)")
    excluded = "\n".join(f"| {reason} | {n} |" for reason, n in exclusions.most_common(20)) or "| (none) | 0 |"
    body = f"""
# guiforge export of run `{run_id}`

Computer-use agent training data made by guiforge: personas -> worlds -> skill-card tasks with
verifiers -> gates -> teacher rollouts in real environments (Chromium, LibreOffice, a sandboxed
terminal, a tool registry) -> judge -> RL selection -> relabel -> this export.

- **SFT rows**: one per step of a trajectory {how}; {n_sft} rows ({domains}).
  `messages` is exactly what the policy saw at that step ({context}): the domain's system prompt with
  its action set, user turns with `{{"type": "image"}}` placeholders (one per entry of `images`, in order),
  and the assistant turn in {reply}.
  Where a consistent relabel exists its thought is the target; steps whose relabel failed the
  thought/action consistency check are left out.
- **Coordinates**: `{coords}` (converted from the lake's 0-999 grid to within one pixel).
- **prompt_completion**: the same rows as `prompt` (all but the last message) and `completion`.
- **rl**: {n_rl} GRPO prompts, one per task of the RL pool (success rate near 0.5 under the teacher):
  `prompt` shows s0's screenshot; `task_id`, `domain`, `success_rate`, `task_json` (setup, rubric,
  reference) and `world_json` ride along as columns, which TRL hands to reward functions.
  `guiforge.rl.TaskReward` resets the task's environment, replays a completion's actions and
  returns the verifier's verdict (success as 1/0, or `reward="score"` for the rubric's weighted
  score); `guiforge.rl.GuiforgeEnv` is an `environment_factory` for TRL's multi-turn GRPO.

Images are stored once per Parquet file (dictionary-encoded), not once per row that shows them:
{figures.get('sft_bytes_per_step', 'n/a')} bytes per SFT step here against
{figures.get('raw_bytes_per_step', 'n/a')} in the raw lake (steps + images of the run).

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", "all", split="train")   # or "web", "rl", ...
row = ds[0]; row["messages"], row["images"][0].size
```

## Lineage columns

Every row leads back to where it came from: {", ".join(f"`{c}`" for c in LINEAGE)}.
Join them with the run's lake tables (personas, worlds, tasks, trajectories, steps, judgments,
relabels) in the DuckDB catalog.

## Left out (exclusions, by reason)

| reason | rows |
| --- | --- |
{excluded}
"""
    text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + body
    (folder / "README.md").write_text(text)
