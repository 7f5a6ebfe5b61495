"""The teacher's realism figures: thought length, variety and reasons; the share of
trajectories whose mistake is also corrected."""

from __future__ import annotations

import json

from guiforge.teacher.realism import recovery_figures, thought_figures


def test_thought_figures_count_words_variety_and_reasons():
    figures = thought_figures(["I am on the inbox. I'll open it so I can read the total.",
                               "I'll click “Send”.", "I'll click “Send”."])
    assert figures["thoughts"] == 3 and figures["distinct"] == 2
    assert figures["median_words"] == 3 and figures["with_reason_share"] == round(1 / 3, 3)


def test_recovery_share_is_over_trajectories_with_a_mistake():
    events = [json.dumps([{"turn": 1, "event": "mistake", "kind": "neighbour"},
                          {"turn": 2, "event": "correction", "kind": "neighbour"}]),
              json.dumps([{"turn": 0, "event": "mistake", "kind": "wrong_row_value"}]),
              json.dumps([]), None]
    figures = recovery_figures(events)
    assert (figures["trajectories"], figures["with_mistake"], figures["with_correction"]) == (4, 2, 1)
    assert figures["recovery_share"] == 0.5
    assert figures["mistakes_by_kind"] == {"neighbour": 1, "wrong_row_value": 1}


def test_recovery_share_per_domain():
    mistake = json.dumps([{"turn": 0, "event": "mistake", "kind": "neighbour"}])
    fixed = json.dumps([{"turn": 0, "event": "mistake", "kind": "neighbour"},
                        {"turn": 1, "event": "correction", "kind": "neighbour"}])
    figures = recovery_figures([fixed, mistake, fixed, None, mistake],
                               ["web", "web", "desktop", "mobile", "desktop"])
    assert figures["by_domain"] == {
        "desktop": {"with_mistake": 2, "with_correction": 1, "recovery_share": 0.5},
        "web": {"with_mistake": 2, "with_correction": 1, "recovery_share": 0.5}}
    assert (figures["with_mistake"], figures["recovery_share"]) == (4, 0.5)
