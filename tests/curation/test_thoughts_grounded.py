"""Offline thoughts that reason: grounded in the frame's facts (what is on screen), in the
reference steps still ahead (what the task needs), 15-60 words, varied, never quoting
noise; the grounding check that holds a model's quotes to the screen."""

from __future__ import annotations

import re
from collections import Counter

from guiforge.curation.consistency import check_consistency, screen_texts
from guiforge.curation.progress import align
from guiforge.curation.relabeler import prompt, relabel_offline
from guiforge.curation.thoughts import StepContext
from guiforge.envs.base import Observation
from guiforge.envs.screen_facts import readable, screen_facts

INBOX = {"path": ["mail", "inbox"], "focus": None,
         "elements": [{"label": "Compose", "role": "button"}, {"label": "Search mail", "role": "searchbox"},
                      *({"label": f"Invoice INV-88{i} from Acme", "role": "listitem"} for i in range(6))],
         "n_elements": 8}
ROW = {"id": "msg-em_0042", "tag": "li", "role": "listitem", "label": "Invoice INV-882 from Acme",
       "box": [300, 300, 600, 50]}
REFERENCE = [{"do": "open", "app": "mail"}, {"do": "click", "id": "msg-em_0042"},
             {"do": "click", "id": "open-attachment-doc_7"}, {"do": "answer", "text": "The tax is 84.00 EUR."}]
CLICK = {"type": "click", "x": 500, "y": 430}


def ctx(i: int = 1, action=CLICK, target=ROW, screen=INBOX) -> StepContext:
    return StepContext("What is the tax on the Acme invoice INV-882? It came by mail.", i, 4, action, target,
                       1280, 800, (), screen, REFERENCE[1], tuple(REFERENCE[2:]), "web")


def test_readable_drops_ocr_noise_and_debug_strings():
    assert readable("en.", ocr=True) is None and readable("| i ll .. Ee", ocr=True) is None
    assert readable("id=None label='Select '") is None and readable("[object Object]") is None
    assert readable("Sort Descending", ocr=True) == "Sort Descending"
    assert readable("  Invoice   INV-882 ") == "Invoice INV-882"


def test_screen_facts_keep_place_labels_focus_and_drop_noise():
    els = [{"label": "Inbox", "role": "link", "box": [0, 0, 9, 9]}, {"label": "id=None label='x'", "box": [0, 0, 9, 9]},
           {"label": "To", "tag": "input", "focused": True, "value": "ana@example.com", "box": [0, 0, 9, 9]}]
    obs = Observation(screenshot=b"x", width=100, height=100,
                      debug={"elements": els, "path": "http://127.0.0.1:8/mail/compose?x=1",
                             "focus": {"editable": True, "label": "To"}})
    facts = screen_facts(obs)
    assert facts["path"] == ["mail", "compose"] and facts["focus"] == "To"
    assert [e["label"] for e in facts["elements"]] == ["Inbox", "To"]
    assert facts["elements"][1]["value"] == "ana@example.com"


def test_a_thought_says_what_is_seen_what_is_left_and_why():
    r = relabel_offline(ctx(), "s1")
    assert r.consistent, r
    t = r.thought
    assert 15 <= len(t.split()) <= 60
    assert "\u201cInvoice INV-882 from Acme\u201d" in t  # the element as the screen names it
    assert "inbox" in t or "6" in t or "entries" in t or "rows" in t or "items" in t  # what is seen
    assert "attachment" in t or "answer" in t  # what the task still needs
    assert "open" in t  # why this row


def test_thoughts_are_varied_and_long_enough_over_many_steps():
    thoughts = [relabel_offline(ctx(i % 4), f"seed{i}").thought for i in range(200)]
    lengths = [len(t.split()) for t in thoughts]
    assert sum(lengths) / len(lengths) >= 20 and min(lengths) >= 15 and max(lengths) <= 60
    skeleton = Counter(re.sub(r"\u201c[^\u201d]*\u201d|\u2018[^\u2019]*\u2019|\d+", "_", t) for t in thoughts)
    assert skeleton.most_common(1)[0][1] / len(thoughts) <= 0.1  # no phrasing dominates


def test_an_unreadable_label_is_never_quoted():
    noisy = {**ROW, "label": "id=None label='Select '"}
    for i in range(30):
        r = relabel_offline(ctx(i % 4, target=noisy), f"s{i}")
        assert r.consistent and "id=" not in r.thought and "\u201c" not in r.thought, r.thought


def test_grounding_rejects_quotes_the_screen_does_not_show():
    shown = screen_texts(INBOX, ROW)
    good = "I'll click \u201cInvoice INV-882 from Acme\u201d; \u201cCompose\u201d is not what I need."
    assert check_consistency(good, CLICK, ROW, shown) is None
    made_up = "I'll click \u201cInvoice INV-882 from Acme\u201d below the \u201cUnread only\u201d filter."
    assert check_consistency(made_up, CLICK, ROW, shown).startswith("grounding:")
    garbage = "I can see \u201cen.\u201d in the open menu, so I'll click \u201cInvoice INV-882 from Acme\u201d."
    assert check_consistency(garbage, CLICK, ROW, None).startswith("grounding:")


def test_progress_follows_the_reference_through_detours():
    steps = [({"type": "goto", "text": "mail"}, None), ({"type": "scroll", "direction": "down"}, None),
             (CLICK, ROW), ({"type": "back"}, None), (CLICK, ROW),
             ({"type": "click"}, {"id": "open-attachment-doc_7"}), ({"type": "answer", "answer": "84"}, None)]
    assert align(REFERENCE, steps) == [0, 0, 1, 1, 1, 2, 3]
    typed = [{"do": "type", "id": "amount", "text": "${total}"}, {"do": "click", "label": "Pay"}]
    assert align(typed, [({"type": "click"}, {"id": "amount"}), ({"type": "type", "text": "97.10"}, None),
                         ({"type": "click"}, {"label": "Pay now"})]) == [0, 0, 1]


def test_the_model_prompt_carries_the_screen_and_what_is_left():
    text = prompt(ctx(), None)[1].parts()[0]
    assert "Still needed after it: open the right attachment; give the answer" in text
    assert "On screen: the mail app's inbox" in text
