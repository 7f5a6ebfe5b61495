"""Desktop grounding rows: LibreOffice screens (a Calc workbook, then with a menu dropped),
OCR boxes kept only when checked, rows exported and loaded by ``datasets``; and the pure
parts (neighbour positions, a menu's rows, the words a screen can say) on small inputs."""

from __future__ import annotations

import hashlib
import io
import json
import shutil

import datasets
import pytest
from openpyxl import Workbook

from guiforge.envs import EnvManager
from guiforge.envs.base import TaskSpec
from guiforge.envs.desktop.grounding_scan import _menu_rows, known_words, labels, same_value
from guiforge.envs.desktop.ocr import TextLine
from guiforge.envs.kinds_builtin import DESKTOP
from guiforge.envs.web.grounding_scan import OK
from guiforge.export.grounding import export_grounding
from guiforge.grounding.desktop import place, refusal_pools, render_desktop_task
from guiforge.grounding.rows import counts, screen_rows
from guiforge.grounding.screens import Screen
from guiforge.lake.store import Lake
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.presentation import Presentation

RUN = "run-desktop-grounding"
CELLS = (["Region", "Units", "Price"], ["North", 12, 40], ["South", 30, 25], ["Total", 42, 65])


def el(role, text, box, status=OK, window="document"):
    return {"role": role, "text": text, "name": text, "box": list(box), "status": status, "window": window}


# -- pure parts ------------------------------------------------------------------------------

def test_a_neighbour_places_an_element_only_when_it_was_checked():
    file, edit, view = el("menu", "File", (6, 4, 19, 12)), el("menu", "Edit", (37, 4, 22, 12)), \
        el("menu", "View", (70, 5, 26, 11), status="hidden")
    insert = el("menu", "Insert", (108, 5, 33, 11))
    bar = [file, edit, view, insert]
    assert place(file, bar) == "the first menu in the menu bar"
    assert place(edit, bar) == "the menu right of “File”"
    # View failed its checks: Insert is placed by nothing (an ordinal over checked ones would lie)
    assert place(insert, bar) is None
    a, b = el("gridcell", "Region", (39, 128, 50, 15)), el("gridcell", "North", (39, 148, 40, 12))
    far = el("gridcell", "Total", (38, 208, 36, 12))
    assert place(b, [a, b, far]) == "the cell below “Region”"
    assert place(far, [a, b, far]) is None  # rows apart: an empty row may lie between


def test_a_menu_row_is_one_item_without_its_shortcut():
    rows = _menu_rows([TextLine("Repe", (67, 65, 25, 9)), TextLine("at", (95, 65, 9, 6)),
                       TextLine("Ctrl+Shift+Y", (150, 65, 70, 9)), TextLine("Cut", (66, 89, 20, 11))])
    assert [(r.text, r.box) for r in rows] == [("Repe at", (67, 65, 37, 9)), ("Cut", (66, 89, 20, 11))]


@pytest.mark.skipif(not labels(), reason="LibreOffice's registry (share/registry/*.xcd) is not installed")
def test_only_words_libreoffice_or_the_document_has_are_kept():
    item = el("menuitem", "Save As..", (35, 228, 60, 11))
    assert known_words(item, None) and item["text"] == "Save As..." and item["name"] == "Save As"
    assert not known_words(el("menuitem", "Warming", (0, 0, 40, 11)), None)  # "Warning" misread
    assert known_words(el("status", "Page 1 of 3", (0, 0, 50, 10)), None)
    assert not known_words(el("status", "Page lofl", (0, 0, 50, 10)), None)
    doc = "quarterly memo revenue grew in the north region"
    assert known_words(el("paragraph", "Revenue grew in the North region.", (0, 0, 200, 12)), doc)
    assert not known_words(el("paragraph", "Revenue gre", (0, 0, 80, 12)), doc)  # a line cut short
    assert same_value("1,234.50", "1234.5") and same_value("North", "North") and not same_value("Ql", "Q1")


def test_desktop_refusals_name_items_of_menus_the_screen_does_not_show():
    def screen(sid, via, items):
        elements = [{**el("menuitem", t, (40, 30 + 20 * i, 60, 11)), "id": f"menuitem-{i}"}
                    for i, t in enumerate(items)]
        return Screen(sid, "t", None, "desktop", b"", "png", 1280, 720,
                      {"path": "/calc", "text": " ".join(items), "elements": elements}, Presentation(), via=via,
                      elements=elements)

    start, file, edit = screen("s0", None, []), screen("s1", "File", ["Save As"]), screen("s2", "Edit", ["Paste"])
    pools = refusal_pools([start, file, edit])
    assert {p[0] for p in pools["s0"]} == {"Save As", "Paste"}
    assert {p[0] for p in pools["s1"]} == {"Paste"}  # never an item of the menu it shows
    assert all(role == "menu item" and app == "calc" for _, role, app in pools["s2"])


