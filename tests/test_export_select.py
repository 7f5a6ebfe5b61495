"""What becomes a target and where it goes, on rows of their own: best of N, teacher
mistakes, splits by world, the image budget's token rules and the row fitting."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from guiforge.envs.actions import action_set
from guiforge.export.budget import (
    PROCESSORS,
    REFERENCE,
    Budget,
    scaled_to,
    smart_resize,
    trim_earlier_steps,
)
from guiforge.export.rl_prompt import rl_system
from guiforge.export.select import assign_splits, best_of_n, mistake_turns, split_group
from guiforge.export.target import Target
from guiforge.rl.tasks import read_action
from guiforge.selection import measures_rate
from guiforge.stages.rollouts import RolloutsConfig


def _t(tid: str, task: str, success: bool, score: float, steps: int, sample: int, events=None) -> dict:
    return {"trajectory_id": tid, "task_id": task, "success": success, "score": score, "n_steps": steps,
            "sample_index": sample, "teacher_events_json": json.dumps(events) if events is not None else None}


def test_best_of_n_keeps_the_best_accepted_sample_per_task():
    mistake = [{"turn": 1, "event": "mistake", "kind": "neighbour"}, {"turn": 2, "event": "correction"}]
    rows = [_t("a0", "A", True, 1.0, 6, 0, mistake), _t("a1", "A", True, 1.0, 7, 1), _t("a2", "A", True, 1.0, 5, 2),
            _t("b0", "B", True, 0.8, 3, 0), _t("b1", "B", True, 1.0, 9, 1), _t("c0", "C", True, 1.0, 4, 0)]
    left = []
    kept = best_of_n(rows, 1, lambda t, why: left.append((t["trajectory_id"], why)))
    # A: no mistake beats a mistake, then fewer steps; B: the higher score wins over fewer steps
    assert [t["trajectory_id"] for t in kept] == ["a2", "b1", "c0"]
    assert {tid for tid, _ in left} == {"a0", "a1", "b0"} and all("best of" in why for _, why in left)
    assert [t["trajectory_id"] for t in best_of_n(rows, 2, lambda *_: None)] == ["a1", "a2", "b0", "b1", "c0"]
    assert best_of_n(rows, None, lambda *_: None) == rows
    # the relabel stage's repeats break a tie: fewer rows lost
    tie = [_t("x0", "X", True, 1.0, 4, 0), _t("x1", "X", True, 1.0, 4, 1)]
    assert best_of_n(tie, 1, lambda *_: None, lambda t: 2 if t["trajectory_id"] == "x0" else 0)[0]["trajectory_id"] \
        == "x1"


def test_mistake_turns_read_the_teachers_events():
    events = [{"turn": 2, "event": "mistake", "kind": "wrong_value"}, {"turn": 3, "event": "correction",
                                                                      "kind": "wrong_value"}]
    assert mistake_turns(_t("t", "T", True, 1, 5, 0, events)) == {2: "wrong_value"}
    assert mistake_turns(_t("t", "T", True, 1, 5, 0)) == {}


def test_splits_hold_each_world_in_one_split():
    worlds = [f"wld_{i}" for i in range(40)]
    split = assign_splits(worlds, 0.05, 0.05)
    counts = {s: sum(v == s for v in split.values()) for s in ("train", "validation", "test")}
    assert counts == {"train": 36, "validation": 2, "test": 2}
    assert assign_splits(list(reversed(worlds)), 0.05, 0.05) == split  # stable, whatever the order
    few = assign_splits(["a", "b", "c"], 0.05, 0.05)  # at least one world each from three on
    assert sorted(few.values()) == ["test", "train", "validation"]
    assert set(assign_splits(["a", "b"], 0.05, 0.05).values()) == {"train"}
    assert set(assign_splits(worlds, 0, 0).values()) == {"train"}


def test_token_rules_of_the_common_processors():
    qwen, bare, qwen3, gemma, llava = PROCESSORS
    assert qwen.tokens(1280, 800) == 46 * 29  # 1288 x 812 after rounding to 28 px
    assert qwen.tokens(412, 839) == 15 * 30 and qwen.tokens(1920, 1080) == 69 * 39
    assert bare.tokens(1920, 1080) <= 1280 and qwen3.tokens(1280, 800) == 40 * 25
    assert gemma.tokens(1280, 800) == 256 and llava.tokens(10, 10) == 576
    assert smart_resize(800, 1280, 28, 3136, 12845056) == (812, 1288)
    w, h = scaled_to(1280, 800, 300)
    assert REFERENCE.tokens(w, h) <= 300 and abs(w / h - 1.6) < 0.02 and REFERENCE.tokens(w + 40, h + 25) > 300


def test_trimming_leaves_out_the_oldest_earlier_steps_first():
    lines = "\n".join(f"Step {i}: click x={i} y={i} -> opened the thing number {i}" for i in range(60))
    messages = [{"role": "system", "content": [{"type": "text", "text": "s" * 1200}]},
                {"role": "user", "content": [{"type": "text", "text": "Task: do it"}]},
                {"role": "user", "content": [{"type": "text", "text": f"Earlier steps:\n{lines}"}]},
                {"role": "user", "content": [{"type": "text", "text": "Step 60."}, {"type": "image", "text": None}]},
                {"role": "assistant", "content": [{"type": "text", "text": '{"action": {"type": "wait"}}'}]}]
    budget = Budget(1024, 256)
    assert budget.image_tokens(messages, 1) is None
    trimmed = trim_earlier_steps(messages, budget, 1)
    text = trimmed[2]["content"][0]["text"]
    assert budget.image_tokens(trimmed, 1) >= 256 and "Step 59:" in text and "Step 0:" not in text
    assert text.startswith("Earlier steps (") and trimmed[3:] == messages[3:]


def test_rollout_tiers_and_what_rl_select_counts():
    config = RolloutsConfig(tasks="all", samples=1, depth={"tasks": 2, "samples": 8})
    rows = [{"task_id": f"t{i}"} for i in range(5)]
    assert [(r["task_id"], k, tier) for r, k, tier in config.tiers(rows)] == [
        ("t0", 8, "depth"), ("t1", 8, "depth"), ("t2", 1, "breadth"), ("t3", 1, "breadth"), ("t4", 1, "breadth")]
    assert [tier for _, _, tier in RolloutsConfig(samples=4).tiers(rows)] == ["depth"] * 5
    assert measures_rate("depth") and measures_rate(None) and not measures_rate("breadth")


def test_guiforge_rl_imports_no_world_or_file_stack():
    """A trainer imports guiforge.rl before any reward runs: Faker, the office libraries and
    Playwright load only when a reward or environment first needs them."""
    code = ("import sys, guiforge.rl; heavy = {'faker', 'openpyxl', 'pptx', 'docx', 'playwright', 'prefect', "
            "'duckdb'} & {m.split('.')[0] for m in sys.modules}; print(sorted(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_the_rl_prompts_example_action_reads_back_in_every_domain_and_format():
    """The tools protocol's example act(action='...') is an action of the domain's own set,
    written so that the export's codec reads it back (a phone taps, a terminal runs bash)."""
    for fmt, coords in (("guiforge", "grid999"), ("uitars", "grid1000"), ("qwen_vl", "resized")):
        target = Target(fmt, coords)
        for domain, variant in (("web", None), ("mobile", None), ("desktop", "gui"), ("desktop", "terminal"),
                                ("desktop", "hybrid"), ("tools", None)):
            system = rl_system(target, "tools", domain, variant, (1280, 800))
            example = re.search(r"act\(action='(.*?)'\); it answers", system).group(1)
            action = read_action(example, domain, variant, 1280, 800, coords, fmt)
            assert action.type in action_set(domain, variant), (fmt, domain, variant, example)


def test_tasks_without_a_world_are_split_by_task():
    """A task source's tasks have no world: each is its own group, so they spread over the
    splits instead of all landing in one."""
    rows = [{"world_id": None, "task_id": f"t{i}"} for i in range(40)]
    split_of = assign_splits([split_group(r) for r in rows], 0.1, 0.1)
    splits = [split_of[split_group(r)] for r in rows]
    assert {"train", "validation", "test"} <= set(splits)
    assert split_group({"world_id": "w1", "task_id": "t1"}) == "w1"
