"""The offline diagnoser's parts: the action-level differ, trajectory flags, and knowledge
standouts with explaining-away."""

from __future__ import annotations

import random

from guiforge.curation.differ import Step, first_departure, trajectory_flags
from guiforge.curation.knowledge import SampleFacts, standouts


def step(i, action, label=None, box=None, image=None, error=None):
    target = {"id": label, "label": label, "box": box or [0, 0, 40, 40]} if label else None
    return Step(i, action, target, image or f"f{i}", error, 1000, 1000)


def click(x, y):
    return {"type": "click", "x": x, "y": y}


OK = [step(0, click(100, 100), "Inbox"), step(1, click(300, 300), "Reply", [280, 280, 40, 40]),
      step(2, {"type": "type", "text": "12.50"}), step(3, click(900, 50), "Send"),
      step(4, {"type": "terminate", "status": "success"})]


def test_departures_are_classified():
    wrong = [OK[0], step(1, click(500, 500), "Forward"), *OK[2:]]
    d = first_departure(wrong, OK)
    assert (d.failure_mode, d.step_index, d.detail["clicked"]) == ("wrong_element", 1, "Forward")
    typed = [*OK[:2], step(2, {"type": "type", "text": "12.60"}), *OK[3:]]
    d = first_departure(typed, OK)
    assert d.failure_mode == "wrong_text" and d.detail == {"expected": "12.50", "typed": "12.60"}
    skipped = [OK[0], OK[2], OK[3], OK[4]]
    assert first_departure(skipped, OK).failure_mode == "step_skipped"
    early = [OK[0], step(1, {"type": "terminate", "status": "success"})]
    assert first_departure(early, OK).failure_mode == "stopped_early"
    off = [OK[0], step(1, click(380, 300), None), *OK[2:]]
    d = first_departure(off, OK)
    assert d.failure_mode == "point_off_target" and d.detail["off_px"] == 60  # x=380 px, the box ends at 320
    # a miss repaired on the next step is a slip, not the failure; the wrong text later is
    repaired = [OK[0], step(1, click(500, 500), "Forward"), OK[1], step(3, {"type": "type", "text": "1"}), *OK[3:]]
    assert first_departure(repaired, OK).failure_mode == "wrong_text"
    assert first_departure(OK, OK) is None


def test_trajectory_flags():
    stuck = [step(0, click(5, 5), "X", image="same"), step(1, click(5, 5), "X", image="same"),
             step(2, click(5, 5), "X", image="same")]
    assert [f[0] for f in trajectory_flags(stuck, None, 3, [5])] == ["loop", "step_budget"]
    scrolling = [step(i, {"type": "scroll", "direction": "down"}) for i in range(3)]  # new frame each time
    assert trajectory_flags(scrolling, None, 10, []) == []
    early = [OK[0], step(1, {"type": "terminate", "status": "success"})]
    assert [f[0] for f in trajectory_flags(early, "success", 10, [5])] == ["early_stop"]
    ignored = [step(0, click(5, 5), "X", error="element is disabled"), step(1, click(5, 5), "X")]
    assert [f[0] for f in trajectory_flags(ignored, None, 10, [])] == ["feedback_ignored"]


def test_a_weak_app_stands_out_and_explains_away_its_skills():
    rng = random.Random(3)
    samples = []
    for task in range(60):
        app = ["mail", "shop", "bank", "notes"][task % 4]
        skill = f"{app}.s{task % 8 // 4}"
        weak = app == "shop"
        for k in range(4):
            failed = rng.random() < (0.7 if weak else 0.12)
            samples.append(SampleFacts(f"t{task}-{k}", f"task{task}", failed, {f"app:{app}", f"skill:{skill}",
                                                                                 "domain:web"},
                                       [{"action_type:click"}] * 6, {"action_type:click"} if failed else set()))
    found = standouts(samples)
    assert [s.key for s in found] == ["app:shop"], found
    assert found[0].rate > 0.5 and found[0].rest_rate < 0.2
