"""Desktop references with the mouse (guiforge/teacher/desktop_mouse.py): text read off the
screen by tesseract (guiforge/envs/desktop/ocr.py), a seeded style per task, and a Calc card
whose reference opens Data > Sort... and File > Save by clicking what OCR found, passing its
package gate in real LibreOffice. ``bench/desktop_styles.py`` gates every desktop card in
both styles on the three looks."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from guiforge.envs.desktop.ocr import ScreenText, normalise
from guiforge.envs.kinds import kind_of

SKILLS = Path(__file__).resolve().parents[3] / "skills"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract-ocr")


def _frame(words: list[tuple[str, int, int]], size=(640, 120), font_px=12) -> ScreenText:
    image = Image.new("RGB", size, (240, 240, 240))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), font_px)
    for text, x, y in words:
        draw.text((x, y), text, fill=(20, 20, 20), font=font)
    return ScreenText(image.tobytes("raw", "BGRX"), *size)


def test_normalise_compares_labels_as_a_person_reads_them():
    assert normalise("Sort...") == normalise("sort") == "sort"
    assert normalise("Find & Replace...") == normalise("Find and Replace") == "find and replace"
    assert normalise("Use Excel 2007-365 Format!") == "use excel 2007 365 format"


@needs_tesseract
@pytest.mark.skipif(not FONT.exists(), reason="needs the DejaVu fonts")
def test_small_menu_text_is_found_where_it_was_drawn_and_read_once():
    screen = _frame([("File", 8, 4), ("Edit", 48, 4), ("Data", 96, 4), ("Sort Ascending", 96, 40),
                     ("Sort...", 96, 60)])
    data = screen.find("Data", (0, 0, 640, 24))
    assert data is not None and data.text == "Data"
    x, y, w, h = data.box
    assert 90 <= x <= 100 and 0 <= y <= 8 and 20 <= w <= 40, data.box
    # "Sort..." is the item itself, not "Sort Ascending" above it
    sort = screen.find("Sort...", (80, 30, 300, 60))
    assert sort is not None and normalise(sort.text) == "sort" and sort.box[1] >= 56, sort
    assert screen.find("Insert", (0, 0, 640, 24)) is None
    # the same pixels again (the next frame, the same menu bar): no second OCR run
    again = _frame([("File", 8, 4), ("Edit", 48, 4), ("Data", 96, 4), ("Sort Ascending", 96, 40),
                    ("Sort...", 96, 60)])
    assert again.find("Data", (0, 0, 640, 24)) == data and again.reads == 0
    assert again.text_at(*data.centre) == "Data"  # what a thought can name, from lines read


def test_desktop_tasks_draw_both_styles_and_other_domains_none():
    ids = [f"tsk_{i:04d}" for i in range(200)]
    styles = Counter(kind_of("desktop").presentation(t, 3, "gui").style for t in ids)
    assert set(styles) == {"mouse", "keyboard"} and min(styles.values()) > 60, styles
    assert kind_of("desktop").presentation("tsk_1", 3, "terminal").style is None  # nothing is drawn
    assert {kind_of(d).presentation(t, 3).style for d in ("web", "mobile") for t in ids[:20]} == {None}
    assert kind_of("desktop").presentation("tsk_7", 3, "gui") == kind_of("desktop").presentation("tsk_7", 3, "gui")
    from guiforge.skills.realism import presentation_usage

    usage = presentation_usage([("desktop", kind_of("desktop").presentation(t, 3, "gui").as_dict()) for t in ids])
    assert usage["desktop"]["styles"] == dict(sorted(styles.items()))


def test_a_keyboard_or_unstyled_observation_keeps_the_keyboard_recipe():
    from guiforge.envs.base import Observation
    from guiforge.teacher.reference import ReferenceProgram

    for debug in ({}, {"style": "keyboard"}):
        program = ReferenceProgram([{"do": "save"}], "desktop", "gui")
        keys = []
        while (plan := program.send(Observation(debug=debug))) is not None:
            keys.append("+".join(plan.action.keys or []))
        assert keys == ["ctrl+s", "", "enter"]


@pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("tesseract") is None,
                    reason="needs LibreOffice and tesseract")
def test_a_calc_sort_by_menus_passes_its_package_gate():
    from guiforge.envs import EnvManager, default_factories
    from guiforge.gates.package_gate import PackageGate, env_spec
    from guiforge.presentation import theme_named
    from guiforge.skills.check import load_selected, sample_worlds
    from guiforge.skills.instantiate import instantiate
    from guiforge.tasks.candidates import candidate_row
    from guiforge.tasks.materialize import task_spec
    from guiforge.teacher.reference import ReferenceProgram

    card = load_selected(SKILLS, ["calc.sort_rows"])[0]
    c, world = next((c, w) for w in sample_worlds(4) for c in instantiate(card, w, 1))
    c.presentation = {"theme": theme_named("office-compact").model_dump(), "viewport": [1366, 768],
                      "style": "mouse"}
    row = candidate_row(c)
    spec, reference = task_spec(row, world), json.loads(row["reference_json"])
    manager = EnvManager(default_factories(), max_instances=1)
    try:
        verdict = PackageGate(manager).check(spec, reference, c.variant)
        assert verdict.passed, verdict.reason
        with manager.acquire(env_spec("desktop", c.variant, presentation=spec.presentation)) as lease:
            obs = lease.reset(spec)
            program, clicks = ReferenceProgram(reference, "desktop", c.variant), []
            while (plan := program.send(obs)) is not None:
                if plan.action.type == "click":
                    screen = obs.debug["screen"]
                    from guiforge.envs.actions import to_pixels

                    clicks.append(screen.text_at(*to_pixels(plan.action.x, plan.action.y, obs.width, obs.height)))
                obs = lease.step(plan.action).observation
            assert lease.evaluate().success
    finally:
        manager.close()
    named = [normalise(t or "") for t in clicks]
    assert named[:2] == ["data", "sort"] and named[2:4] == ["file", "save"], clicks
    assert named[4].startswith("use ") and "odf" not in named[4], clicks  # keep the file's format


def test_typing_waits_for_the_dialog_it_is_meant_for():
    """Keys typed before Find and Replace is up land in the document (a busy machine): the
    reference waits a second at a time while the screen lists no such window."""
    from guiforge.envs.base import Observation
    from guiforge.teacher.desktop_mouse import WINDOW_TRIES, DesktopMouse

    class Screen(DesktopMouse):
        def __init__(self, windows):
            self.obs = Observation(debug={"windows": windows} if windows is not None else {})

    document = [{"title": "letter.docx - LibreOffice Writer", "box": [0, 0, 1280, 720]}]
    waits = list(Screen(document)._await_window("Find and Replace"))
    assert len(waits) == WINDOW_TRIES and all(a.type == "wait" and detour for a, _, detour in waits)
    up = [*document, {"title": "Find and Replace", "box": [300, 200, 600, 400]}]
    assert list(Screen(up)._await_window("Find and Replace")) == []
    assert list(Screen(None)._await_window("Find and Replace")) == []  # no window list: nothing to wait on
