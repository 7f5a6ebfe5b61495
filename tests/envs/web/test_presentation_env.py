"""Presentations in real Chromium: a task's viewport and theme are applied on reset (and
undone by the next task's), its distractors show after the given clicks, identical resets
give identical frames, and the reference program closes a modal (and a banner that hides
its target) so skill cards still pass their package gate under every distractor."""

from __future__ import annotations

import json

import pytest

from guiforge.envs import Action, EnvSpec
from guiforge.envs.base import Observation
from guiforge.gates.package_gate import PackageGate
from guiforge.paths import SKILLS_DIR
from guiforge.presentation import Presentation
from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import RECOVERY_STEPS, bindings, render, step_budget
from guiforge.skills.loader import load_cards
from guiforge.tasks.candidates import candidate_row
from guiforge.tasks.materialize import task_spec
from guiforge.teacher.distractors import next_dismissal
from guiforge.teacher.reference import ReferenceProgram

ALL = [{"kind": "cookie", "variant": 1, "after_clicks": 0}, {"kind": "toast", "variant": 0, "after_clicks": 0},
       {"kind": "dialog", "variant": 2, "after_clicks": 1}]
DARK = {"name": "graphite", "mode": "dark", "density": "compact", "accent": "#f97316", "font": "condensed"}


def ids(obs: Observation) -> set[str]:
    return {e["id"] for e in obs.debug["elements"] if e.get("id")}


def test_viewport_theme_and_distractors_apply_on_reset(direct_web, world):
    from guiforge.envs.base import TaskSpec
    from guiforge.tasks.materialize import build_setup

    setup = build_setup("web", ["mail"], {"start": "mail"}, world)
    spec = TaskSpec(task_id="t-pres", domain="web", apps=["mail"], instruction="x", setup=setup,
                    presentation={"theme": DARK, "viewport": [1366, 768], "distractors": ALL})
    env = direct_web
    obs = env.reset(spec)
    assert (obs.width, obs.height) == (1366, 768)
    root = env.s.page.evaluate("() => ({...document.documentElement.dataset, accent: "
                               "document.documentElement.style.getPropertyValue('--accent')})")
    assert root == {"theme": "graphite", "mode": "dark", "density": "compact", "font": "condensed", "accent": "#f97316"}
    assert {"gf-cookie-accept", "gf-cookie-reject", "gf-toast-close"} <= ids(obs)
    assert "gf-dialog-dismiss" not in ids(obs)  # the modal waits for the first click
    again = env.reset(spec)
    assert again.screenshot == obs.screenshot  # the same task gives the same frame
    row = next(e for e in obs.debug["elements"] if (e["id"] or "").startswith("msg-"))
    clicked = env.step(Action(type="click", x=row["grid"][0], y=row["grid"][1]))
    assert {"gf-dialog-dismiss", "gf-dialog-close"} <= ids(clicked.observation)
    state = json.dumps(env.final_state().apps)
    assert "distractors" not in state and "cookie" not in state.lower()  # what a verifier reads is untouched
    plain = env.reset(spec.model_copy(update={"presentation": {}}))
    assert (plain.width, plain.height) == (1280, 720) and not any(i.startswith("gf-") for i in ids(plain))
    assert env.s.page.evaluate("() => document.documentElement.dataset.mode") is None


def test_dismissal_rules():
    def obs(*ids_: str) -> Observation:
        return Observation(debug={"elements": [{"id": i, "label": i, "grid": [1, 1]} for i in ids_]})

    modal = next_dismissal(obs("gf-dialog-close", "gf-dialog-dismiss", "gf-cookie-reject"), target_visible=True)
    assert modal[0]["id"] == "gf-dialog-dismiss" and "pop-up" in modal[1]
    assert next_dismissal(obs("gf-cookie-reject", "gf-toast-close"), target_visible=True) is None  # ignored
    assert next_dismissal(obs("gf-cookie-reject", "gf-toast-close"), target_visible=False)[0]["id"] == "gf-cookie-reject"
    assert next_dismissal(obs("gf-toast-close"), target_visible=False)[0]["id"] == "gf-toast-close"
    assert next_dismissal(obs("msg-1"), target_visible=False) is None


CARDS = ["mail.reply_invoice_total", "shop.buy_cheapest_in_category", "calendar.reschedule_event",
         "contacts.update_phone"]


@pytest.fixture(scope="module")
def bound():
    """(card, world, binding) for each card, on the first sample world it fits."""
    cards = load_cards(SKILLS_DIR)
    worlds = sample_worlds(6)
    out = []
    for cid in CARDS:
        found = next(((w, ctx) for w in worlds for ctx in bindings(cards[cid], w)[:1]), None)
        assert found is not None, cid
        out.append((cards[cid], *found))
    return out


@pytest.mark.parametrize("domain,viewport", [("web", [1920, 1080]), ("mobile", [360, 760])])
def test_references_pass_the_package_gate_under_every_distractor(manager, bound, domain, viewport):
    presentation = {"theme": DARK, "viewport": viewport,
                    "distractors": [d for d in ALL if domain == "web" or d["kind"] != "cookie"],
                    # inside a browser, or between a phone's bars: every click still lands
                    **({"browser": {"tabs": 3}} if domain == "web" else {"phone": {"nav": "buttons"}})}
    gate = PackageGate(manager)
    for card, world, ctx in bound:
        row = {**candidate_row(render(card, world, ctx, domain, None, 3)), "presentation_json": json.dumps(presentation)}
        spec = task_spec(row, world)
        reference = json.loads(row["reference_json"])
        verdict = gate.check(spec, reference)
        assert verdict.passed, (card.id, domain, verdict.reason)
        if card.id != CARDS[0]:
            continue
        # the same run by hand: the modal that the first click brings up is closed by the reference
        with manager.acquire(EnvSpec(domain=domain)) as lease:
            obs = lease.reset(spec)
            program, thoughts = ReferenceProgram(reference, domain), []
            while (plan := program.send(obs)) is not None:
                thoughts.append(plan.thought)
                result = lease.step(plan.action)
                assert result.error is None, (card.id, plan.action, result.error)
                obs = result.observation
                if result.done:
                    break
            assert any("pop-up" in t for t in thoughts), (card.id, thoughts)
            assert "gf-dialog-dismiss" not in ids(lease.observe())
            assert lease.evaluate().success, card.id


