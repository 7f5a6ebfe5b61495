"""The grounding factory: expressions for scanned elements, screens rendered in real
Chromium whose every emitted box is hit-testable at its centre, and the export that
``datasets`` loads with decoded images."""

from __future__ import annotations

import hashlib
import json

import datasets
import pytest

from guiforge.catalog import grounding_summary
from guiforge.envs import EnvManager
from guiforge.envs.base import TaskSpec
from guiforge.envs.kinds_builtin import WEB
from guiforge.envs.web.grounding_scan import OCCLUDED, OK, grounding_scan
from guiforge.envs.web.sample_world import sample_world
from guiforge.export.grounding import REFUSAL, export_grounding
from guiforge.grounding.expressions import expressions, functional, role_position, role_word
from guiforge.grounding.rows import absent, counts, refusal_pool, screen_rows
from guiforge.grounding.screens import Screen, render_task
from guiforge.lake.gc import delete_entries
from guiforge.lake.store import Lake
from guiforge.lake.writer import ShardCommit, commit_shard
from guiforge.orchestration.compile import load_pipeline
from guiforge.preparers.web_apps import web_setup
from guiforge.presentation import Presentation

RUN = "grounding-test"


def el(name, tag="button", box=(0, 0, 40, 20), **more):
    return {"name": name, "tag": tag, "box": list(box), "status": OK, **more}


# -- expressions -----------------------------------------------------------------------

def test_functional_phrases_come_from_the_name_and_the_role():
    assert functional(el("Archive"), "mail") == ("the button that archives this email", "archive this email")
    assert functional(el("Mark as unread"), "mail")[0] == "the button that marks this email as unread"
    assert functional(el("Add Linen shirt to cart"), "shop")[0] == "the button that adds Linen shirt to cart"
    assert functional(el("Subject", tag="input", type="text"), "mail")[0] == \
        "the text field where you type the subject"
    assert functional(el("Sort by"), "shop") is None  # the rest of that sentence is the control's value
    assert functional(el("Sofia Marques: Lisbon offsite"), "mail") is None  # no verb, not a link


def test_a_shared_name_is_a_near_miss_named_by_its_row_or_left_out():
    rows = [el("Star", box=(600, 100 + 40 * i, 20, 20), row=f"Sender {i}: subject {i}") for i in range(3)]
    out = expressions(rows[1], rows, (1280, 720), "mail", False, 0)
    text = [e for e in out if e.kind == "text"]
    assert [e.text for e in text] == ["the “Star” button in the row “Sender 1: subject 1”"]
    assert all(e.near_miss for e in out)
    assert not [e for e in out if e.kind in ("functional", "instruction")]  # "star this email": which one?
    # the same visible text on two buttons with distinct names: the name tells them apart
    adds = [el("Add Mug to cart", text="Add to cart", box=(100, 300, 80, 30)),
            el("Add Pen to cart", text="Add to cart", box=(300, 300, 80, 30))]
    out = expressions(adds[0], adds, (1280, 720), "shop", False, 0)
    assert [e.text for e in out if e.kind == "text"] == ["the button labelled “Add Mug to cart”"]


def test_role_and_position_names_each_element_once():
    screen = [el(f"b{i}", box=(x, y, 30, 20)) for i, (x, y) in enumerate(
        [(10, 10), (10, 200), (10, 600), (600, 50), (620, 400), (1200, 10), (1200, 700)])]
    screen.append(el("a link", tag="a", box=(20, 300, 60, 20)))
    phrases = [role_position(e, screen, (1280, 720)) for e in screen]
    assert len(set(phrases)) == len(phrases), phrases
    assert phrases[0] == "the 1st button from the top on the left of the screen"
    assert phrases[-1] == "the only link on the left of the screen"