# -- a real LibreOffice ---------------------------------------------------------------------

NEEDED = ("Xvfb", "xdotool", "bwrap", "soffice", "tesseract")


@pytest.fixture(scope="module")
def rendered():
    """A Calc workbook's start screen and one screen with a menu dropped, from one LibreOffice."""
    missing = [tool for tool in NEEDED if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"desktop grounding needs {', '.join(missing)}")
    wb = Workbook()
    wb.active.title = "Sales"
    for row in CELLS:
        wb.active.append(row)
    data = io.BytesIO()
    wb.save(data)
    spec = TaskSpec(task_id="t-desk", domain="desktop", apps=["calc"], instruction="look",
                    setup={"files": {"sales.xlsx": data.getvalue()}, "open": "sales.xlsx"})
    with EnvManager({"desktop": DESKTOP.make}, max_instances=1) as manager, \
            manager.acquire(DESKTOP.spec("gui")) as lease:
        screens = render_desktop_task(lease, spec, 2, "7", 4)
    pools = refusal_pools(screens)
    rows = {s.screen_id: screen_rows(s, pools[s.screen_id], 2, False, "7") for s in screens}
    return screens, rows


def test_libreoffice_screens_give_rows_whose_boxes_passed_their_checks(rendered):
    screens, rows = rendered
    assert len(screens) == 2 and screens[0].via is None and screens[1].via
    values = {str(v) for row in CELLS for v in row}
    for s in screens:
        emitted = [r for r in rows[s.screen_id] if not r["refusal"]]
        assert emitted and {r["element_id"] for r in emitted} <= {e["id"] for e in s.elements}
        for r in emitted:
            x, y, w, h = r["bbox"]
            assert 0 <= x <= x + w <= s.width and 0 <= y <= y + h <= s.height
            assert x <= r["point_x"] < x + w and y <= r["point_y"] < y + h
            if r["element_role"] == "cell":
                assert r["element_name"] in values  # the click test read it back: the workbook's own
        roles = {r["element_role"] for r in emitted}
        assert "menu" in roles and (s.via is None) == ("menu item" not in roles)
    start, dropped = screens
    assert {"cell", "tab"} <= {r["element_role"] for r in rows[start.screen_id]}
    # the menu covers what lies under it: those boxes are counted, never emitted
    px, py, pw, ph = dropped.scan["popup"]
    for r in rows[dropped.screen_id]:
        if not r["refusal"] and r["element_role"] != "menu item":
            x, y, w, h = r["bbox"]
            assert x >= px + pw or x + w <= px or y >= py + ph or y + h <= py, r
    tally = counts(start)
    assert tally["n_ok"] == len(start.elements) and tally["n_candidates"] > tally["n_ok"]
    refusals = [r for s in screens for r in rows[s.screen_id] if r["refusal"]]
    # named, never asked for ("save this" could be the toolbar's unnamed icon)
    assert refusals and all(r["element_role"] == "menu item" and r["element_name"] in r["instruction"]
                            for r in refusals)
    assert all(r["element_name"].casefold() not in start.scan["text"].casefold()
               for r in rows[start.screen_id] if r["refusal"])


def test_desktop_rows_export_and_load_with_datasets(rendered, tmp_path):
    screens, by_screen = rendered
    lake = Lake(str(tmp_path / "lake"))
    rows, images, summary = [], [], []
    for s in screens:
        sha = hashlib.sha256(s.image).hexdigest()
        for r in by_screen[s.screen_id]:
            rows.append({**r, "image_sha256": sha})
        images.append({"sha256": sha, "data": s.image, "width": s.width, "height": s.height, "format": "png"})
        summary.append({"screen_id": s.screen_id, "domain": s.domain, "image_sha256": sha, **counts(s),
                        "n_rows": len(by_screen[s.screen_id]), "n_refusals": 0})
    commit_shard(lake, ShardCommit("grounding", RUN, "fp-desktop", "grounding[desktop:calc]"),
                 {"grounding": rows, "grounding_screens": summary, "images": images})
    result = export_grounding(lake, tmp_path / "out", coords="pixels", validation=0, test=0)
    assert result.figures["rows"] == len(rows)
    # a cache of its own: the rows differ from run to run (what OCR reads), the folder's path may not
    ds = datasets.load_dataset(str(tmp_path / "out"), "grounding_desktop", split="train",
                               cache_dir=str(tmp_path / "hf-cache"))
    assert len(ds) == len(rows)
    for row in ds.select(range(0, len(ds), max(1, len(ds) // 10))):
        assert row["images"][0].size == (1280, 720)  # decoded by datasets.Image
    spot = json.loads((tmp_path / "out" / "screenspot" / "screenspot_desktop.json").read_text())
    assert len(spot) == sum(not r["refusal"] for r in rows) and {s["platform"] for s in spot} == {"desktop"}