def run_reference(manager, spec, reference: dict, domain: str) -> tuple[list[str], set[str], set[str], bool]:
    """The reference solution stepped by hand: (its thoughts, the element ids of every frame
    on the way, those of the last frame, whether the task succeeded): enough to tell that a
    distractor came up and was gone at the end."""
    with manager.acquire(EnvSpec(domain=domain)) as lease:
        obs = lease.reset(spec)
        program, thoughts, seen = ReferenceProgram(reference, domain), [], ids(obs)
        while (plan := program.send(obs)) is not None:
            thoughts.append(plan.thought)
            result = lease.step(plan.action)
            assert result.error is None, (plan.action, result.error)
            obs = result.observation
            seen |= ids(obs)
            if result.done:
                break
        return thoughts, seen, ids(lease.observe()), lease.evaluate().success


def test_the_step_budget_pays_for_the_distractors_and_a_slip(manager, bound):
    """What a task's budget is for, measured on the real page: under every distractor the
    reference takes more steps than without any, no more than the distractors' share of the
    budget, and still leaves the room for a slip noticed and undone."""
    card, world, ctx = bound[0]
    row = candidate_row(render(card, world, ctx, "web", None, 3))
    reference = json.loads(row["reference_json"])
    steps = {}
    for name, distractors in (("plain", []), ("distracted", ALL)):
        shown = Presentation.model_validate({"viewport": [1280, 720], "distractors": distractors})
        spec = task_spec({**row, "presentation_json": json.dumps(shown.as_dict())}, world)
        thoughts, _, _, success = run_reference(manager, spec, reference, "web")
        assert success, name
        steps[name] = len(thoughts)
    assert steps["plain"] <= card.max_steps  # the card's own steps pay for the work
    assert steps["plain"] < steps["distracted"] <= steps["plain"] + shown.extra_steps(), steps
    assert steps["distracted"] + RECOVERY_STEPS <= step_budget(card.max_steps, shown), steps


@pytest.mark.parametrize("domain", ["web", "mobile"])
def test_a_pop_up_between_a_click_and_the_typing_hands_the_focus_back(manager, domain):
    """notes.append_line clicks into the note body, then presses keys and types with no
    target: a pop-up brought up by that click is closed and the body clicked again."""
    card = load_cards(SKILLS_DIR)["notes.append_line"]
    world, ctx = next((w, c) for w in sample_worlds(6) for c in bindings(card, w)[:1])
    presentation = {"viewport": [1280, 720] if domain == "web" else [360, 760],
                    "distractors": [{"kind": "dialog", "variant": 0, "after_clicks": 2}]}
    row = {**candidate_row(render(card, world, ctx, domain, None, 3)), "presentation_json": json.dumps(presentation)}
    thoughts, seen, last, success = run_reference(manager, task_spec(row, world), json.loads(row["reference_json"]),
                                                  domain)
    assert "gf-dialog-dismiss" in seen and "gf-dialog-dismiss" not in last  # it came up, and was closed
    assert any(t.startswith("A pop-up asking") for t in thoughts), thoughts
    assert success


def test_a_notification_over_the_field_a_click_focused_is_dismissed(manager):
    """On a small phone the toast that the first tap brings up lands on the search field the
    tap focused; the reference's next step on that field (select its text, then type)
    dismisses it instead of scrolling away looking for the field."""
    card = load_cards(SKILLS_DIR)["mail.forward_attachment"]
    world, ctx = next((w, c) for w in sample_worlds(6) for c in bindings(card, w)[:1])
    presentation = {"viewport": [390, 750], "distractors": [{"kind": "toast", "variant": 0, "after_clicks": 1}]}
    row = {**candidate_row(render(card, world, ctx, "mobile", None, 3)), "presentation_json": json.dumps(presentation)}
    _, seen, last, success = run_reference(manager, task_spec(row, world), json.loads(row["reference_json"]),
                                           "mobile")
    assert "gf-toast-close" in seen and "gf-toast-close" not in last  # it came up, and was dismissed
    assert success


def test_resizes_with_no_screenshot_between_them_leave_no_frame_pending(direct_web, world):
    """The package gate takes no screenshots: a page resized reset after reset with no
    frame drawn between used to keep a frame pending for good, so the next capture (or
    input waiting on a frame) was refused. Every resize now ends on a drawn frame."""
    from guiforge.envs.base import TaskSpec
    from guiforge.tasks.materialize import build_setup

    env = direct_web
    setup = build_setup("web", ["mail"], {"start": "mail"}, world)
    sizes = [[1536, 864], [1920, 1080], [1366, 768], [1280, 720]] * 3
    env.capture_screenshots = False
    try:
        for i, size in enumerate(sizes):
            obs = env.reset(TaskSpec(task_id=f"t{i}", domain="web", apps=["mail"], instruction="x", setup=setup,
                                     presentation={"viewport": size}))
            assert [obs.width, obs.height] == size
        row = next(e for e in obs.debug["elements"] if (e["id"] or "").startswith("msg-"))
        assert env.step(Action(type="click", x=row["grid"][0], y=row["grid"][1])).error is None
    finally:
        env.capture_screenshots = True
    assert env.observe().screenshot
