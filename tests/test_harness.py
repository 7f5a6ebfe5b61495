"""The harness without an environment: reply parsing, context policies, system prompts,
and the scripted teacher's seeded noise."""

from __future__ import annotations

import json

import pytest

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.harness.context import (
    ContextPolicy,
    Observed,
    Turn,
    build_messages,
    shared_prefix,
    window_start,
)
from guiforge.harness.episode import system_prompt
from guiforge.harness.parser import ParseError, format_reply, parse_reply
from guiforge.harness.policies import Noise, ScriptedTeacher, TurnInput, perturb_text

PARSES = {
    "json": ('{"thought": "open it", "action": {"type": "click", "x": 120, "y": 48}}', "open it", "click"),
    "fenced": ('Sure.\n```json\n{"thought": "t", "action": {"type": "scroll", "x": 5, "y": 5, "direction": "down"}}\n```',
               "t", "scroll"),
    "bare": ('I will type now {"type": "type", "text": "hello"}', "I will type now", "type"),
    "thought/action": ('Thought: press enter\nAction: {"type": "key", "keys": "enter"}', "press enter", "key"),
    "function call": ('{"name": "click", "arguments": {"x": 1, "y": 2}}', "", "click"),
    "openai tool args as string": ('{"action": {"name": "hotkey", "arguments": "{\\"keys\\": [\\"ctrl\\", \\"s\\"]}"}}',
                                   "", "hotkey"),
    "call expression": ("I'll click it.\nclick(x=10, y=20)", "I'll click it.", "click"),
}


@pytest.mark.parametrize("case", list(PARSES))
def test_parser_accepts_the_usual_shapes(case):
    text, thought, kind = PARSES[case]
    got_thought, action = parse_reply(text, "web")
    assert action.type == kind
    assert got_thought == thought


def test_parser_round_trips_the_canonical_reply():
    action = Action(type="drag", x=1, y=2, x2=300, y2=400)
    thought, parsed = parse_reply(format_reply("move it", action), "web")
    assert (thought, parsed) == ("move it", action)


@pytest.mark.parametrize("text, message", [
    ("I don't know", "no action found"),
    ('{"action": {"type": "click", "x": 5000, "y": 1}}', "less than or equal to 999"),
    ('{"action": {"type": "click"}}', "needs x and y"),
    ('{"action": {"type": "tap", "x": 1, "y": 1}}', "not an action here"),
    ('{"thought": "x", "action": {"type": "click", "x": ', "no action found"),
])
def test_parser_errors_are_fit_to_feed_back(text, message):
    with pytest.raises(ParseError, match=message):
        parse_reply(text, "web")


def test_action_sets_are_per_domain_and_never_merged():
    web, mobile = system_prompt("web"), system_prompt("mobile")
    assert '"type": "click"' in web and '"type": "tap"' not in web
    assert '"type": "tap"' in mobile and '"type": "click"' not in mobile
    terminal = system_prompt("desktop", "terminal")
    assert '"type": "bash"' in terminal and '"type": "click"' not in terminal
    assert "0-999 grid" in web and "0-999 grid" not in terminal
    hybrid = system_prompt("desktop", "hybrid")
    assert '"type": "bash"' in hybrid and '"type": "click"' in hybrid


def turns(n: int) -> list[Turn]:
    return [Turn(f"png{i}".encode(), "image/png", None, f'{{"step": {i}}}', f"did {i}") for i in range(n)]


def images(messages) -> int:
    return sum(1 for m in messages for p in m.parts() if not isinstance(p, str))


def test_context_policies_keep_what_they_promise():
    now = Observed(b"now", "image/png", None)
    history = turns(12)
    full = build_messages(ContextPolicy(kind="full"), "sys", "task", history, now)
    assert images(full) == 13
    last = build_messages(ContextPolicy(kind="last_k", k=3), "sys", "task", history, now)
    assert images(last) == 4 and not any("Earlier steps" in str(m.content) for m in last)
    summary = build_messages(ContextPolicy(kind="summary"), "sys", "task", history, now)
    assert images(summary) == 3
    assert "Step 0: did 0" in str(summary[2].content) and "Step 9: did 9" in str(summary[2].content)


def test_overlapping_windows_change_the_prefix_only_every_k_minus_o_steps():
    policy = ContextPolicy(kind="window", window=10, overlap=2)
    assert [window_start(t, 10, 2) for t in (0, 2, 9, 10, 17, 18)] == [0, 0, 0, 8, 8, 16]
    history = turns(30)
    now = Observed(b"now", "image/png", None)
    prompts = [build_messages(policy, "sys", "task", history[:t], now) for t in range(30)]
    changes = [t for t in range(1, 30) if shared_prefix(prompts[t - 1], prompts[t]) < len(prompts[t - 1]) - 1]
    assert changes == [10, 18, 26]  # every K-O = 8 steps, after the first window
    last_k = [build_messages(ContextPolicy(kind="last_k", k=3), "sys", "task", history[:t], now) for t in range(30)]
    assert sum(shared_prefix(a, b) for a, b in zip(last_k, last_k[1:], strict=False)) < \
        sum(shared_prefix(a, b) for a, b in zip(prompts, prompts[1:], strict=False))


def obs_with(elements: list[dict]) -> Observation:
    return Observation(screenshot=b"x", width=1280, height=720, debug={"elements": elements, "path": "/mail"})


REFERENCE = [{"do": "open", "app": "mail"}, {"do": "click", "id": "send"},
             {"do": "type", "id": "body", "text": "Total 412.50"}, {"do": "click", "id": "send"}]
ELEMENTS = [{"id": "send", "label": "Send", "grid": [900, 100]}, {"id": "body", "label": "Body", "grid": [500, 500]}]


