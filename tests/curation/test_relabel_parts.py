"""The relabeler's parts on their own: the consistency check, the offline writer, the SFT
target's action span and Mage's duplicate rule."""

from __future__ import annotations

import json

from guiforge.curation.consistency import check_consistency
from guiforge.curation.relabeler import relabel_offline
from guiforge.curation.sft_target import assistant_text, choose_mode, mark_duplicates
from guiforge.curation.thoughts import StepContext
from guiforge.harness.parser import parse_reply

SEND = {"id": "send", "tag": "button", "role": "button", "type": None, "label": "Send", "box": [900, 40, 80, 32]}
CLICK = {"type": "click", "x": 940, "y": 56}
TYPE = {"type": "type", "text": "Zoë Müller"}


def test_each_check_catches_its_disagreement():
    assert check_consistency("I'll click \u201cSend\u201d.", CLICK, SEND) is None
    assert check_consistency("I'll type \u201cSend\u201d.", CLICK, SEND).startswith("verb:")
    assert check_consistency("Let me think.", CLICK, SEND).startswith("verb:")
    assert check_consistency("I'll click \u201cArchive\u201d.", CLICK, SEND).startswith("element:")
    assert check_consistency("I'll type \u201cZoe Muller\u201d.", TYPE, None).startswith("text:")
    assert check_consistency("I'll type \u201cZoë Müller\u201d into the name field.", TYPE, None) is None
    scroll = {"type": "scroll", "direction": "down", "x": 500, "y": 500}
    assert check_consistency("I'll scroll down.", scroll, None) is None
    assert check_consistency("I'll scroll up to see more.", scroll, None).startswith("direction:")
    swipe = {"type": "swipe", "x": 500, "y": 800, "x2": 500, "y2": 200}
    assert check_consistency("I'll swipe up to see more.", swipe, None) is None


def test_offline_relabels_are_consistent_varied_and_not_copies():
    thoughts = set()
    for i in range(12):
        ctx = StepContext("Send the draft to Ana", i, 12, CLICK, SEND, 1280, 800)
        r = relabel_offline(ctx, f"seed{i}")
        assert r.consistent and r.attempts == 1, r
        assert "\u201cSend\u201d" in r.thought or "the button" in r.thought
        thoughts.add(r.thought)
    assert len(thoughts) >= 6  # phrasings vary by step
    r = relabel_offline(StepContext("x", 0, 3, TYPE, None), "s")
    assert "Zoë Müller" in r.thought and r.consistent
    assert relabel_offline(StepContext("x", 2, 3, {"type": "terminate", "status": "success"}, None), "s").consistent


def test_assistant_text_span_covers_exactly_the_action():
    for mode in ("reasoning", "direct"):
        text, start, end = assistant_text(mode, "I'll type \u201cZoë Müller\u201d.", TYPE)
        assert json.loads(text[start:end]) == TYPE
        thought, action = parse_reply(text, "web")
        assert action.text == "Zoë Müller"
        assert (thought != "") == (mode == "reasoning")
    modes = [choose_mode("trj", i, 0.3, 1) for i in range(400)]
    assert 0.22 < modes.count("reasoning") / 400 < 0.38


def test_one_query_per_spot_per_frame():
    rows = [{"trajectory_id": f"t{k}", "step_index": 0, "image_sha256": "frame0", "action": CLICK, "target": SEND}
            for k in range(3)]
    rows.append({"trajectory_id": "t3", "step_index": 0, "image_sha256": "frame0",
                 "action": {"type": "click", "x": 100, "y": 100}, "target": None})
    rows.append({"trajectory_id": "t0", "step_index": 1, "image_sha256": "frame1", "action": CLICK, "target": SEND})
    mark_duplicates(rows)
    assert [r["duplicate_target"] for r in rows] == [False, True, True, False, False]
    assert rows[1]["duplicate_of"] == "t0:0"


def test_every_phrasing_of_every_action_passes_the_check():
    actions = [(CLICK, SEND), ({"type": "tap", "x": 5, "y": 5}, None), (TYPE, SEND),
               ({"type": "scroll", "direction": "up", "x": 1, "y": 1}, None),
               ({"type": "swipe", "x": 500, "y": 200, "x2": 500, "y2": 800}, None),
               ({"type": "hotkey", "keys": ["ctrl", "s"]}, None), ({"type": "key", "keys": ["enter"]}, None),
               ({"type": "goto", "text": "mail"}, None), ({"type": "back"}, None), ({"type": "open_app", "app": "mail"}, None),
               ({"type": "bash", "text": "ls"}, None), ({"type": "call_tool", "text": '{"name": "f", "arguments": {}}'}, None),
               ({"type": "answer", "answer": "42"}, None), ({"type": "wait"}, None)]
    for action, target in actions:
        for i in range(30):
            r = relabel_offline(StepContext("task", i % 5, 5, action, target, 1000, 1000), f"s{i}")
            assert r.consistent and r.attempts == 1, (action, r)
