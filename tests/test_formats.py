"""Action formats: the corpus of replies in each model family's published format
(tests/formats_corpus/, decoded on every screen size through the family's profile: no
silent misparse, no valid reply refused), codec cases with the exact canonical action or
the exact error, and a round trip of every canonical action of every domain through every
codec and coordinate convention."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from guiforge.envs.actions import ACTION_SETS, Action, to_pixels
from guiforge.harness.formats import (
    COORD_KINDS,
    ModelReply,
    ParseError,
    ToolCall,
    coord_system,
    format_names,
    get_format,
    smart_resize,
)
from guiforge.harness.formats.corpus import Family, judge, load_corpus, run_corpus

WEB = (1280, 800)  # smart-resized (28, default min/max pixels): 1288 x 812
PHONE = (412, 839)  # smart-resized: 420 x 840


def R(text: str = "", calls: list[tuple[str, object]] | None = None, reasoning: str | None = None) -> ModelReply:
    return ModelReply(text, [ToolCall(n, a, f"call_{i}") for i, (n, a) in enumerate(calls or [])], reasoning)


def qwen(args: dict, name: str = "computer_use") -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


# id: (format, domain, coords or None (the format's own), frame, reply, expected thought, action | error)
CORPUS: dict[str, tuple] = {
    # -- guiforge JSON -------------------------------------------------------------------
    "g/json": ("guiforge", "web", None, WEB, '{"thought": "open it", "action": {"type": "click", "x": 120, "y": 48}}',
               "open it", {"type": "click", "x": 120, "y": 48}),
    "g/think-draft-loses": ("guiforge", "web", None, WEB,
                            '<think>maybe {"type": "click", "x": 1, "y": 1}</think>\n'
                            '{"thought": "the button", "action": {"type": "click", "x": 5, "y": 6}}',
                            'maybe {"type": "click", "x": 1, "y": 1}\n\nthe button', {"type": "click", "x": 5, "y": 6}),
    "g/two-actions": ("guiforge", "web", None, WEB,
                      'First {"type": "click", "x": 1, "y": 2} and then {"type": "click", "x": 3, "y": 4}',
                      None, "the reply holds 2 different actions"),
    "g/action-as-string": ("guiforge", "web", None, WEB, '{"action": "terminate", "status": "success"}',
                           "", {"type": "terminate", "status": "success"}),
    "g/unused-field": ("guiforge", "web", None, WEB, '{"action": {"type": "terminate", "status": "success", "x": 3}}',
                       None, "terminate does not use 'x'; it uses status"),
    "g/pixels-on-grid": ("guiforge", "web", None, WEB, '{"action": {"type": "click", "x": 1280, "y": 5}}',
                         None, "x=1280 is outside the grid999 range 0-999"),
    "g/grid1000": ("guiforge", "web", "grid1000", WEB, '{"action": {"type": "click", "x": 250, "y": 750}}',
                   "", {"type": "click", "x": 250, "y": 749}),
    "g/unit-one-is-the-edge": ("guiforge", "web", "unit", WEB, '{"action": {"type": "click", "x": 1.0, "y": 0.1}}',
                               "", {"type": "click", "x": 999, "y": 100}),
    "g/fenced-with-prose": ("guiforge", "web", None, WEB,
                            'Sure.\n```json\n{"thought": "t", "action": {"type": "scroll", "direction": "down", "amount": 2}}\n```',
                            "t", {"type": "scroll", "direction": "down", "amount": 2}),
    "g/truncated": ("guiforge", "web", None, WEB, '{"thought": "x", "action": {"type": "click", "x": ', None,
                    "no action found"),
    "g/reasoning-field": ("guiforge", "web", None, WEB, R('{"action": {"type": "back"}}', reasoning="It was wrong."),
                          "It was wrong.", {"type": "back"}),
    "g/answer-as-text": ("guiforge", "web", None, WEB, '{"action": {"type": "answer", "text": "42 EUR"}}', "",
                         {"type": "answer", "answer": "42 EUR"}),
    "g/answer-disagrees": ("guiforge", "web", None, WEB, '{"action": {"type": "answer", "answer": "1", "text": "2"}}',
                           None, "a different 'text'"),
    "g/keys-string": ("guiforge", "web", None, WEB, 'Thought: save\nAction: {"type": "hotkey", "keys": "ctrl+s"}',
                      "save", {"type": "hotkey", "keys": ["ctrl", "s"]}),
    "g/bad-arguments-json": ("guiforge", "web", None, WEB, '{"name": "click", "arguments": "{x: 1}"}', None,
                             "the arguments of tool call 'click' are not valid JSON"),
    # -- OpenAI function tools -----------------------------------------------------------
    "o/null-content": ("openai_tools", "web", None, WEB, R(None, [("click", '{"x": 10, "y": 20}')]), "",  # type: ignore[arg-type]
                       {"type": "click", "x": 10, "y": 20}),
    "o/reasoning-content": ("openai_tools", "web", None, WEB,
                            R("", [("type", '{"text": "hello"}')], reasoning="The field is focused."),
                            "The field is focused.", {"type": "type", "text": "hello"}),
    "o/invalid-json": ("openai_tools", "web", None, WEB, R("", [("click", '{"x": 10, "y": ')]), None,
                       "the arguments of tool call 'click' are not valid JSON"),
    "o/list-arguments": ("openai_tools", "web", None, WEB, R("", [("click", "[10, 20]")]), None,
                         "must be a JSON object, not list"),
    "o/two-calls": ("openai_tools", "web", None, WEB,
                    R("", [("click", '{"x": 1, "y": 2}'), ("type", '{"text": "a"}')]), None,
                    "the reply holds 2 different actions"),
    "o/same-call-twice": ("openai_tools", "web", None, WEB,
                          R("", [("click", '{"x": 1, "y": 2}'), ("click", '{"y": 2, "x": 1}')]), "",
                          {"type": "click", "x": 1, "y": 2}),
    "o/text-only": ("openai_tools", "web", None, WEB, "I would click the button.", None,
                    "no action found: call exactly one of the tools"),
    "o/unknown-argument": ("openai_tools", "web", None, WEB, R("", [("click", '{"x": 1, "y": 2, "clicks": 2}')]),
                           None, "click does not take 'clicks'"),
    "o/tool-call-in-content": ("openai_tools", "web", None, WEB,
                               'I go back.\n<tool_call>\n{"name": "back", "arguments": {}}\n</tool_call>',
                               "I go back.", {"type": "back"}),
    "o/terminate": ("openai_tools", "web", None, WEB, R("Done.", [("terminate", {"status": "infeasible"})]),
                    "Done.", {"type": "terminate", "status": "infeasible"}),
    "o/pixels-out-of-range": ("openai_tools", "web", "pixels", WEB, R("", [("click", '{"x": 1300, "y": 20}')]), None,
                              "x=1300 is outside the pixels range 0-1279"),
    "o/pixels": ("openai_tools", "web", "pixels", WEB, R("", [("click", '{"x": 640, "y": 400}')]), "",
                 {"type": "click", "x": 500, "y": 500}),
    # -- Anthropic tools and computer use -------------------------------------------------
    "a/thinking-and-text": ("anthropic_tools", "web", None, WEB,
                            R("I'll type it.", [("type", {"text": "Dear Ana"})], reasoning="The reply box is open."),
                            "The reply box is open.\n\nI'll type it.", {"type": "type", "text": "Dear Ana"}),
    "a/call-tool": ("anthropic_tools", "tools", None, None,
                    R("", [("call_tool", {"name": "search", "arguments": {"q": "tax"}})]), "",
                    {"type": "call_tool", "text": '{"name": "search", "arguments": {"q": "tax"}}'}),
    "c/left-click": ("anthropic_computer", "web", None, WEB,
                     R("", [("computer", {"action": "left_click", "coordinate": [640, 400]})]), "",
                     {"type": "click", "x": 500, "y": 500}),
    "c/key-combo": ("anthropic_computer", "desktop", None, WEB, R("", [("computer", {"action": "key", "text": "ctrl+s"})]),
                    "", {"type": "hotkey", "keys": ["ctrl", "s"]}),
    "c/scroll": ("anthropic_computer", "web", None, WEB,
                 R("", [("computer", {"action": "scroll", "coordinate": [640, 400], "scroll_direction": "down",
                                      "scroll_amount": 5})]), "",
                 {"type": "scroll", "x": 500, "y": 500, "direction": "down", "amount": 5}),
    "c/bash": ("anthropic_computer", "desktop", None, None, R("", [("bash", {"command": "ls -la"})]), "",
               {"type": "bash", "text": "ls -la"}),
    "c/drag-needs-start": ("anthropic_computer", "web", None, WEB,
                           R("", [("computer", {"action": "left_click_drag", "coordinate": [1, 2]})]), None,
                           "left_click_drag needs 'start_coordinate'"),
    "c/screenshot-is-a-look": ("anthropic_computer", "web", None, WEB,
                               R("", [("computer", {"action": "screenshot"})]), "", {"type": "wait", "amount": 0}),
    "c/unknown-action": ("anthropic_computer", "web", None, WEB, R("", [("computer", {"action": "teleport"})]), None,
                         "computer action 'teleport' does not exist"),
    # -- OpenAI computer use (Responses API) ----------------------------------------------
    "x/click": ("openai_computer", "web", None, WEB,
                R("", [("computer", {"action": {"type": "click", "button": "left", "x": 640, "y": 400}})]), "",
                {"type": "click", "x": 500, "y": 500}),
    "x/keypress": ("openai_computer", "desktop", None, WEB,
                   R("", [("computer", {"action": {"type": "keypress", "keys": ["CTRL", "S"]}})]), "",
                   {"type": "hotkey", "keys": ["ctrl", "s"]}),
    "x/batch": ("openai_computer", "web", None, WEB,
                R("", [("computer", {"actions": [{"type": "click", "button": "left", "x": 1, "y": 1},
                                                 {"type": "type", "text": "a"}]})]), None,
                "holds 2 different actions; make one action per turn"),
    # -- Qwen-VL computer_use / mobile_use -------------------------------------------------
    "q/left-click-resized": ("qwen_vl", "web", None, WEB, qwen({"action": "left_click", "coordinate": [644, 406]}),
                             "", {"type": "click", "x": 500, "y": 500}),
    "q/think-first": ("qwen_vl", "web", None, WEB,
                      "<think>The Send button is at the bottom.</think>\n" + qwen({"action": "left_click",
                                                                                  "coordinate": [0, 811]}),
                      "The Send button is at the bottom.", {"type": "click", "x": 0, "y": 999}),
    "q/mobile-back": ("qwen_vl", "mobile", None, PHONE, qwen({"action": "system_button", "button": "Back"}, "mobile_use"),
                      "", {"type": "back"}),
    "q/mobile-click": ("qwen_vl", "mobile", None, PHONE, qwen({"action": "click", "coordinate": [210, 420]}, "mobile_use"),
                       "", {"type": "tap", "x": 501, "y": 500}),
    "q/malformed": ("qwen_vl", "web", None, WEB, '<tool_call>\n{"name": "computer_use", "arguments": {"action": }\n</tool_call>',
                    None, "a <tool_call> block is not valid JSON"),
    "q/terminate": ("qwen_vl", "web", None, WEB, qwen({"action": "terminate", "status": "success"}), "",
                    {"type": "terminate", "status": "success"}),
    "q/key-combo": ("qwen_vl", "desktop", None, WEB, qwen({"action": "key", "keys": ["ctrl", "c"]}), "",
                    {"type": "hotkey", "keys": ["ctrl", "c"]}),
    "q/scroll-down": ("qwen_vl", "web", None, WEB, qwen({"action": "scroll", "pixels": -5}), "",
                      {"type": "scroll", "direction": "down", "amount": 5}),
    "q/native-null-content": ("qwen_vl_tools", "web", None, WEB,
                              R(None, [("computer_use", '{"action": "double_click", "coordinate": [644, 406]}')]),  # type: ignore[arg-type]
                              "", {"type": "double_click", "x": 500, "y": 500}),
    "q/qwen3-grid1000": ("qwen_vl", "web", "grid1000", WEB, qwen({"action": "left_click", "coordinate": [250, 750]}),
                         "", {"type": "click", "x": 250, "y": 749}),
    "q/two-calls": ("qwen_vl", "web", None, WEB, qwen({"action": "left_click", "coordinate": [1, 1]}) + "\n"
                    + qwen({"action": "left_click", "coordinate": [9, 9]}), None, "the reply holds 2 different actions"),
    "q/wrong-tool-on-phone": ("qwen_vl", "mobile", None, PHONE, qwen({"action": "left_click", "coordinate": [1, 1]}),
                              None, "there is no tool 'computer_use'; call mobile_use"),
    # -- UI-TARS ---------------------------------------------------------------------------
    "u/click": ("uitars", "web", None, WEB, "Thought: The Send button.\nAction: click(start_box='(644,406)')",
                "The Send button.", {"type": "click", "x": 500, "y": 500}),
    "u/box-tokens": ("uitars", "web", None, WEB,
                     "Thought: open it\nAction: left_double(start_box='<|box_start|>(644,406)<|box_end|>')",
                     "open it", {"type": "double_click", "x": 500, "y": 500}),
    "u/point": ("uitars", "web", None, WEB, "Thought: here\nAction: click(point='<point>644 406</point>')", "here",
                {"type": "click", "x": 500, "y": 500}),
    "u/type-newline": ("uitars", "web", None, WEB, "Thought: type and submit\nAction: type(content='hello\\n')",
                       "type and submit", {"type": "type", "text": "hello\n"}),
    "u/hotkey": ("uitars", "desktop", None, WEB, "Thought: copy\nAction: hotkey(key='ctrl c')", "copy",
                 {"type": "hotkey", "keys": ["ctrl", "c"]}),
    "u/finished-answer": ("uitars", "web", None, WEB, "Thought: found it\nAction: finished(content='42 EUR')",
                          "found it", {"type": "answer", "answer": "42 EUR"}),
    "u/box-centre": ("uitars", "web", None, WEB, "Thought: t\nAction: click(start_box='(600,400,688,412)')", "t",
                     {"type": "click", "x": 500, "y": 500}),
    "u/uitars1-grid1000": ("uitars", "web", "grid1000", WEB, "Thought: t\nAction: click(start_box='(250,750)')", "t",
                           {"type": "click", "x": 250, "y": 749}),
    "u/unknown": ("uitars", "web", None, WEB, "Thought: t\nAction: teleport(start_box='(1,1)')", None,
                  "unknown action teleport(...)"),
    "u/mobile-back": ("uitars", "mobile", None, PHONE, "Thought: back out\nAction: press_back()", "back out",
                      {"type": "back"}),
    "u/unescaped-quote": ("uitars", "web", None, WEB, "Thought: t\nAction: type(content='it's done')", "t",
                          {"type": "type", "text": "it's done"}),
    "u/reflection-and-thinking": ("uitars", "web", None, WEB,
                                  "<think>two options</think>Reflection: it failed\nAction_Summary: retry\n"
                                  "Action: click(start_box='(644,406)')",
                                  "two options\n\nit failed\nAction_Summary: retry", {"type": "click", "x": 500, "y": 500}),
    "u/out-of-range": ("uitars", "web", None, WEB, "Thought: t\nAction: click(start_box='(1300,10)')", None,
                       "x=1300 is outside the resized range 0-1287"),
    # -- pyautogui (Aguvis, Smol2Operator) ----------------------------------------------------
    "p/fenced": ("pyautogui", "web", None, WEB, "Click Send.\n```python\npyautogui.click(x=0.1, y=0.9)\n```",
                 "Click Send.", {"type": "click", "x": 100, "y": 899}),
    "p/aguvis-recipient": ("pyautogui", "web", None, WEB,
                           "Thought: type the name<|im_end|>\n<|im_start|>assistant<|recipient|>os\n"
                           "pyautogui.write(message='Ana')", "type the name<|im_end|>", {"type": "type", "text": "Ana"}),
    "p/smol-code": ("pyautogui", "web", None, WEB, "<think>the link</think>\n<code>\nclick(x=0.1, y=0.9)\n</code>",
                    "the link", {"type": "click", "x": 100, "y": 899}),
    "p/hotkey-positional": ("pyautogui", "desktop", None, WEB, "```python\npyautogui.hotkey('ctrl', 's')\n```", "",
                            {"type": "hotkey", "keys": ["ctrl", "s"]}),
    "p/out-of-range": ("pyautogui", "web", None, WEB, "```python\npyautogui.click(x=1.2, y=0.5)\n```", None,
                       "x=1.2 is outside the unit range 0-1"),
    "p/swipe": ("pyautogui", "mobile", None, PHONE,
                "Scroll the list.\n```python\nmobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])\n```",
                "Scroll the list.", {"type": "swipe", "x": 500, "y": 799, "x2": 500, "y2": 200}),
    "p/two-lines": ("pyautogui", "web", None, WEB,
                    "```python\npyautogui.click(x=0.1, y=0.1)\npyautogui.write(message='a')\n```", None,
                    "the reply holds 2 different actions"),
    "p/scroll-clicks": ("pyautogui", "web", None, WEB, "```python\npyautogui.scroll(-3)\n```", "",
                        {"type": "scroll", "direction": "down", "amount": 3}),
    "p/not-in-domain": ("pyautogui", "web", None, WEB, "```python\nmobile.home()\n```", None,
                        "'home' is not an action here"),
}


def test_the_corpus_covers_every_format():
    assert len(CORPUS) >= 40
    assert {c[0] for c in CORPUS.values()} == set(format_names())


@pytest.mark.parametrize("case", list(CORPUS))
def test_corpus_reply_decodes_exactly(case):
    name, domain, coords, frame, reply, thought, expected = CORPUS[case]
    variant = "hybrid" if domain == "desktop" else None
    codec = get_format(name)
    if isinstance(expected, str):
        with pytest.raises(ParseError) as err:
            codec.decode(reply, domain, variant, frame=frame, coords=coords)
        assert expected in str(err.value), str(err.value)
        return
    got_thought, action = codec.decode(reply, domain, variant, frame=frame, coords=coords)
    assert action == Action(**expected)
    assert got_thought == thought


FAMILIES = load_corpus(Path(__file__).parent / "formats_corpus")


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_published_replies_decode_on_every_screen(family):
    """Every reply of the family's corpus, on every screen size of its domain, decodes to
    the action it means (its point within rounding of the meant one) or is refused with the
    reason written down: no silent misparse, no valid reply refused."""
    outcomes = run_corpus([family])
    wrong = [o for o in outcomes if o.kind not in ("exact", "refused")]
    assert not wrong, "\n".join(f"{o.case} @ {o.screen}: {o.kind}: {o.detail}" for o in wrong[:20])
    assert len({o.case for o in outcomes}) == len(family.cases) >= 15


def test_the_corpus_covers_the_profiles_and_every_screen():
    from guiforge.models.profiles import PROFILES

    assert {f.profile for f in FAMILIES} >= {"claude-computer-use", "qwen3-vl", "qwen2.5-vl", "ui-tars-1.5"}
    assert {f.profile for f in FAMILIES} <= set(PROFILES)
    for family in FAMILIES:
        domains = {c.domain for c in family.cases}
        assert {"web", "mobile"} <= domains, family.name


def test_without_its_image_sizing_claude_clicks_drift_toward_the_top_left():
    """What the claude-computer-use profile fixes: Anthropic shrinks a 1920x1080 screenshot
    to 1429x804 and Claude answers in those pixels; read as full-size pixels, every click
    lands at 0.74 of where it was meant."""
    family = next(f for f in FAMILIES if f.profile == "claude-computer-use")
    bare = Family(family.name, family.profile, family.screens, family.cases, family.model)
    bare.config = lambda: family.config().model_copy(update={"image_resize": "none"})  # type: ignore[method-assign]
    outcomes = [judge(bare, c, (1920, 1080)) for c in family.cases if c.points and c.expect]
    assert sum(o.kind == "silent_misparse" for o in outcomes) >= len(outcomes) - 2  # (0, 0) stays where it was
    assert all(judge(family, c, (1920, 1080)).kind == "exact" for c in family.cases if c.points and c.expect)


def test_smart_resize_matches_qwen():
    assert smart_resize(800, 1280) == (812, 1288)
    assert smart_resize(839, 412) == (840, 420)
    assert smart_resize(2202, 1082, max_pixels=1280 * 28 * 28) == (1428, 700)  # shrunk under max_pixels
    h, w = smart_resize(2202, 1082, max_pixels=1280 * 28 * 28)
    assert h * w <= 1280 * 28 * 28 and h % 28 == 0 and w % 28 == 0


# -- round trip ---------------------------------------------------------------------------
TEXTS = ["hello", "it's \"quoted\"\nand a new line", "ls -la | wc -l", "Zoë's café — 12,50 €", "a\\b"]
KEYS = ["enter", "tab", "escape", "backspace", "f2", "up", "pagedown", "+", "a"]


def canonical(kind: str, rng: random.Random) -> Action:
    def p() -> int:
        return rng.choice([0, 999, rng.randint(0, 999)])

    f: dict = {"type": kind}
    if kind in ("click", "double_click", "right_click", "tap", "long_press"):
        f |= {"x": p(), "y": p()}
    elif kind in ("drag", "swipe"):
        f |= {"x": p(), "y": p(), "x2": p(), "y2": p()}
    elif kind == "scroll":
        f |= {"direction": rng.choice(["up", "down", "left", "right"]), "amount": rng.randint(1, 10)}
        if rng.random() < 0.7:
            f |= {"x": p(), "y": p()}
    elif kind in ("type", "goto", "bash"):
        f["text"] = rng.choice(TEXTS)
    elif kind == "key":
        f["keys"] = [rng.choice(KEYS)]
    elif kind == "hotkey":
        f["keys"] = ["ctrl", rng.choice(["s", "a", "shift"])] + (["t"] if rng.random() < 0.3 else [])
    elif kind == "open_app":
        f["app"] = rng.choice(["mail", "calendar"])
    elif kind == "wait" and rng.random() < 0.5:
        f["amount"] = rng.randint(1, 5)
    elif kind == "answer":
        f["answer"] = rng.choice(TEXTS)
    elif kind == "terminate":
        f["status"] = rng.choice(["success", "failure", "infeasible"])
    elif kind == "call_tool":
        f["text"] = json.dumps({"name": "search_tool", "arguments": {"query": rng.choice(TEXTS), "limit": 3,
                                                                     "exact": True, "tags": ["a"]}})
    return Action(**f)


UNSAID = {("openai_computer", "wait"): ("amount",)}  # OpenAI's wait takes no duration
FRAMES = [(1280, 800), (412, 839), (1082, 2202), (640, 480), (333, 777), (1920, 1080)]


@pytest.mark.parametrize("name", format_names())
def test_every_canonical_action_round_trips_through_every_convention(name):
    codec = get_format(name)
    rng = random.Random(name)
    checked = 0
    for key, kinds in ACTION_SETS.items():
        domain, _, variant = key.partition("_")
        for kind in sorted(kinds):
            for kind_coords in COORD_KINDS:
                for frame in FRAMES:
                    action = canonical(kind, rng)
                    coords = coord_system(kind_coords, frame)
                    encoded = codec.encode("Next I act.", action, frame=frame, coords=kind_coords, domain=domain)
                    thought, back = codec.decode(encoded, domain, variant or None, frame=frame, coords=kind_coords)
                    assert thought == "Next I act."
                    a, b = action.model_dump(exclude_none=True), back.model_dump(exclude_none=True)
                    for unsaid in UNSAID.get((name, kind), ()):  # the format has no word for it
                        a.pop(unsaid, None)
                    for xk, yk in (("x", "y"), ("x2", "y2")):
                        if xk in a:
                            pa = to_pixels(a.pop(xk), a.pop(yk), *frame)
                            pb = to_pixels(b.pop(xk), b.pop(yk), *frame)
                            assert max(abs(pa[0] - pb[0]), abs(pa[1] - pb[1])) <= coords.tolerance_px(), \
                                (name, kind_coords, frame, action, back, encoded)
                    assert a == b, (name, kind_coords, action, back, encoded)
                    checked += 1
    assert checked > 500


@pytest.mark.parametrize("name", format_names())
def test_every_format_renders_each_domains_set(name):
    codec = get_format(name)
    for key in ACTION_SETS:
        domain, _, variant = key.partition("_")
        rendered = codec.render(domain, variant or None, coord_system("pixels" if domain != "tools" else "grid999", WEB))
        assert rendered.text
        if codec.native_tools:
            assert rendered.tools and all("name" in t or "type" in t for t in rendered.tools)


def test_registry_is_open():
    assert get_format("guiforge.harness.formats.uitars:UITars").name == "uitars"
    with pytest.raises(ValueError, match="unknown action format 'nope'"):
        get_format("nope")
    with pytest.raises(ValueError, match="no module named 'guiforge.nowhere'"):
        get_format("guiforge.nowhere:Thing")
    with pytest.raises(ValueError, match="not an ActionFormat subclass"):
        get_format("guiforge.harness.formats:get_format")


WRONG_TYPES = [None, "abc", -1, 1e9, [1], {"a": 1}, True, "", [None, None], float("nan")]


@pytest.mark.parametrize("name", format_names())
def test_broken_replies_are_parse_errors_never_exceptions(name):
    """Truncated replies and arguments of the wrong type: the codec itself answers with a
    ParseError to feed back (or an action), nothing else."""
    codec = get_format(name)
    coords = codec.coords(None, WEB)
    rng = random.Random(f"broken-{name}")
    for key, kinds in ACTION_SETS.items():
        domain, _, variant = key.partition("_")
        for kind in sorted(kinds):
            encoded = codec.encode("t", canonical(kind, rng), frame=WEB, domain=domain)
            reply = codec.as_reply(encoded)
            variants = [ModelReply(reply.text[:cut], reply.tool_calls, None)
                        for cut in sorted(rng.sample(range(len(reply.text) + 1), min(6, len(reply.text) + 1)))]
            for literal in ("None", "'x'", "[1]", "{}", "True", "-5", "1e400", "(1, 2)"):  # a wrong value in text
                variants.append(ModelReply(re.sub(r"-?\d+(\.\d+)?", literal, reply.text, count=rng.randint(1, 3))))
                variants.append(ModelReply(re.sub(r"'[^']*'", literal, reply.text, count=1)))
            for call in reply.tool_calls:
                args = json.loads(call.arguments) if isinstance(call.arguments, str) else dict(call.arguments or {})
                for field in list(args) or ["x"]:
                    for value in rng.sample(WRONG_TYPES, 4):
                        broken = ToolCall(call.name, {**args, field: value})
                        variants.append(ModelReply(reply.text, [broken]))
                cut = json.dumps(args)
                variants.append(ModelReply("", [ToolCall(call.name, cut[:rng.randrange(len(cut))])]))
            for broken in variants:
                try:  # noqa: SIM105
                    codec.decode_reply(broken, domain, variant or None, coords)
                except ParseError:
                    pass
                except Exception as exc:  # noqa: BLE001 - the point of the test
                    raise AssertionError(f"{name}: {broken!r} raised {type(exc).__name__}: {exc}") from exc
