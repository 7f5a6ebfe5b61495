"""The dataset card (README.md with YAML front matter) of an export: a config per domain
and one for all, the prompt-completion variant, the RL prompt set and the preference pairs, each with its
train/validation/test splits, features and row counts; how the data was made, what never
became a target, how to mask history, the context policy and image budget with token counts
per processor, the RL protocol, and which columns carry lineage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from guiforge.export.budget import CHARS_PER_TOKEN, PIXEL_CONVENTIONS, PROCESSORS, REFERENCE
from guiforge.export.select import SPLITS

LINEAGE = ("run_id", "persona_id", "world_id", "scenario", "world_builder", "world_prompt_hash", "skill_id",
           "skill_version", "task_id", "parent_task_id", "round", "task_author_model", "task_prompt_hash",
           "trajectory_id", "sample_index", "step_index", "teacher_model", "teacher_prompt_hash",
           "step_prompt_hash", "judge", "judge_model", "judge_prompt_hash", "accept_policy", "relabeler_model",
           "relabel_prompt_hash", "relabel_mode", "image_sha256")


def _config(folder: Path, name: str, pattern: str, features, counts: dict[str, int],
            default: bool = False) -> tuple[dict, dict]:
    """A card config whose ``pattern`` has a ``{split}`` for each split with rows."""
    files, splits, total = [], [], 0
    for split, n in counts.items():
        path = pattern.format(split=split)
        size = sum(p.stat().st_size for p in folder.glob(path))
        files.append({"split": split, "path": path})
        splits.append({"name": split, "num_bytes": size, "num_examples": n})
        total += size
    config: dict[str, Any] = {"config_name": name, "data_files": files}
    if default:
        config["default"] = True
    info = {"config_name": name, "features": features._to_yaml_list(), "splits": splits, "download_size": total}
    return config, info


def _in_order(counts: Counter) -> dict[str, int]:
    return {s: counts[s] for s in SPLITS if counts.get(s)}


def _tokens_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no screenshots)"
    names = [p.name for p in PROCESSORS]
    head = "| frame (exported) | screenshots | " + " | ".join(names) + " |\n|" + " --- |" * (len(names) + 2)
    return head + "\n" + "\n".join(f"| {r['size']} | {r['screenshots']} | " + " | ".join(str(r[n]) for n in names)
                                   + " |" for r in rows)


def write_card(folder: Path, *, run_id: str, acceptance: str, coords: str, sft_splits: Counter, rl_splits: Counter,
               text_splits: Counter,
               sft_features, pc_features, rl_features, n_rl: int, exclusions: Counter, figures: dict,
               target=None, policy=None, options=None, token_table: list | None = None,
               extra: list | None = None, dpo_splits: Counter | None = None, dpo_features=None) -> None:
    """``extra``: more configs, each (name, file pattern with ``{split}``, features, rows per split)."""
    configs, infos = [], []
    n_sft = sum(sft_splits.values())
    sft_domains = Counter()
    for (domain, _), n in sft_splits.items():
        sft_domains[domain] += n
    if n_sft:
        every = Counter()
        for (_, split), n in sft_splits.items():
            every[split] += n
        made = [_config(folder, "all", "sft/*/{split}-*.parquet", sft_features, _in_order(every), default=True)]
        for d in sorted(sft_domains):
            mine = Counter({split: n for (domain, split), n in sft_splits.items() if domain == d})
            made.append(_config(folder, d, f"sft/{d}/{{split}}-*.parquet", sft_features, _in_order(mine)))
        made.append(_config(folder, "prompt_completion", "sft_prompt_completion/*/{split}-*.parquet", pc_features,
                            _in_order(every)))
        for c in made:
            configs.append(c[0])
            infos.append(c[1])
    if sum(text_splits.values()):
        c = _config(folder, "text_only", "sft_text/{split}-*.parquet", sft_features, _in_order(text_splits),
                    default=not n_sft)
        configs.append(c[0])
        infos.append(c[1])
    if n_rl:
        c = _config(folder, "rl", "rl/{split}-*.parquet", rl_features, _in_order(rl_splits),
                    default=not n_sft and not sum(text_splits.values()))
        configs.append(c[0])
        infos.append(c[1])
    n_dpo = sum((dpo_splits or Counter()).values())
    if n_dpo:
        c = _config(folder, "dpo", "dpo/{split}-*.parquet", dpo_features, _in_order(dpo_splits),
                    default=not configs)
        configs.append(c[0])
        infos.append(c[1])
    for name, pattern, features, counts in extra or []:
        c = _config(folder, name, pattern, features, _in_order(counts))
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
    per_task = getattr(options, "per_task", 1)
    max_length = getattr(options, "max_length", None)
    protocol = getattr(options, "rl_protocol", "tools")
    if policy is None:
        context = ("as recorded: the harness's own context (up to 10 past screenshots with the replies to them; "
                   "earlier steps as one line each)")
    elif policy.kind == "summary":
        context = (f"rebuilt: the last {policy.images or 3} screenshot(s), the current one included, each earlier "
                   "step as one line under 'Earlier steps'")
    else:
        context = f"rebuilt with context policy `{policy.model_dump()}`"
    if max_length and figures.get("max_length"):
        fitted = (f"Every row is fitted to **{max_length} tokens**, TRL's `SFTConfig.max_length` default: "
                  f"text estimated as a token per digit and {CHARS_PER_TOKEN:g} bytes a token for the rest (an "
                  "overestimate for BPE tokenizers), "
                  f"screenshots counted with {REFERENCE.name}'s rule; the oldest 'Earlier steps' lines go first, then "
                  "the screenshot is scaled down (same aspect) to what is left, never below "
                  f"{getattr(options, 'min_image_tokens', 256)} tokens; a row that still does not fit is left out "
                  f"(exclusion gate `budget`). Estimated tokens per row: max {figures.get('est_tokens_max')}, mean "
                  f"{figures.get('est_tokens_mean')} (column `est_tokens`). So `SFTTrainer` with its defaults never "
                  "truncates inside an image's tokens (\"Image features and image tokens do not match\").")
    else:
        why = (f"the coordinates are `{coords}`, points in the screenshot's own pixels, so its size may not change"
               if coords in PIXEL_CONVENTIONS and max_length else "`max_length: null`")
        fitted = (f"Rows are **not fitted** to a max_length ({why}): set TRL's `SFTConfig(max_length=None)` or one "
                  "above the longest row the table below gives, or truncation cuts an image's tokens.")
    if protocol == "tools":
        rl_how = ("the system prompt asks for one `act` tool call a turn (`act(action=...)`, the action written as "
                  "above): train with TRL's multi-turn GRPO, `GRPOTrainer(..., environment_factory=GuiforgeEnv)`, "
                  "whose `act` tool steps the real environment and whose `get_reward()` is the verifier's verdict")
    else:
        rl_how = ("the system prompt asks for every action in one reply, one JSON object a line (the policy sees s0 "
                  "only): train with single-turn GRPO, `GRPOTrainer(..., reward_funcs=[TaskReward()])`, which replays "
                  "the reply's actions in the real environment and returns the verifier's verdict")
    split_lines = "\n".join(f"| {name} | {v['sft_rows']} | {v['rl_rows']} | {v['tasks']} | {v['worlds']} |"
                            for name, v in (figures.get("splits") or {}).items()) or "| train | 0 | 0 | 0 | 0 |"
    body = f"""