def test_a_refusal_never_names_what_the_screen_shows():
    screen = Screen("s", "t", None, "web", b"", "png", 1280, 720,
                    {"elements": [el("Ridge Books", text="Ridge Books"), el("Cart, 1 item")], "text": "Inbox 4 Hello"},
                    Presentation(), elements=[])
    assert not absent("Books", screen)  # a reader would take "Ridge Books" for it
    assert not absent("Inbox", screen)  # in the visible text
    assert not absent("cart", screen)
    assert absent("Archive", screen)
    pool = refusal_pool([Screen("o", "t", None, "web", b"", "png", 10, 10, {"elements": []}, Presentation(),
                                elements=[el("Cart, 0 items"), el("Archive"), el("gf", id="gf-toast-close")])])
    assert [p[0] for p in pool] == ["Archive"]  # no digits ("Cart, 0 items"), no distractor buttons


# -- real screens --------------------------------------------------------------------------

def _spec(presentation=None) -> TaskSpec:
    world = sample_world()
    return TaskSpec(task_id="t-grounding", domain="web", apps=["mail"], instruction="look",
                    setup=web_setup(world, start="/mail/inbox"), world_id=world.world_id,
                    presentation=presentation or {})


HIT = """(x, y) => { const t = document.elementFromPoint(x, y);
  const el = t && t.closest("a[href], button, input, textarea, select, summary, [role]");
  return el ? (el.getAttribute("aria-label") || (el.innerText || "").trim() || el.getAttribute("placeholder")) : null; }"""


@pytest.fixture(scope="module")
def rendered():
    """Screens of the sample world's mail (three looks, a press each after the first) and
    the live scan of its inbox under a modal dialog, from one Chromium."""
    with EnvManager({"web": WEB.make}, max_instances=1) as manager, manager.acquire(WEB.spec()) as lease:
        screens = render_task(lease, _spec(), 3, "7", 0.0, False, role_word)
        dialog = {"viewport": [1280, 720], "distractors": [{"kind": "dialog", "variant": 0, "after_clicks": 0}]}
        lease.reset(_spec(dialog))
        covered = grounding_scan(lease.env)
        modal = Screen("scr_modal", "t-grounding", None, "web", lease.env.screenshot(), "png", 1280, 720, covered,
                       Presentation.model_validate(dialog),
                       elements=[e for e in covered["elements"] if e["status"] == OK])
        rows = screen_rows(modal, refusal_pool(screens), 2, False, "7")
        checks = [(r, lease.env.js_sync(HIT, r["point_x"], r["point_y"])) for r in rows if not r["refusal"]]
        yield {"screens": screens, "modal": modal, "modal_rows": rows, "checks": checks}


def test_screens_span_looks_and_presses(rendered):
    screens = rendered["screens"]
    assert len(screens) == 3
    assert screens[0].via is None and all(s.via for s in screens[1:])
    assert len({(s.theme, tuple(s.look.viewport)) for s in screens}) == 3
    assert len({hashlib.sha256(s.image).hexdigest() for s in screens}) == 3
    for s in screens:  # the frame is the scan's: its size is the look's viewport
        assert (s.width, s.height) == tuple(s.look.viewport) and s.elements


def test_every_emitted_box_is_hit_at_its_centre_and_covered_ones_are_counted(rendered):
    modal, rows, checks = rendered["modal"], rendered["modal_rows"], rendered["checks"]
    tally = counts(modal)
    assert tally["n_occluded"] > 10 and tally["n_ok"] >= 2  # the dialog covers the inbox; its buttons show
    assert {r["element_id"] for r in rows if not r["refusal"]} <= {e["id"] for e in modal.elements}
    assert not any(r["element_id"] == e["id"] for r in rows for e in modal.scan["elements"]
                   if e["status"] == OCCLUDED and e["id"])
    assert checks and all(hit == r["element_name"] for r, hit in checks), \
        [(r["instruction"], r["element_name"], hit) for r, hit in checks if hit != r["element_name"]]
    for r in rows:
        if not r["refusal"]:
            x, y, w, h = r["bbox"]
            assert x <= r["point_x"] < x + w and y <= r["point_y"] < y + h


