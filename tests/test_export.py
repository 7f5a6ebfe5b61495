"""Exports from a real lake (scripted teacher in real Chromium), read back by the real
consumers: `datasets` decodes every export's images, TRL's prepare_multimodal_messages takes
every row and its DPO collator every preference pair (in the trainer venv), LLaMA-Factory's
placeholder rule holds and its own converter reads the pairwise rows, and the RL reward and
environment score replays in a real environment."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset

from guiforge.envs.actions import to_pixels
from guiforge.errors import GuiforgeError
from guiforge.export import ExportOptions, export_run
from guiforge.export.prompts import rebuild, recorded
from guiforge.export.select import best_of_n
from guiforge.export.source import load_source
from guiforge.export.target import Target, check_target
from guiforge.failures import valid_sample
from guiforge.harness.context import ContextPolicy
from guiforge.harness.formats import COORD_KINDS, ParseError, get_format
from guiforge.harness.parser import parse_reply
from guiforge.lake import Lake, ShardCommit, commit_shard
from guiforge.orchestration.compile import build_pipeline
from guiforge.orchestration.runner import run_pipeline

ROOT = Path(__file__).resolve().parents[1]
CARD = "mail.reply_invoice_total"


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    """A real run (web + mobile), plus an RL pool and relabels written the way the
    rl_select and relabel stages write them (their tables' declared columns)."""
    root = tmp_path_factory.mktemp("export") / "lake"
    cfg = {"name": "exp", "seed": 4, "workers": 2, "models": {"world_builder": {"provider": "offline"},
                                                           "teacher": {"provider": "offline"}},
           "stages": {"personas": {"count": 8, "shard_size": 4}, "worlds": {}, "skills": {"include": [CARD]},
                      "task_candidates": {"per_world": 2}, "task_gates": {"concurrency": 2},
                      # two tiers: one task sampled 4 times (depth), the other once (breadth)
                      # the teacher types wrong values and never fixes them, so the depth task has mixed outcomes and pairs
                      "rollouts": {"samples": 1, "depth": {"tasks": 1, "samples": 4}, "tasks": 2,
                                   "tasks_per_shard": 2, "concurrency": 2, "phone_screenshots": "css",
                                   "noise": {"wrong_value": 0.5, "recover": 0.0}},
                      "preference_pairs": {},
                      "export": {"formats": ["hf", "llamafactory"], "coords": "grid1000"}}}
    run_pipeline(build_pipeline(cfg, "x.yaml", lake=str(root)), executor="local")
    store = Lake(root)
    run = store.runs("trajectories")[0]
    tasks = {t["task_id"]: t for t in store.read_table("tasks").to_pylist()}
    trajectories = store.read_table("trajectories").to_pylist()
    pool = []
    for rank, task_id in enumerate(sorted({t["task_id"] for t in trajectories})):
        mine = [t for t in trajectories if t["task_id"] == task_id]
        wins = sum(bool(t["success"]) for t in mine)
        task = tasks[task_id]
        pool.append({"task_id": task_id, "domain": task["domain"], "skill_id": task["skill_id"],
                     "world_id": task["world_id"], "variant": task["variant"], "apps": task["apps"],
                     "instruction": task["instruction"], "n_samples": len(mine), "n_valid": len(mine),
                     "n_success": wins, "success_rate": wins / len(mine), "selected_reason": "test pool",
                     "rank": rank, "round": 0, "task_json": json.dumps({k: v for k, v in task.items() if k != "run_id"})})
    first_task = next(t for t in trajectories if t["success"])["task_id"]
    # the sample best-of-N exports for that task (success, score, mistakes, steps, sample)
    winner = best_of_n([t for t in trajectories if t["task_id"] == first_task and t["success"]], 1, lambda *_: None)[0]
    steps = sorted((s for s in store.read_table("steps").to_pylist() if s["trajectory_id"] == winner["trajectory_id"]),
                   key=lambda s: s["step_index"])
    relabels = [{"trajectory_id": s["trajectory_id"], "step_index": s["step_index"],
                 "thought": f"Relabeled thought {s['step_index']}.", "original_thought": s["thought"],
                 "consistent": s["step_index"] != 1, "failed_check": None if s["step_index"] != 1 else "element",
                 "attempts": 1, "mode": "reasoning", "assistant_text": None, "relabeler_model": "offline:relabeler",
                 "prompt_hash": "rlb0123"} for s in steps]
    commit_shard(store, ShardCommit("rl_select", run, "testpool", "rl_select"), {"rl_tasks": pool})
    commit_shard(store, ShardCommit("relabel", run, "testrelabel", "relabel"), {"relabels": relabels})
    store.test_winner = winner  # type: ignore[attr-defined]
    return store


@pytest.fixture(scope="module")
def hf_export(lake, tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "ds"
    return out, export_run(lake, out, fmt="hf")


def test_export_stage_in_the_pipeline(lake):
    """The pipeline's export stage (before the pool and relabels were added) wrote its
    folders beside the lake and one exports row per dataset."""
    run = lake.runs("trajectories")[0]
    exports = lake.read_table("exports").to_pylist()
    staged = [e for e in exports if e["path"].startswith(str(Path(lake.root).parent / "exports" / run))]
    assert {(e["kind"], e["format"]) for e in staged} >= {("sft", "hf"), ("rl", "hf"), ("sft", "llamafactory")}
    sft = next(e for e in staged if e["kind"] == "sft" and e["format"] == "hf")
    assert sft["n_rows"] > 0 and sft["coords"] == "grid1000" and sft["source_run"] == run
    assert len(load_dataset(sft["path"], "all", split="train")) == sft["n_rows"]
    assert (Path(lake.root).parent / "exports" / run / "llamafactory" / "dataset_info.json").is_file()


def test_coordinates_within_one_pixel():
    for width, height in [(1280, 800), (412, 839), (1920, 1080), (1082, 2000), (7, 5)]:
        for g in range(0, 1000, 37):
            want = to_pixels(g, 999 - g, width, height)
            for convention in COORD_KINDS:
                target = Target("guiforge", convention)
                system = target.coord_system((width, height))
                reply = target.encode("", {"type": "click", "x": g, "y": 999 - g}, (width, height), "web")
                encoded = json.loads(reply)["action"]
                px = encoded["x"] * (width - 1) / system.extent(0)
                py = encoded["y"] * (height - 1) / system.extent(1)
                # half a unit of the convention (a 1000-grid unit is 1.9 px of a 1920 frame), plus
                # the half pixel the environment's own point is rounded by
                unit = max((width - 1) / system.extent(0), (height - 1) / system.extent(1)) if system.integral else 0
                slack = max(system.tolerance_px(), unit / 2 + 0.5)
                assert abs(px - want[0]) <= slack and abs(py - want[1]) <= slack, (convention, width, g, encoded)
                back = target.decode(reply, "web", None, (width, height))[1]  # what a replay steps
                landed = to_pixels(back.x, back.y, width, height)  # where the environment acts
                step_x, step_y = max(1, -(-width // 999)), max(1, -(-height // 999))  # one grid unit in px
                assert abs(landed[0] - want[0]) <= step_x + slack and abs(landed[1] - want[1]) <= step_y + slack
                if convention in ("grid999", "pixels") and min(width, height) > 999:  # pixels finer than the grid
                    assert (back.x, back.y) == (g, 999 - g)
    with pytest.raises(ParseError, match="outside the pixels range"):
        Target("guiforge", "pixels").decode('{"action": {"type": "click", "x": 1300, "y": 10}}', "web", None,
                                            (1280, 800))


def test_hf_export_loads_with_datasets(lake, hf_export):
    out, result = hf_export
    assert result.acceptance == "verifier" and result.n_sft > 0 and result.n_rl == 2
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    names = {c["config_name"] for c in front["configs"]}
    ds = load_dataset(str(out), "all", split="train")  # the card's default config, read as a training job would
    assert {"all", "prompt_completion", "rl", *set(ds["domain"])} <= names and "verifier succeeded" in card
    assert len(ds) == result.n_sft
    trajectories = lake.read_table("trajectories").to_pylist()
    wins = {t["trajectory_id"] for t in trajectories if t["success"]}
    assert set(ds["trajectory_id"]) <= wins  # only verifier-accepted trajectories
    # best of N: one trajectory per task that has a win, the others left out with the reason
    assert len(set(ds["trajectory_id"])) == len(set(ds["task_id"])) == len({t["task_id"] for t in trajectories
                                                                           if t["success"]})
    reasons = {e["subject_id"]: e["reason"] for e in result.exclusions}
    assert all(reasons[t].startswith("best of ") for t in wins - set(ds["trajectory_id"]))
    for row in ds:
        placeholders = sum(p["type"] == "image" for m in row["messages"] for p in m["content"])
        assert placeholders == len(row["images"]) >= 1 and row["images"][-1].size == (row["image_width"],
                                                                                      row["image_height"])
        assert row["messages"][0]["role"] == "system" and row["messages"][-1]["role"] == "assistant"
        for column in ("persona_id", "world_id", "skill_id", "task_id", "trajectory_id", "teacher_model"):
            assert row[column], column
    # the target is the harness's reply format with the step's own action
    steps = {(s["trajectory_id"], s["step_index"]): s for s in lake.read_table("steps").to_pylist()}
    row = ds[3]
    _, action = parse_reply(row["messages"][-1]["content"][0]["text"], row["domain"], row["variant"])
    assert action.model_dump() == steps[(row["trajectory_id"], row["step_index"])]["action"]
    domain = sorted(set(ds["domain"]))[0]  # one domain's folder, read as plain Parquet
    one = load_dataset("parquet", data_files=str(out / "sft" / domain / "*.parquet"), split="train")
    assert set(one["domain"]) == {domain} and one[0]["images"][0].mode in ("RGB", "RGBA")
    pc = load_dataset(str(out), "prompt_completion", split="train")
    assert len(pc) == len(ds) and pc[0]["completion"][0]["role"] == "assistant"
    rl = load_dataset(str(out), "rl", split="train")
    assert sorted(rl["task_id"]) == sorted(r["task_id"] for r in lake.read_table("rl_tasks").to_pylist())
    assert all(0 <= r["success_rate"] <= 1 and len(r["images"]) == 1 and r["world_json"] for r in rl)


def _rows(out: Path, config: str) -> list[dict]:
    """Every split of a config of the export at ``out``, read by `datasets` from its card."""
    return [r for split in load_dataset(str(out), config).values() for r in split]


def test_tier_configs_step_rewards_and_prm_rows_load_with_datasets(lake, tmp_path):
    """A config per quality tier (best of N: one accepted sample per task, gold first), the RL
    pool's steps with dense rewards, and process-reward rows for every valid trajectory."""
    out = tmp_path / "tiers"
    result = export_run(lake, out, fmt="hf", options=ExportOptions(prm=True, max_length=None))
    names = {c["config_name"] for c in yaml.safe_load((out / "README.md").read_text().split("---\n")[1])["configs"]}
    trajectories = {t["trajectory_id"]: t for t in lake.read_table("trajectories").to_pylist()}
    tiers = result.figures["tier_rows"]
    assert tiers.get("gold") and {f"sft_{t}" for t in tiers} <= names
    chosen: dict[str, set] = {}
    for tier, n in tiers.items():
        rows = _rows(out, f"sft_{tier}")
        assert len(rows) == n and {r["quality_tier"] for r in rows} == {tier}
        assert all(len(r["images"]) >= 1 for r in rows)
        chosen[tier] = {r["trajectory_id"] for r in rows}
    accepted = chosen.get("gold", set()) | chosen.get("silver", set())
    default = _rows(out, "all")
    assert {r["trajectory_id"] for r in default} == accepted and len(default) == tiers["gold"] + tiers.get("silver", 0)
    assert len({trajectories[t]["task_id"] for t in accepted}) == len(accepted)  # best of N: one per task
    for t in chosen["gold"]:  # gold: no longer than 1.25 times the task's shortest success
        task = trajectories[t]["task_id"]
        shortest = min(x["n_steps"] for x in trajectories.values() if x["task_id"] == task and x["success"])
        assert trajectories[t]["n_steps"] <= 1.25 * shortest

    pool = {r["task_id"] for r in lake.read_table("rl_tasks").to_pylist()}
    steps = _rows(out, "rl_steps")
    assert steps and {r["task_id"] for r in steps} == pool and {"rl_steps", "prm"} <= names
    by_trajectory: dict[str, list[dict]] = {}
    for r in steps:
        by_trajectory.setdefault(r["trajectory_id"], []).append(r)
    for tid, mine in by_trajectory.items():
        mine.sort(key=lambda r: r["step_index"])
        assert sum(r["reward"] for r in mine) == pytest.approx(mine[-1]["progress"] - mine[0]["progress_before"])
        assert mine[-1]["done"] and not any(r["done"] for r in mine[:-1])
        if trajectories[tid]["success"]:
            assert mine[-1]["progress"] == 1.0
        assert mine[0]["completion"][0]["role"] == "assistant" and len(mine[0]["images"]) >= 1
    prm = _rows(out, "prm")
    assert {r["trajectory_id"] for r in prm} == {t for t, x in trajectories.items() if x["success"] is not None}
    assert len(prm) == result.figures["prm_rows"] >= len(steps)


def test_images_are_stored_once_per_file(lake, tmp_path):
    """Rows with the recorded context show their trajectory's past frames again and again."""
    out = tmp_path / "recorded"
    result = export_run(lake, out, fmt="hf", context="recorded", options=ExportOptions(max_length=None))
    import pyarrow.parquet as pq

    files = sorted((out / "sft").rglob("*.parquet"))
    stored = sum(f.stat().st_size for f in files)
    shown = 0  # what the rows would cost with every frame they show embedded in full
    for f in files:
        for images in pq.read_table(f, columns=["images"]).column("images").to_pylist():
            shown += sum(len(image["bytes"]) for image in images)
    assert result.figures["sft_bytes_per_step"] and stored < 0.6 * shown, (stored, shown, result.figures)


def test_relabels_and_exclusions(lake, hf_export):
    out, result = hf_export
    winner = lake.test_winner["trajectory_id"]
    ds = load_dataset(str(out), "all", split="train").filter(lambda r: r["trajectory_id"] == winner)
    assert 1 not in ds["step_index"]  # its relabel failed the consistency check
    zero = next(r for r in ds if r["step_index"] == 0)
    assert json.loads(zero["messages"][-1]["content"][0]["text"])["thought"] == "Relabeled thought 0."
    assert zero["relabeler_model"] == "offline:relabeler" and zero["thought_source"] == "relabel"
    reasons = {e["subject_id"]: e["reason"] for e in result.exclusions}
    assert reasons[f"{winner}#1"].startswith("relabel inconsistent") and "element" in reasons[f"{winner}#1"]
    failed = [t for t in lake.read_table("trajectories").to_pylist() if not t["success"]]
    assert all("verifier did not succeed" in reasons[t["trajectory_id"]] for t in failed)


def test_pixel_coordinates_in_target_and_prompt(lake, tmp_path):
    result = export_run(lake, tmp_path / "px", fmt="hf", coords="pixels")
    ds = load_dataset(str(tmp_path / "px"), "all", split="train")
    steps = {(s["trajectory_id"], s["step_index"]): s for s in lake.read_table("steps").to_pylist()}
    checked = 0
    for row in ds:
        action = json.loads(row["messages"][-1]["content"][0]["text"])["action"]
        if "x" in action:
            pixels = json.loads(steps[(row["trajectory_id"], row["step_index"])]["action_pixels_json"])
            assert (action["x"], action["y"]) == (pixels["x"], pixels["y"])
            checked += 1
        system = row["messages"][0]["content"][0]["text"]
        assert f"pixels of the {row['image_width']}x{row['image_height']} screenshot" in system
        assert "0-999 grid" not in system
    assert checked and result.coords == "pixels"


def test_context_rebuild_matches_the_recorded_prompt(lake):
    src = load_source(lake)
    harness = json.loads(src.trajectories[0]["harness_json"])
    policy = ContextPolicy.model_validate(harness["context"])
    for steps in src.steps.values():
        for i, step in enumerate(steps):
            assert rebuild(steps, i, policy) == recorded(step)  # the harness's own builder, from the lake
    steps = max(src.steps.values(), key=len)
    last = rebuild(steps, len(steps) - 1, ContextPolicy(kind="summary"))
    shown = [p for m in last for p in m["parts"] if isinstance(p, dict)]
    assert len(shown) == min(3, len(steps)) and any("Earlier steps" in str(m["parts"][0]) for m in last)


def test_llamafactory_sharegpt(lake, tmp_path):
    out = tmp_path / "lf"
    result = export_run(lake, out, fmt="llamafactory", coords="grid1000")
    info = json.loads((out / "dataset_info.json").read_text())["guiforge_sft"]
    assert info["formatting"] == "sharegpt" and info["columns"] == {"messages": "messages", "images": "images"}
    rows = json.loads((out / info["file_name"]).read_text())
    assert len(rows) == result.n_sft > 0
    for row in rows:
        tokens = sum(m["content"].count("<image>") for m in row["messages"])
        assert tokens == len(row["images"]) and all((out / p).is_file() for p in row["images"])
        turns = row["messages"][1:] if row["messages"][0]["role"] == "system" else row["messages"]
        assert [m["role"] for m in turns] == ["user", "assistant"] * (len(turns) // 2)  # sharegpt's alternation
    every = json.loads((out / "dataset_info.json").read_text()).values()  # the SFT rows' and the pairs' frames
    frames = {p for e in every for r in json.loads((out / e["file_name"]).read_text()) for p in r.get("images", [])}
    assert len(list((out / "images").iterdir())) == len(frames)  # every frame once


def test_preference_pairs_for_every_mixed_task(lake):
    """Issue 26's done-when on a small lake: every task with mixed outcomes whose failed samples
    depart from a success after a shared prefix has pairs; every failed sample of a mixed task
    has a pair or an exclusion saying why; each pair's actions are its two steps' own."""
    trajectories = [t for t in lake.read_table("trajectories").to_pylist() if valid_sample(t)]
    outcomes: dict[str, set] = {}
    for t in trajectories:
        outcomes.setdefault(t["task_id"], set()).add(t["success"])
    mixed = {task for task, seen in outcomes.items() if seen == {True, False}}
    assert mixed, "the fixture's depth tier has no task with mixed outcomes"
    pairs = lake.read_table("preference_pairs").to_pylist()
    why = {e["subject_id"]: e["reason"] for e in lake.read_table("exclusions").to_pylist()
           if e["stage"] == "preference_pairs"}
    for task in mixed:
        paired = {p["rejected_trajectory_id"] for p in pairs if p["task_id"] == task}
        failed = [t["trajectory_id"] for t in trajectories if t["task_id"] == task and not t["success"]]
        assert all(t in paired or t in why for t in failed), (task, failed, paired, why)
        no_prefix = all(t in why and ("never departs" in why[t] or "no action of its own" in why[t]) for t in failed)
        assert paired or no_prefix, (task, why)
    steps = {(s["trajectory_id"], s["step_index"]): s for s in lake.read_table("steps").to_pylist()}
    for p in pairs:
        assert p["task_id"] in mixed and p["chosen_action"] != p["rejected_action"] and p["reason"]
        assert steps[(p["chosen_trajectory_id"], p["chosen_step_index"])]["action"] == p["chosen_action"]
        assert steps[(p["rejected_trajectory_id"], p["step_index"])]["action"] == p["rejected_action"]


def test_stats_prints_pairs_by_domain(lake):
    pairs = lake.read_table("preference_pairs").to_pylist()
    done = subprocess.run([sys.executable, "-m", "guiforge.cli", "stats", "--lake", lake.uri], capture_output=True,
                          text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = [" ".join(line.replace("│", " ").split()) for line in done.stdout.splitlines()]
    assert any(line.startswith("preference pairs by domain") for line in lines), done.stdout
    for domain in {p["domain"] for p in pairs}:
        mine = [p for p in pairs if p["domain"] == domain]
        assert any(line.startswith(f"{domain} ") and f" {len({p['task_id'] for p in mine})} {len(mine)} " in line
                   for line in lines), done.stdout


def test_dpo_rows_are_the_pairs_in_trls_format(lake, hf_export):
    """The hf export's `dpo` config: one row per pair, the failed sample's prompt at that step
    (its frame last), chosen and rejected replies that decode to the two actions."""
    out, result = hf_export
    pairs = {p["pair_id"]: p for p in lake.read_table("preference_pairs").to_pylist()}
    rows = [r for split in load_dataset(str(out), "dpo").values() for r in split]
    assert len(rows) == result.n_pairs == len(pairs) > 0
    target = Target()
    for row in rows:
        pair = pairs[row["pair_id"]]
        assert row["prompt"][-1]["role"] == "user" and row["image_sha256"][-1] == pair["image_sha256"]
        assert len(row["images"]) == sum(p["type"] == "image" for m in row["prompt"] for p in m["content"])
        frame = (row["image_width"], row["image_height"])
        for column in ("chosen", "rejected"):
            (message,) = row[column]
            action = target.decode(message["content"][0]["text"], row["domain"], None, frame)[1]
            want = pair[f"{column}_action"]
            assert action.type == want["type"] and action.text == want["text"], (column, action, want)


def test_llamafactory_pairwise(lake, tmp_path):
    """The preference pairs as LLaMA-Factory's pairwise sharegpt (``ranking: true``), read back
    by LLaMA-Factory's own dataset parser and converter in the trainer venv."""
    out = tmp_path / "lf"
    result = export_run(lake, out, fmt="llamafactory")
    info = json.loads((out / "dataset_info.json").read_text())
    ranked = {name: entry for name, entry in info.items() if entry.get("ranking")}
    assert ranked and all(e["columns"] == {"messages": "messages", "chosen": "chosen", "rejected": "rejected",
                                           "images": "images"} for e in ranked.values())
    assert sum(len(json.loads((out / e["file_name"]).read_text())) for e in ranked.values()) == result.n_pairs > 0
    proc = subprocess.run([str(_train_python()), str(ROOT / "tests" / "trainers" / "llamafactory_pairwise.py"),
                           str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["pairwise_rows"] == result.n_pairs


@pytest.mark.battery
@pytest.mark.timeout(1800)  # the first run makes .venv-lf (about 2 minutes)
def test_llamafactory_sft_trains_on_the_default_export_with_its_defaults(lake, tmp_path):
    """LLaMA-Factory itself (0.9.5, ``run_exp`` as ``llamafactory-cli train`` calls it) trains a
    tiny Qwen2-VL built in the test, saved to a folder, 3 steps of stage sft with template
    qwen2_vl on the default LLaMA-Factory export, its defaults otherwise (LoRA, cutoff_len 2048),
    in its own venv (tests/trainers/llamafactory_sft.py, scripts/bootstrap-lf.sh). Battery only:
    the venv takes about 2 minutes to make and the training about 15 s."""
    out = tmp_path / "lf"
    result = export_run(lake, out, fmt="llamafactory")
    assert result.n_sft > 0
    python = ROOT / ".venv-lf" / "bin" / "python"
    proc = subprocess.run([str(ROOT / "scripts" / "bootstrap-lf.sh")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and python.exists(), f"the LLaMA-Factory venv (.venv-lf): {proc.stderr[-300:]}"
    proc = subprocess.run([str(python), str(ROOT / "tests" / "trainers" / "llamafactory_sft.py"), str(out),
                           str(tmp_path / "work")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["steps"] == 3 and figures["rows"] > 0 and "guiforge_sft" in figures["datasets"]
    assert figures["images_seen"] >= 3  # every batch carries its rows' screenshots to the vision tower


def _train_python() -> Path:
    python = ROOT / ".venv-train" / "bin" / "python"
    proc = subprocess.run([str(ROOT / "scripts" / "bootstrap-train.sh")], capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0 or not python.exists():
        pytest.fail(f"the trainer venv (.venv-train) could not be made: {proc.stderr.strip()[-300:]}")
    return python


TRL_CHECK = r"""
import sys
from datasets import load_dataset
from trl.data_utils import is_conversational, prepare_multimodal_messages
out = sys.argv[1]
n = 0
for config, column in (("all", "messages"), ("prompt_completion", "prompt"), ("rl", "prompt")):
    ds = load_dataset(out, config, split="train")
    for row in ds:
        assert is_conversational(row), config
        messages = row[column] + (row["completion"] if config == "prompt_completion" else [])
        filled = prepare_multimodal_messages(messages, row["images"])
        images = [p["image"] for m in filled for p in m["content"] if p["type"] == "image"]
        assert len(images) == len(row["images"]) and all(i.size[0] > 0 for i in images)
        n += 1
print("checked", n)
# the environment's tools as TRL renders them for the chat template (transformers' schema)
import inspect
from transformers.utils import get_json_schema
from guiforge.rl import GuiforgeEnv
tools = [f for name, f in inspect.getmembers(GuiforgeEnv, predicate=inspect.isfunction)
         if name not in ("reset", "get_reward") and not name.startswith("_")]
schemas = [get_json_schema(getattr(GuiforgeEnv(), f.__name__)) for f in tools]
assert [s["function"]["name"] for s in schemas] == ["act"], schemas
assert schemas[0]["function"]["parameters"]["properties"]["action"]["type"] == "string"
print("tools", len(schemas))
# the preference pairs through TRL's DPO collator for vision data (tests/trainers/trl_dpo.py)
import runpy
sys.argv = [sys.argv[2], out]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.timeout(1800)  # the first run makes .venv-train (a few minutes)
def test_trl_accepts_every_row(hf_export):
    out, result = hf_export
    python = _train_python()
    proc = subprocess.run([str(python), "-c", TRL_CHECK, str(out), str(ROOT / "tests" / "trainers" / "trl_dpo.py")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"checked {2 * result.n_sft + result.n_rl}" in proc.stdout and "tools 1" in proc.stdout
    assert json.loads(proc.stdout.strip().splitlines()[-1])["pairs"] == result.n_pairs > 0


def _reference_completion(lake, task_id: str, coords: str, rl_row: dict) -> str:
    """A successful trajectory's actions as a completion in the export's convention."""
    return "\n".join(_reference_replies(lake, task_id, coords, rl_row))


def _reference_replies(lake, task_id: str, coords: str, rl_row: dict, action_format: str = "guiforge") -> list[str]:
    """A successful trajectory's actions, one reply each, in an action format and convention."""
    target = Target(action_format, coords)
    winner = next(t for t in lake.read_table("trajectories").to_pylist() if t["task_id"] == task_id and t["success"])
    steps = sorted((s for s in lake.read_table("steps").to_pylist() if s["trajectory_id"] == winner["trajectory_id"]),
                   key=lambda s: s["step_index"])
    return [target.encode(s["thought"], s["action"], (s["image_width"], s["image_height"]), rl_row["domain"])
            for s in steps]


def test_reward_scores_reference_one_and_empty_zero(lake, tmp_path):
    from guiforge.rl import TaskReward

    export_run(lake, tmp_path / "rl", fmt="hf", coords="unit")
    rl = load_dataset(str(tmp_path / "rl"), "rl", split="train")
    row = next(r for r in rl if r["n_success"])
    reference = _reference_completion(lake, row["task_id"], "unit", row)
    reward = TaskReward()
    columns = {k: [row[k]] * 2 for k in row if k not in ("prompt", "images")}
    completions = [[{"role": "assistant", "content": reference}], [{"role": "assistant", "content": ""}]]
    assert reward(prompts=[row["prompt"]] * 2, completions=completions, **columns) == [1.0, 0.0]
    partial = TaskReward(reward="score")(prompts=[row["prompt"]] * 2, completions=completions, **columns)
    assert partial[0] == 1.0 and partial[1] < 1.0  # the rubric's weighted score: s0 may earn part of it


@pytest.mark.parametrize("site", ["env", "verifier"])
def test_reward_is_none_when_the_environment_or_the_verifier_fails(lake, tmp_path, site):
    """The reference completion, whose reward is 1.0, meets a crash (Chromium killed under its
    first step, or the verifier's worker exiting twice): no reward at all, never 0."""
    from guiforge.faults import FaultsConfig, Injector, unit
    from guiforge.rl import TaskReward

    export_run(lake, tmp_path / "rl", fmt="hf", coords="unit")
    row = next(r for r in load_dataset(str(tmp_path / "rl"), "rl", split="train") if r["n_success"])
    completion = [{"role": "assistant", "content": _reference_completion(lake, row["task_id"], "unit", row)}]
    columns = {k: [row[k]] for k in row if k not in ("prompt", "images")}
    injector = Injector(FaultsConfig(**{site: {"crash": 1.0}}))
    with injector.shard("grpo", "batch-0"), unit(row["task_id"], 0):
        assert TaskReward()(prompts=[row["prompt"]], completions=[completion], **columns) == [None]
    assert [(i.site, i.kind) for i in injector.injected] == [(site, "crash")]
    assert TaskReward()(prompts=[row["prompt"]], completions=[completion], **columns) == [1.0]


@pytest.mark.parametrize("action_format", ["uitars", "qwen_vl"])
def test_export_in_a_students_action_format(lake, tmp_path, action_format):
    """Rows a UI-TARS / Qwen-VL student trains on: its own system prompt, every assistant turn
    in its words and convention (read back by its codec to the lake's action), and an RL
    reward that scores a completion written that way."""
    from guiforge.harness.episode import system_prompt
    from guiforge.rl import TaskReward

    out = tmp_path / action_format
    result = export_run(lake, out, fmt="hf", action_format=action_format)
    codec = get_format(action_format)
    assert result.action_format == action_format and result.coords == codec.default_coords
    steps = {(s["trajectory_id"], s["step_index"]): s for s in lake.read_table("steps").to_pylist()}
    ds = load_dataset(str(out), "all", split="train")
    assert len(ds) == result.n_sft > 0
    for row in ds:
        frame = (row["image_width"], row["image_height"])
        target = Target(action_format, result.coords)
        assert row["messages"][0]["content"][0]["text"] == system_prompt(
            row["domain"], row["variant"], None, codec, target.coord_system(frame))
        _, action = target.decode(row["messages"][-1]["content"][0]["text"], row["domain"], row["variant"], frame)
        want = steps[(row["trajectory_id"], row["step_index"])]["action"]
        assert action.type == want["type"]
        if want.get("x") is not None:
            got, expected = to_pixels(action.x, action.y, *frame), to_pixels(want["x"], want["y"], *frame)
            slack = target.coord_system(frame).tolerance_px() + 1
            assert abs(got[0] - expected[0]) <= slack and abs(got[1] - expected[1]) <= slack
        for m in row["messages"][2:-1]:
            if m["role"] == "assistant":  # past replies re-encoded: the student's codec reads them
                target.decode(m["content"][0]["text"], row["domain"], row["variant"], frame)
    assert row["action_format"] == action_format
    rl = load_dataset(str(out), "rl", split="train")
    row = next(r for r in rl if r["n_success"])
    assert row["action_format"] == action_format and row["coords"] == result.coords
    replies = _reference_replies(lake, row["task_id"], row["coords"], row, action_format)
    columns = {k: [row[k]] * 2 for k in row if k not in ("prompt", "images")}
    completions = [[{"role": "assistant", "content": r} for r in replies], [{"role": "assistant", "content": "hm"}]]
    assert TaskReward()(prompts=[row["prompt"]] * 2, completions=completions, **columns) == [1.0, 0.0]


def test_native_tool_formats_are_refused_with_the_option():
    with pytest.raises(GuiforgeError, match=r"--action-format: 'openai_tools' .*text format"):
        check_target("openai_tools", None)
    with pytest.raises(GuiforgeError, match="--coords: 'inches'"):
        check_target("uitars", "inches")


def test_environment_through_trls_interface(lake, tmp_path):
    """What GRPOTrainer does with environment_factory: probe the class for reset, tools and
    get_reward, reset(**row), call tools with the policy's arguments, then get_reward()."""
    from guiforge.rl import GuiforgeEnv

    export_run(lake, tmp_path / "rl", fmt="hf", coords="grid1000")
    rl = load_dataset(str(tmp_path / "rl"), "rl", split="train")
    env = GuiforgeEnv()
    members = dict(inspect.getmembers(type(env), predicate=inspect.isfunction))
    tools = [name for name in members if name not in ("reset", "get_reward") and not name.startswith("_")]
    assert "reset" in members and "get_reward" in members and tools == ["act"]
    assert "Args:" in members["act"].__doc__ and inspect.signature(members["act"]).parameters["action"].annotation
    row = next(r for r in rl if r["n_success"])
    scripted = [json.loads(line)["action"] for line in
                _reference_completion(lake, row["task_id"], "grid1000", row).splitlines()]
    for _ in range(2):  # TRL pools instances: reset again for the next rollout
        assert env.reset(**row) is None
        for action in scripted:
            result = env.act(json.dumps(action))
            assert result[0]["type"] == "text" and "could not be used" not in result[0]["text"], result
        assert any(p["type"] == "image" for p in result) or scripted[-1]["type"] in ("terminate", "answer")
        assert env.get_reward() == 1.0
    env.reset(**row)
    assert "could not be used" in env.act('{"type": "fly"}')[0]["text"]
    assert env.get_reward() == 0.0


def test_judgments_decide_acceptance_when_present(lake, tmp_path):
    run = lake.runs("trajectories")[0]
    trajectories = lake.read_table("trajectories").to_pylist()
    keep = trajectories[0]
    rows = [{"trajectory_id": t["trajectory_id"], "task_id": t["task_id"], "judge": "ocr", "judge_model": "offline:ocr",
             "prompt_hash": "jdg1", "success": t is keep, "verifier_success": t["success"], "accepted": t is keep,
             "accept_policy": "judge", "accept_reason": "judge says success" if t is keep else "judge says failure"}
            for t in trajectories]
    commit_shard(lake, ShardCommit("judge", run, "testjudge", "judge"), {"judgments": rows})
    try:
        out = tmp_path / "j"
        result = export_run(lake, out, fmt="hf")
        assert result.acceptance == "judgments"
        ds = load_dataset(str(out), "all", split="train")
        assert set(ds["trajectory_id"]) <= {keep["trajectory_id"]} and set(ds["judge_model"]) <= {"offline:ocr"}
        assert "judge says failure" in " ".join(e["reason"] for e in result.exclusions)
    finally:
        lake.fs.rm(lake.shard_path("judgments", run, "testjudge"))
        lake.fs.rm(lake.manifest_path(run, "judge", "testjudge"))


def test_cli_export_and_its_errors(lake, tmp_path):
    cli = ROOT / ".venv" / "bin" / "guiforge"
    out = tmp_path / "cli"
    proc = subprocess.run([str(cli), "export", "--lake", lake.root, "--out", str(out), "--coords", "grid1000"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"exported run \S+ to .* \d+ SFT rows from \d+ tasks, 2 RL prompts", proc.stdout)
    exports = lake.read_table("exports").to_pylist()
    assert {"sft", "sft_prompt_completion", "rl"} <= {e["kind"] for e in exports}
    assert any(e["path"] == str(out) and e["coords"] == "grid1000" for e in exports)
    assert any(e["stage"] == "export" for e in lake.read_table("exclusions").to_pylist())
    bad = subprocess.run([str(cli), "export", "--lake", lake.root, "--out", str(out), "--coords", "inches"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--coords" in bad.stderr and "Traceback" not in bad.stderr
    bad = subprocess.run([str(cli), "export", "--lake", lake.root, "--out", str(out), "--rl-protocol", "chat"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--rl-protocol: 'chat'" in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(GuiforgeError, match="not a guiforge export"):
        export_run(lake, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").exists()


def test_exported_history_pairs_each_feedback_with_the_action_it_describes(lake, hf_export):
    """Read back from the export: a past step's user turn carries the feedback of the step
    before it (what produced that screen), and its own action's result opens the next turn."""
    out, _ = hf_export
    rows = load_dataset(str(out), "all", split="train")
    steps = {(s["trajectory_id"], s["step_index"]): s for s in lake.read_table("steps").to_pylist()}

    def feedback(tid: str, index: int) -> str:
        prev = steps.get((tid, index - 1))
        return "" if prev is None else (prev["error"] or prev["feedback"] or "")

    checked = 0
    for row in rows:
        tid = row["trajectory_id"]
        for message in row["messages"]:
            text = next((c["text"] for c in message["content"] if c["type"] == "text"), "") or ""
            m = re.match(r"Step (\d+)\.(?: Feedback: (.*))?", text)
            if message["role"] != "user" or not m:
                continue
            index = int(m.group(1))
            assert (m.group(2) or "").split("\n")[0] == feedback(tid, index).split("\n")[0], (tid, index, text)
            checked += int(bool(m.group(2)))
    assert checked > 5  # history turns with feedback were read back, not vacuously


def test_mistakes_and_repeats_never_become_targets(lake, tmp_path):
    """A step the teacher got wrong on purpose is left out with its reason, and the steps after
    it keep it in their history; a step the relabel stage marked a repeat of another sample
    stays while that sample is not exported, and a second sample repeating the exported one
    is left out as a duplicate."""
    from guiforge.export.rows import sft_rows

    src = load_source(lake)
    chosen = best_of_n(src.trajectories, 1, lambda *_: None)[0]
    steps = src.steps[chosen["trajectory_id"]]
    assert len(steps) >= 3
    chosen["teacher_events_json"] = json.dumps([{"turn": 1, "event": "mistake", "kind": "neighbour"},
                                                {"turn": 2, "event": "correction", "kind": "neighbour"}])
    src.relabels[(chosen["trajectory_id"], 2)] = {"trajectory_id": chosen["trajectory_id"], "step_index": 2,
                                                  "consistent": True, "duplicate_target": True, "mode": "direct",
                                                  "thought": "", "assistant_text": None}
    twin = {**chosen, "trajectory_id": chosen["trajectory_id"] + "-twin", "teacher_events_json": "[]"}
    src.steps[twin["trajectory_id"]] = [{**s, "trajectory_id": twin["trajectory_id"]} for s in steps]
    src.trajectories = [chosen, twin]  # with a mistake it is no longer its task's best sample
    every = sft_rows(src, Target(), ContextPolicy(kind="full"), per_task=None)
    rows = [r for r in every if r.columns["trajectory_id"] == chosen["trajectory_id"]]
    assert {r.columns["step_index"] for r in rows} == {s["step_index"] for s in steps} - {1}
    reasons = {e["subject_id"]: (e["gate"], e["reason"]) for e in src.exclusions}
    assert reasons[f"{chosen['trajectory_id']}#1"][0] == "teacher_mistake"
    assert f"{chosen['trajectory_id']}#2" not in reasons  # marked a repeat of a sample not exported
    twins = {s["step_index"] for s in steps} - {1}  # the twin's step 1 is no mistake: a row of its own
    assert all(reasons[f"{twin['trajectory_id']}#{i}"][0] == "duplicate" for i in twins)
    later = next(r for r in rows if r.columns["step_index"] == 3)  # the mistake is in its history, as its action
    history = [m["content"][0]["text"] for m in later.messages[2:-1] if m["role"] == "assistant"]
    assert len(history) == 3 and all(json.loads(h)["action"]["type"] for h in history)


def test_history_turns_are_written_like_the_targets(lake):
    """With relabels in the run, a past assistant turn is the relabelled reply (or the action
    alone where a step has none), never the teacher's raw reply."""
    from guiforge.export.rows import sft_rows

    src = load_source(lake)
    rows = sft_rows(src, Target(), ContextPolicy(kind="full"))
    winner = lake.test_winner["trajectory_id"]
    raw = {s["raw_output"] for s in src.steps[winner]}
    mine = sorted((r for r in rows if r.columns["trajectory_id"] == winner), key=lambda r: r.columns["step_index"])
    last = mine[-1]
    history = [m["content"][0]["text"] for m in last.messages[2:-1] if m["role"] == "assistant"]
    assert history and not set(history) & raw
    assert json.loads(history[0])["thought"] == "Relabeled thought 0."  # step 0's relabel
    assert set(json.loads(history[1])) == {"action"}  # step 1's relabel failed: the action alone


def test_rl_prompts_ask_in_the_trainers_protocol(lake, tmp_path):
    out = tmp_path / "tools"
    export_run(lake, out, fmt="hf")
    rl = load_dataset(str(out), "rl", split="train")
    system = rl[0]["prompt"][0]["content"][0]["text"]
    assert "call the `act` tool" in system and "reply with exactly one action" not in system
    assert set(rl["rl_protocol"]) == {"tools"}
    # the task as the environment and reward need it, never the package gate's timings
    tasks = [json.loads(t) for t in rl["task_json"]]
    assert tasks and all("gate_json" not in t and t["rubric_json"] and t["setup_json"] for t in tasks)
    export_run(lake, tmp_path / "completion", fmt="hf", options=ExportOptions(rl_protocol="completion"))
    rl = load_dataset(str(tmp_path / "completion"), "rl", split="train")
    system = rl[0]["prompt"][0]["content"][0]["text"]
    assert "every action the task needs" in system and "`act`" not in system
    with pytest.raises(GuiforgeError, match="--rl-protocol: completion .* --rl-protocol tools"):
        export_run(lake, tmp_path / "x", fmt="hf", action_format="uitars", options=ExportOptions(rl_protocol="completion"))


def test_an_empty_export_is_one_line(lake, tmp_path):
    """Nothing accepted, no RL pool and no preference pairs: one line naming the run and why, no
    folder a loader would reject (a card with `configs: []`)."""
    run = lake.runs("trajectories")[0]
    # the pairs' shards and manifest entries, set aside (pairs alone are an export) and put back after
    pair_files = [(path, lake.fs.cat_file(path)) for shard in lake.shard_files("preference_pairs", run)
                  for path in (shard.path, lake.manifest_path(run, "preference_pairs", shard.fingerprint))]
    for path, _ in pair_files:
        lake.fs.rm(path)
    trajectories = lake.read_table("trajectories").to_pylist()
    rows = [{"trajectory_id": t["trajectory_id"], "task_id": t["task_id"], "judge": "ocr", "success": False,
             "verifier_success": t["success"], "accepted": False, "accept_policy": "judge",
             "accept_reason": "judge says failure"} for t in trajectories]
    pool = lake.read_table("rl_tasks").to_pylist()
    commit_shard(lake, ShardCommit("judge", run, "testreject", "judge"), {"judgments": rows})
    lake.fs.rm(lake.shard_path("rl_tasks", run, "testpool"))
    lake.fs.rm(lake.manifest_path(run, "rl_select", "testpool"))
    try:
        with pytest.raises(GuiforgeError, match=r"nothing to export: no SFT row, RL prompt or preference pair "
                                                r".*not accepted by ocr"):
            export_run(lake, tmp_path / "empty", fmt="hf")
        assert not (tmp_path / "empty").exists()
    finally:
        lake.fs.rm(lake.shard_path("judgments", run, "testreject"))
        lake.fs.rm(lake.manifest_path(run, "judge", "testreject"))
        commit_shard(lake, ShardCommit("rl_select", run, "testpool", "rl_select"), {"rl_tasks": pool})
        for path, data in pair_files:
            lake.fs.pipe_file(path, data)


def _trl_sft(out: Path, work: Path, *flags: str) -> dict:
    proc = subprocess.run([str(_train_python()), str(ROOT / "tests" / "trainers" / "trl_sft.py"), str(out), str(work),
                           *flags], capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["default_max_length"] == 1024 and figures["longest"] <= 1024 and figures["rows"] > 0
    return figures


@pytest.mark.timeout(1800)
def test_every_row_fits_trls_default_max_length(hf_export, tmp_path):
    """CI's variant of the battery below: every row of the default export, tokenized by a tiny
    Qwen2-VL's processor (the real image processor with the hub limits), fits SFTConfig's
    default max_length (1024), so TRL never truncates inside an image's tokens."""
    _trl_sft(hf_export[0], tmp_path, "--fit-only")


@pytest.mark.battery
@pytest.mark.timeout(1800)
def test_trl_sfttrainer_trains_on_the_default_export_with_its_defaults(hf_export, tmp_path):
    """A tiny Qwen2-VL built in the test (BPE trained on the export's text, the real Qwen2-VL
    image processor with the hub limits) trains 3 steps on the conversational and the
    prompt-completion configs with SFTConfig's defaults (max_length 1024, on the CPU)."""
    figures = _trl_sft(hf_export[0], tmp_path)
    assert figures["all"]["steps"] == figures["prompt_completion"]["steps"] == 3


PROCESSOR_CHECK = r"""
import json, sys
from transformers import Qwen2VLImageProcessor, Gemma3Processor
from PIL import Image
sizes = json.loads(sys.argv[1])
qwen = Qwen2VLImageProcessor(min_pixels=3136, max_pixels=12845056)
bare = Qwen2VLImageProcessor()
qwen3 = Qwen2VLImageProcessor(patch_size=16, merge_size=2, min_pixels=65536, max_pixels=16777216)
out = {}
for w, h in sizes:
    image = Image.new("RGB", (w, h))
    out[f"{w}x{h}"] = [int(p(images=[image])["image_grid_thw"][0].prod()) // 4 for p in (qwen, bare, qwen3)]
print(json.dumps(out))
"""


def test_card_token_counts_match_the_real_processors(hf_export):
    """The card's table of image tokens per screenshot, against transformers' own image
    processors (Qwen2-VL/2.5-VL with the hub limits and bare, Qwen3-VL's 32 px blocks)."""
    out, _ = hf_export
    card = (out / "README.md").read_text()
    table = [line for line in card.splitlines() if re.match(r"\| \d+x\d+ \|", line)]
    assert table, card
    rows = {cells[0]: [int(c) for c in cells[2:5]] for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in table)}
    sizes = [[int(v) for v in size.split("x")] for size in rows]
    proc = subprocess.run([str(_train_python()), "-c", PROCESSOR_CHECK, json.dumps(sizes)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == rows


REWARD_IN_TRAINER_VENV = r"""
import json, sys
from guiforge.rl import TaskReward
row, completion = json.loads(open(sys.argv[1]).read()), sys.argv[2]
columns = {k: [v] * 2 for k, v in row.items()}
completions = [[{"role": "assistant", "content": completion}], [{"role": "assistant", "content": ""}]]
print(json.dumps(TaskReward()(prompts=[None, None], completions=completions, **columns)))
"""


@pytest.mark.timeout(1800)
def test_reward_runs_in_the_trainer_venv(lake, tmp_path):
    """TaskReward in .venv-train, which holds TRL and guiforge with only its `rl` extra (no
    Prefect, DuckDB or model SDKs): the reference completion scores 1.0, an empty one 0.0."""
    export_run(lake, tmp_path / "rl", fmt="hf", options=ExportOptions(rl_protocol="completion"))
    row = next(r for r in load_dataset(str(tmp_path / "rl"), "rl", split="train") if r["n_success"])
    completion = _reference_completion(lake, row["task_id"], row["coords"], row)
    columns = {k: v for k, v in row.items() if k not in ("prompt", "images")}
    python = _train_python()
    absent = subprocess.run([str(python), "-c", "import prefect"], capture_output=True, text=True, timeout=120)
    assert absent.returncode != 0  # the pipeline's own stack is not there
    row_file = tmp_path / "row.json"  # a row with its task's setup is past one argument's 128 KiB
    row_file.write_text(json.dumps(columns, default=str))
    proc = subprocess.run([str(python), "-c", REWARD_IN_TRAINER_VENV, str(row_file), completion],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [1.0, 0.0]


def test_stats_realism_prints_the_exports_breadth(lake):
    """`guiforge stats --realism`'s export lines: rollout tiers, and the pipeline's SFT export
    with its distinct tasks, duplicate (screenshot, target) rows, rows with a screenshot, splits."""
    from rich.console import Console

    from guiforge.cli_realism import print_export_breadth
    from guiforge.export.figures import export_realism

    figures = export_realism(lake)
    assert figures["tiers"] == {"breadth": {"tasks": 1, "samples": 1}, "depth": {"tasks": 1, "samples": 4}}
    e = figures["export"]
    assert e["sft_rows"] > 0 and e["sft_tasks"] >= 1 and e["sft_trajectories"] == e["sft_tasks"]  # best of N
    assert e["duplicate_image_target_rows"] == 0 and e["sft_rows_with_image_share"] == 1.0
    assert sum(v["sft_rows"] for v in e["splits"].values()) == e["sft_rows"]
    console = Console(record=True, width=300)
    print_export_breadth(console, lake, None)
    text = console.export_text()
    assert "rollouts by tier: breadth 1 tasks / 1 samples, depth 1 tasks / 4 samples" in text and f"{e['sft_rows']} rows from {e['sft_tasks']} distinct tasks" in text
    assert "splits by world: " in text
