"""Step-level preference pairs from one task's samples (curation/pairs.py): where a failed
sample departs from a successful one after a shared prefix, and every case that gives none."""

from __future__ import annotations

from guiforge.curation.diagnosis import TaskSamples
from guiforge.curation.differ import Step
from guiforge.curation.pairs import task_pairs

TASK = {"task_id": "t1", "domain": "web", "skill_id": "mail.reply"}


def step(i, action, label=None, image=None, error=None):
    target = {"id": label, "label": label, "box": [0, 0, 40, 40]} if label else None
    return Step(i, action, target, image or f"f{i}", error, 1000, 1000)


def click(x, y):
    return {"type": "click", "x": x, "y": y}


OK = [step(0, click(100, 100), "Inbox"), step(1, click(300, 300), "Reply"),
      step(2, {"type": "type", "text": "12.50"}), step(3, click(900, 50), "Send"),
      step(4, {"type": "terminate", "status": "success"})]


def samples(*runs: tuple[bool, list[Step]]) -> TaskSamples:
    trajectories = [{"trajectory_id": f"tr{k}", "task_id": "t1", "sample_index": k, "success": ok,
                     "score": 1.0 if ok else 0.0, "n_steps": len(steps)} for k, (ok, steps) in enumerate(runs)]
    return TaskSamples(TASK, trajectories, {f"tr{k}": steps for k, (_, steps) in enumerate(runs)})


def test_a_pair_where_a_failed_sample_departs_after_a_shared_prefix():
    wrong = [*OK[:2], step(2, {"type": "type", "text": "12.60"}), *OK[3:]]
    rows, none = task_pairs(samples((True, OK), (False, wrong)), {})
    assert none == [] and len(rows) == 1
    pair = rows[0]
    assert (pair["chosen_trajectory_id"], pair["rejected_trajectory_id"], pair["step_index"],
            pair["chosen_step_index"], pair["shared_steps"]) == ("tr0", "tr1", 2, 2, 2)
    assert pair["chosen_action"]["text"] == "12.50" and pair["rejected_action"]["text"] == "12.60"
    assert pair["failure_mode"] == "wrong_text" and "12.60" in pair["reason"] and pair["same_screen"]


def test_each_failed_sample_pairs_with_the_success_it_follows_longest():
    other_ok = [OK[0], step(1, click(600, 600), "Reply all", image="g1"), *OK[2:]]
    wrong = [*OK[:2], step(2, {"type": "type", "text": "x"}), *OK[3:]]
    rows, _ = task_pairs(samples((True, other_ok), (True, OK), (False, wrong)), {})
    assert [(r["chosen_trajectory_id"], r["shared_steps"]) for r in rows] == [("tr1", 2)]


def test_failed_samples_without_a_pair_say_why():
    same_end = list(OK)  # the same steps: its failure is in the end state
    ran_out = OK[:2]  # stopped on a shared step
    unparsed = [OK[0], step(1, None)]
    rows, none = task_pairs(samples((True, OK), (False, same_end), (False, ran_out), (False, unparsed)), {})
    assert rows == []
    reasons = {n.trajectory_id: n.reason for n in none}
    assert "never departs" in reasons["tr1"] and "no action of its own" in reasons["tr2"]
    assert "parse failure" in reasons["tr3"]


def test_a_teacher_mistake_is_never_chosen():
    wrong = [OK[0], step(1, click(500, 500), "Forward"), *OK[2:]]
    rows, none = task_pairs(samples((True, OK), (False, wrong)), {"tr0": {1}})
    assert rows == [] and "deliberate teacher mistake" in none[0].reason


def test_after_a_repaired_slip_only_the_same_screen_pairs():
    # the failed sample slipped at step 1 and repaired it: its prefix is not the success's
    slipped = [OK[0], step(1, click(500, 500), "Forward"), step(2, click(300, 300), "Reply", image="f1"),
               step(3, {"type": "type", "text": "1"}, image="other")]
    rows, none = task_pairs(samples((True, OK), (False, slipped)), {})
    assert rows == [] and "repaired a slip" in none[0].reason
    same = [*slipped[:3], step(3, {"type": "type", "text": "1"}, image="f2")]  # yet back on the same frame
    rows, _ = task_pairs(samples((True, OK), (False, same)), {})
    assert len(rows) == 1 and rows[0]["step_index"] == 3 and rows[0]["chosen_step_index"] == 2


def test_two_failed_samples_making_the_same_choice_give_one_pair():
    wrong = [*OK[:2], step(2, {"type": "type", "text": "12.60"}), *OK[3:]]
    rows, none = task_pairs(samples((True, OK), (False, wrong), (False, list(wrong))), {})
    assert len(rows) == 1 and "the same choice" in none[0].reason


def test_no_pair_without_both_outcomes():
    assert task_pairs(samples((True, OK), (True, OK)), {}) == ([], [])
    assert task_pairs(samples((False, OK[:2]), (False, OK[:1])), {}) == ([], [])