def play(teacher: ScriptedTeacher, steps: int = 12) -> list[dict]:
    out = []
    for i in range(steps):
        reply = teacher.act(TurnInput([], obs_with(ELEMENTS), i))
        try:
            _, action = parse_reply(reply.text, "web")
        except ParseError:
            reply = teacher.act(TurnInput([], obs_with(ELEMENTS), i, retry_error="bad"))
            _, action = parse_reply(reply.text, "web")
        out.append(json.loads(reply.text))
        if action.type in ("terminate", "answer"):
            break
    return out


def test_scripted_teacher_without_noise_follows_the_reference():
    quiet = Noise(misclick=0, skip=0, wrong_value=0, early_stop=0, malformed=0)
    replies = play(ScriptedTeacher(REFERENCE, "web", None, quiet, seed=1, task_id="t"))
    kinds = [r["action"]["type"] for r in replies]
    assert kinds == ["goto", "click", "click", "type", "click", "terminate"]
    assert replies[3]["action"]["text"] == "Total 412.50"
    thought = replies[1]["thought"]
    assert "\u201cSend\u201d" in thought and "mail app" in thought  # what it sees, what it clicks
    assert "send it off" in thought and len(thought.split()) >= 12  # and why


LIST = [{"id": f"row-{i}", "tag": "li", "role": "listitem", "label": f"Invoice {n} from Acme", "grid": [500, 200 + 80 * i],
         "box": [300, 130 + 57 * i, 600, 50]} for i, n in enumerate(("INV-881", "INV-882", "INV-883"))]


def test_scripted_teacher_slips_to_the_neighbouring_row_then_goes_back_and_redoes_it():
    slips = Noise(misclick=1.0, recover=1.0, skip=0, wrong_value=0, early_stop=0, malformed=0, spread=0)
    teacher = ScriptedTeacher([{"do": "click", "label": "Invoice INV-882 from Acme"}], "web", None, slips, seed=3,
                              task_id="t", instruction="Open the Acme invoice INV-882.")
    inbox = Observation(screenshot=b"x", width=1280, height=720, debug={"elements": LIST, "path": ["mail", "inbox"]})
    first = json.loads(teacher.act(TurnInput([], inbox, 0)).text)
    assert first["action"]["type"] == "click" and first["action"]["y"] in (200, 360)  # row 0 or row 2, not row 1
    opened = Observation(screenshot=b"y", width=1280, height=720,
                         debug={"elements": [], "path": ["mail", "inbox", "m1"]})
    back = json.loads(teacher.act(TurnInput([], opened, 1)).text)
    assert back["action"]["type"] == "back" and "wrong" in back["thought"]
    redo = json.loads(teacher.act(TurnInput([], inbox, 2)).text)
    assert redo["action"] == {"type": "click", "x": 500, "y": 280}
    assert [e["event"] for e in teacher.events] == ["mistake", "correction"]


def test_scripted_teacher_types_a_value_from_the_wrong_row_and_fixes_it():
    slips = Noise(misclick=0, recover=1.0, skip=0, wrong_value=1.0, early_stop=0, malformed=0, spread=0)
    rows = [{"id": "amt-1", "label": "Acme 412.50", "grid": [500, 200], "box": [300, 180, 400, 40]},
            {"id": "amt-2", "label": "Bolt 97.10", "grid": [500, 300], "box": [300, 280, 400, 40]},
            {"id": "amount", "tag": "input", "label": "Amount", "grid": [500, 600], "box": [300, 580, 400, 40]}]
    teacher = ScriptedTeacher([{"do": "type", "text": "412.50"}], "web", None, slips, seed=1, task_id="t")
    screen = Observation(screenshot=b"x", width=1280, height=720, debug={"elements": rows, "path": ["bank"]})
    typed = json.loads(teacher.act(TurnInput([], screen, 0)).text)
    assert typed["action"]["type"] == "type" and typed["action"]["text"] == "97.10"  # the other row's amount
    after = [*rows[:2], {**rows[2], "focused": True, "value": "97.10"}]
    shows = Observation(screenshot=b"y", width=1280, height=720, debug={"elements": after, "path": ["bank"]})
    select = json.loads(teacher.act(TurnInput([], shows, 1)).text)
    assert select["action"] == {"type": "hotkey", "keys": ["ctrl", "a"]} and "97.10" in select["thought"]
    retype = json.loads(teacher.act(TurnInput([], shows, 2)).text)
    assert retype["action"] == {"type": "type", "text": "412.50"}


def test_scripted_thoughts_are_sentences_with_reasons():
    quiet = Noise(misclick=0, skip=0, wrong_value=0, early_stop=0, malformed=0)
    words = []
    for seed in range(8):
        replies = play(ScriptedTeacher(REFERENCE, "web", None, quiet, seed=seed, task_id="t",
                                       instruction="Reply to Anna with the total."))
        words += [len(r["thought"].split()) for r in replies]
    assert sum(words) / len(words) >= 15


def test_scripted_teacher_noise_is_seeded_and_varies_between_samples():
    noisy = Noise(misclick=0.3, wrong_value=0.5, skip=0.1, early_stop=0.0, malformed=0.2)
    runs = [json.dumps(play(ScriptedTeacher(REFERENCE, "web", None, noisy, seed=s, task_id="t"))) for s in range(12)]
    again = [json.dumps(play(ScriptedTeacher(REFERENCE, "web", None, noisy, seed=s, task_id="t"))) for s in range(12)]
    assert runs == again
    assert len(set(runs)) > 3


def test_perturbed_values_are_wrong_but_plausible():
    import random

    rng = random.Random(0)
    assert perturb_text("Total 412.50", rng) != "Total 412.50"
    assert perturb_text("Lyon", rng) != "Lyon"