# guiforge export of run `{run_id}`

Computer-use agent training data made by guiforge: personas -> worlds -> skill-card tasks with
verifiers -> gates -> teacher rollouts in real environments (Chromium, LibreOffice, a sandboxed
terminal, a tool registry) -> judge -> RL selection -> relabel -> this export.

- **SFT rows**: one per step of {'the best' if per_task == 1 else f'the {per_task} best' if per_task else 'every'}
  accepted trajectory of each task ({how}: success, then rubric score, then fewest teacher
  mistakes, then fewest steps); {n_sft} rows from {figures.get('sft_tasks', 'n/a')} tasks ({domains}).
  `messages` is what the policy is trained to see at that step ({context}): the domain's system
  prompt with its action set, user turns with `{{"type": "image"}}` placeholders (one per entry of
  `images`, in order), and the assistant turn in {reply}.
  Where a consistent relabel exists its thought is the target; steps whose relabel failed the
  thought/action consistency check are left out.
- **Never a target**: the teacher's deliberate mistakes (they stay in the history of the steps that
  notice and correct them), a task's other samples, and duplicates: a row whose prompt, images and
  target another row has, a repeat of the same action on the same frame, a step the relabel stage
  marked a repeat of a query at the same spot. Duplicate (screenshot, target) rows:
  {figures.get('duplicate_image_target_rows', 'n/a')}.