def test_export_loads_with_datasets_and_decodes_the_screens(rendered, tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    screens = [*rendered["screens"], rendered["modal"]]
    pool = refusal_pool(screens)
    rows, images, summary = [], [], []
    for s in screens:
        sha = hashlib.sha256(s.image).hexdigest()
        mine = screen_rows(s, pool, 2, False, "7")
        for r in mine:
            r["image_sha256"] = sha
        rows += mine
        images.append({"sha256": sha, "data": s.image, "width": s.width, "height": s.height, "format": "png"})
        summary.append({"screen_id": s.screen_id, "domain": s.domain, "image_sha256": sha, **counts(s),
                        "n_rows": len(mine), "n_refusals": sum(r["refusal"] for r in mine)})
    commit_shard(lake, ShardCommit("grounding", RUN, "fp-grounding", "grounding[web:mail]"),
                 {"grounding": rows, "grounding_screens": summary, "images": images})
    result = export_grounding(lake, tmp_path / "out", coords="pixels", validation=0, test=0)
    assert result.figures["rows"] == len(rows) and result.figures["refusals"] >= 1

    ds = datasets.load_dataset(str(tmp_path / "out"), "grounding_web", split="train")
    assert len(ds) == len(rows)
    for row in ds.select(range(0, len(ds), max(1, len(ds) // 25))):
        image = row["images"][0]  # decoded by datasets.Image
        assert image.size == (row["image_width"], row["image_height"])
        answer = row["messages"][-1]["content"][0]["text"]
        if row["refusal"]:
            assert answer == REFUSAL and row["bbox"] is None
        else:
            x, y, w, h = row["bbox"]
            px, py = row["point"]
            assert answer == f"({int(px)}, {int(py)})" and x <= px < x + w and y <= py < y + h
    spot = json.loads((tmp_path / "out" / "screenspot" / "screenspot_web.json").read_text())
    assert len(spot) == sum(not r["refusal"] for r in rows)
    assert all((tmp_path / "out" / "screenspot" / "images" / s["img_filename"]).exists() for s in spot)
    assert {s["data_type"] for s in spot} <= {"text", "icon"} and {s["platform"] for s in spot} == {"web"}
    (domain, n_screens, n_rows, refusals, *_rest, failing), = grounding_summary(lake, RUN)
    assert (domain, n_screens, n_rows) == ("web", 4, len(rows)) and refusals >= 1 and 0 < failing < 1


def test_the_default_pipeline_runs_the_grounding_stage():
    pipeline = load_pipeline(None)
    stage = next(s for s in pipeline.stages if s.name == "grounding")
    assert stage.kind == "grounding" and {"grounding", "images"} <= set(stage.outputs())
    names = [s.name for s in pipeline.stages]
    assert names.index("task_gates") < names.index("grounding")


def test_pruning_a_shard_keeps_the_screenshots_other_grounding_rows_name(rendered, tmp_path):
    """A rerun under a changed config stores no frame an older shard holds, then prunes the
    older shard: the frames its successors' rows name must stay (lake gc's references)."""
    lake = Lake(str(tmp_path / "lake"))
    screen = rendered["screens"][0]
    sha = hashlib.sha256(screen.image).hexdigest()
    rows = screen_rows(screen, [], 0, False, "7")[:3]
    for r in rows:
        r["image_sha256"] = sha
    image = {"sha256": sha, "data": screen.image, "width": screen.width, "height": screen.height, "format": "png"}
    commit_shard(lake, ShardCommit("grounding", RUN, "fp-old", "old"), {"grounding": rows, "images": [image]})
    commit_shard(lake, ShardCommit("grounding", RUN, "fp-new", "new"), {"grounding": rows, "images": []})
    old = [e for e in lake.manifest_entries(RUN, "grounding") if e["fingerprint"] == "fp-old"]
    delete_entries(lake, old)
    assert lake.read_table("images", run_id=RUN, columns=["sha256"]).column("sha256").to_pylist() == [sha]
