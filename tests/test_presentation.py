"""Task presentations (guiforge/presentation.py): seeded per task, recorded as plain JSON,
several themes and viewports per drawn domain, none for tools; and the instruction voice
(guiforge/skills/voice.py) with the realism figures over it (guiforge/skills/realism.py)."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

from guiforge.envs.kinds import kind_of
from guiforge.presentation import (
    DESKTOP_THEMES,
    TERMINAL_GRIDS,
    TERMINAL_THEMES,
    THEMES,
    VIEWPORTS,
    presentation_of,
)
from guiforge.skills.realism import (
    distinct_templates,
    instruction_template,
    presentation_usage,
    template_summary,
)
from guiforge.skills.voice import speak, typo


def test_presentations_are_seeded_varied_and_recorded():
    ids = [f"tsk_{i:04d}" for i in range(120)]
    for domain in ("web", "mobile", "desktop"):
        drawn = [kind_of(domain).presentation(t, 7) for t in ids]
        assert drawn == [kind_of(domain).presentation(t, 7) for t in ids]  # a pure function
        assert drawn != [kind_of(domain).presentation(t, 8) for t in ids]  # the seed matters
        viewports = Counter(p.viewport for p in drawn)
        assert set(viewports) == set(VIEWPORTS[domain]) and len(viewports) >= 3
        for p in drawn:  # JSON and back, as tasks.presentation_json holds it
            assert presentation_of(json.dumps(p.as_dict())) == p
        themes = Counter(p.theme.name for p in drawn)
        assert len(themes) >= 3
        if domain == "desktop":  # LibreOffice's looks; no web distractors over it
            assert set(themes) == {t.name for t in DESKTOP_THEMES} and not any(p.distractors for p in drawn)
            continue
        assert {t.mode for t in THEMES} == {"light", "dark"}
        kinds = Counter(d.kind for p in drawn for d in p.distractors)
        assert kinds["dialog"] and kinds["toast"] and (kinds["cookie"] > 0) == (domain == "web")
        assert any(not p.distractors for p in drawn)  # some tasks are left in peace
    assert kind_of("tools").presentation("tsk_1", 7).as_dict() == {"distractors": []}
    # a terminal task: a window of 80x24, 100x30 or 120x36 cells in one of the terminal themes
    terminals = [kind_of("desktop").presentation(t, 7, "terminal") for t in ids]
    assert {(p.terminal.cols, p.terminal.rows) for p in terminals} == set(TERMINAL_GRIDS)
    assert {p.theme.name for p in terminals} == {t.name for t in TERMINAL_THEMES}
    assert all(p.viewport is None and not p.distractors for p in terminals)
    assert presentation_of(json.dumps(terminals[0].as_dict())) == terminals[0]
    usage = presentation_usage([("web", json.dumps(kind_of("web").presentation(t, 7).as_dict())) for t in ids])
    assert usage["web"]["tasks"] == 120 and len(usage["web"]["themes"]) >= 3 and len(usage["web"]["viewports"]) >= 3


def test_every_web_task_in_a_browser_every_phone_with_its_bars_and_palettes_past_light_and_dark():
    ids = [f"tsk_{i:04d}" for i in range(200)]
    web = [kind_of("web").presentation(t, 3) for t in ids]
    phones = [kind_of("mobile").presentation(t, 3) for t in ids]
    assert all(p.browser is not None and p.phone is None for p in web)
    assert len({p.browser.tabs for p in web}) >= 4 and len({p.browser.offset for p in web}) >= 4
    assert all(p.phone is not None and p.browser is None for p in phones)
    assert {p.phone.nav for p in phones} == {"gesture", "buttons"} and len({p.phone.battery for p in phones}) > 20
    assert all(p.browser is None and p.phone is None for p in (kind_of("desktop").presentation(t, 3) for t in ids))
    palettes = Counter(p.theme.palette for p in web + phones)
    assert {"sand", "slate", "nord", "contrast"} <= set(palettes) and palettes[None] > len(ids)
    usage = presentation_usage([("web", json.dumps(p.as_dict())) for p in web] +
                               [("mobile", json.dumps(p.as_dict())) for p in phones])
    assert sum(usage["web"]["screens"].values()) == len(ids)
    assert set(usage["mobile"]["screens"]) == {"phone-gesture", "phone-buttons"}


CORE = 'Reply to Ana Lopez\'s email "Invoice 7 for May" and tell them the total of ana@example.com\'s 412,50 € invoice.'


def test_the_voice_keeps_what_the_gates_read():
    protected = ['"Invoice 7 for May"', "ana@example.com", "412,50", "Ana Lopez"]
    voices = Counter()
    texts = set()
    for i in range(300):
        text, voice = speak(CORE, random.Random(i), "expense_report")
        assert (text, voice) == speak(CORE, random.Random(i), "expense_report")
        assert all(p in text for p in protected), text
        voices.update(voice.split("+"))
        texts.add(text)
    assert {"plain", "polite", "context", "terse", "typo", "closer"} <= set(voices)
    assert len(texts) >= 60
    # a typo swaps two letters of one plain word, never a quoted title, an address or a number
    for i in range(100):
        changed = typo(CORE, random.Random(i))
        assert changed != CORE and sorted(changed) == sorted(CORE)
        assert all(p in changed for p in protected)
    # "could you" only wraps an instruction, never a sentence that starts with a name
    text, _ = speak('Ana sent you "Invoice 7". Check it.', random.Random(1), "")
    assert not re.search(r"(?i)could you ana", text)


def test_templates_mask_what_the_world_filled_in():
    a = instruction_template('Reply to Ana Lopez about "Invoice 7" for 412.50 € in notes.txt.')
    b = instruction_template('Reply to Tom Berg about "Flat deposit" for 9 € in plan.txt.')
    assert a == b == "Reply to <name> about <q> for <n>€ in <f>."
    per_skill = distinct_templates([("s", "Open the mail."), ("s", "Open the mail."), ("s", "Could you open it?"),
                                    ("t", "Hi.")])
    assert per_skill["s"] == {"tasks": 3, "templates": 2, "ratio": 0.667}
    summary = template_summary(per_skill)
    assert summary["skills_judged"] == 1 and summary["skills_at_0_8"] == 0 and summary["tasks"] == 4


def test_desktop_themes_are_libreoffice_profiles_of_their_own():
    from xml.etree import ElementTree

    from guiforge.envs.desktop.profile import registry_xml, template_key, theme_settings
    from guiforge.gates.package_gate import env_spec

    keys = {t.name: template_key(1366, 768, theme_settings(t.name)) for t in DESKTOP_THEMES}
    assert len(set(keys.values())) == 3 and template_key(1366, 768) != keys["office-light"]
    assert template_key(1366, 768, []) == template_key(1366, 768)  # the old default template is kept
    ns = "{http://openoffice.org/2001/registry}"
    root = ElementTree.fromstring(registry_xml("7.4", 0, theme_settings("office-sepia")).encode())
    items = [(i.get(f"{ns}path"), [p.get(f"{ns}name") for p in i]) for i in root]
    scheme = next(n for n, (path, _) in enumerate(items) if path.endswith("/ColorSchemes"))
    current = next(n for n, (_, names) in enumerate(items) if "CurrentColorScheme" in names)
    assert scheme < current  # the scheme exists before it is chosen
    compact = ElementTree.fromstring(registry_xml("7.4", 0, theme_settings("office-compact")).encode())
    assert any(p.get(f"{ns}name") == "SymbolSet" and p[0].text == "0" for i in compact for p in i)
    # a GUI desktop task's look picks its pool; a terminal's is drawn on reset, in any instance
    pres = kind_of("desktop").presentation("tsk_9", 7, "gui").as_dict()
    spec = env_spec("desktop", "gui", presentation=pres)
    assert spec.viewport == tuple(pres["viewport"]) and spec.theme == pres["theme"]["name"]
    assert env_spec("desktop", "terminal", presentation=pres).theme is None
    assert env_spec("web", None, presentation=pres).viewport is None  # pages resize on reset instead


def test_a_harder_variant_is_smaller_denser_and_shows_every_distractor():
    from guiforge.presentation import KINDS, VIEWPORTS

    for domain in ("web", "mobile", "desktop"):
        hard = kind_of(domain).harder_presentation("tsk_x", 7)
        assert hard.viewport == min(VIEWPORTS[domain], key=lambda v: v[0] * v[1])
        assert hard.theme.density == "compact"
        assert sorted(d.kind for d in hard.distractors) == sorted(KINDS.get(domain, ()))
        assert hard == kind_of(domain).harder_presentation("tsk_x", 7)  # seeded, like every presentation