- **Every row of the image configs (`all`, each domain's, `prompt_completion`) has a screenshot.**
  A desktop terminal step's screenshot is its terminal window (prompt, commands, output, cursor).
  Tools steps have none (their observation is text, shown in the user turn): they are the `text_only` config ({sum(text_splits.values())} rows), for a text or mixed model.
- **History**: past assistant turns (when the context shows any) are written like the targets: the
  relabelled thought and action, or the action alone where a step has no consistent relabel, never
  the teacher's raw reply. To train on the last turn only: in TRL use the `prompt_completion`
  config (loss on the completion only: `completion_only_loss` defaults to it for prompt-completion
  data); with the conversational `all` config TRL trains on the whole sequence, or on every
  assistant turn with `assistant_only_loss=True` (a chat template with generation markers). In
  LLaMA-Factory set `mask_history: true` (its default, false, trains on every assistant turn).
- **Coordinates**: `{coords}` (converted from the lake's 0-999 grid to within one pixel).
- **prompt_completion**: the same rows as `prompt` (all but the last message) and `completion`.
- **rl**: {n_rl} GRPO prompts, one per task of the RL pool (success rate near 0.5 under the teacher);
  {rl_how} (`rl_protocol` column: `{protocol}`). `prompt` shows s0's screenshot; `task_id`, `domain`,
  `success_rate`, `task_json` (setup, rubric, reference), `world_json`, and the run's environment
  kinds and check plugins (`envs_json`, `checks_json`: the reward replays and scores as the run did)
  ride along as columns, which TRL hands to reward functions and to `GuiforgeEnv.reset`. Rewards are success as 1/0, or
  the rubric's weighted score with `reward="score"`; a fault of the environment or verifier is
  `None`, never 0. The reward side needs guiforge with its `rl` extra (`pip install
  "guiforge[rl]"`) and Chromium / LibreOffice on the trainer's machine.

- **Quality tiers** (`quality_tier` column; `guiforge.judge.tiers`): `gold` (accepted, near the
  task's shortest accepted sample, the judge sure, no parse retries), `silver` (accepted),
  `partial` (not accepted, but its final progress reached the threshold; steps that undid
  progress are left out). Each tier is a config of its own (`sft_gold`, `sft_silver`,
  `sft_partial`); the default configs above hold {", ".join(getattr(options, "sft_tiers", ("gold", "silver")))}.
- **rl_steps**: every step of the RL pool's valid samples as `prompt` / `completion` with its
  dense `reward` (the change of progress: the weighted share of the rubric's required criteria
  met, scored after every step), `progress`, `progress_before`, `undoes_progress` and `done`.
  **prm** (with `--prm`): the same rows for every valid trajectory, for a process reward model.
- **dpo**: {n_dpo} step-level preference pairs in TRL's conversational preference format (`prompt`,
  `chosen`, `rejected`, `images`: `DPOTrainer` reads it as is). Where a failed and a successful
  sample of one task share a prefix and then depart, `prompt` is what the failed sample saw at that
  step (built like the SFT rows), `chosen` the successful sample's action and `rejected` the failed
  one's, each with the thought its teacher wrote beside it; `failure_mode` and `reason` say how they
  departed, `chosen_trajectory_id` / `trajectory_id` (the failed sample) lead back to the lake.

## Splits

By world: every task of a world, and so every row of a task, is in one split only.

| split | SFT rows | RL prompts | tasks | worlds |
| --- | --- | --- | --- | --- |
{split_lines}

## Context and image budget

{fitted}

Tokens one screenshot costs, per processor (published patch rules: `guiforge.export.budget`),
for the frame sizes in this export:

{_tokens_table(token_table or [])}

Images are stored once per Parquet file (dictionary-encoded), not once per row that shows them:
{figures.get('sft_bytes_per_step', 'n/a')} bytes per SFT step here against
{figures.get('raw_bytes_per_step', 'n/a')} in the raw lake (steps + images of the run).

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", "prompt_completion")   # or "all", "web", "rl"; splits train/validation/test
row = ds["train"][0]; row["prompt"], row["images"][0].size
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
