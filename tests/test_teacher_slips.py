"""The scripted teacher's further slips (guiforge.teacher.slips) and the way back from each
(guiforge.teacher.recovery): what each picks on a screen, what the teacher does on the next
screen, and, in real Chromium, that the verifier alone decides: a recovered slip still
succeeds, an unrecovered one fails."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from guiforge.envs import EnvManager, EnvSpec, default_factories
from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.gates.package_gate import env_spec
from guiforge.harness.context import ContextPolicy
from guiforge.harness.episode import run_episode
from guiforge.harness.policies import Noise, ScriptedTeacher, TurnInput
from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import bindings, render
from guiforge.skills.loader import load_card
from guiforge.tasks.candidates import candidate_row
from guiforge.tasks.materialize import task_spec
from guiforge.teacher.reference import ReferenceProgram
from guiforge.teacher.slips import (
    confirms,
    neighbour_cell,
    premature_answer,
    stale_value,
    tab_neighbour,
    wrong_command,
)

SKILLS = Path(__file__).resolve().parents[1] / "skills"
QUIET = dict(misclick=0, skip=0, wrong_value=0, early_stop=0, malformed=0, missed_scroll=0, spread=0)
TABS = [{"id": f"tab-{n.lower()}", "role": "tab", "label": n, "grid": [200 + 150 * i, 90],
         "box": [100 + 190 * i, 60, 180, 40]} for i, n in enumerate(("Inbox", "Sent", "Drafts"))]


def screen(elements: list[dict], path: list[str], **debug) -> Observation:
    return Observation(screenshot=b"x", width=1280, height=720, debug={"elements": elements, "path": path, **debug})


def reply(teacher: ScriptedTeacher, obs: Observation, turn: int) -> dict:
    return json.loads(teacher.act(TurnInput([], obs, turn)).text)


def test_the_tab_beside_is_a_slip_and_the_right_tab_is_clicked_on_seeing_the_other_view():
    assert tab_neighbour(screen(TABS, ["mail"]), TABS[1])["label"] in ("Inbox", "Drafts")
    lone = [{"id": "ok", "label": "OK", "box": [100, 60, 80, 40]}, {"id": "no", "label": "Cancel", "box": [200, 60, 80, 40]}]
    assert tab_neighbour(screen(lone, ["x"]), lone[0]) is None  # two buttons side by side are not a tab row
    teacher = ScriptedTeacher([{"do": "click", "label": "Sent"}], "web", None,
                              Noise(**{**QUIET, "misclick": 1.0, "recover": 1.0}), seed=0, task_id="t")
    teacher._rng.shuffle = lambda pickers: pickers.sort(key=lambda p: p[0] != "wrong_tab")  # the tab slip first
    slip = reply(teacher, screen(TABS, ["mail", "inbox"]), 0)
    assert slip["action"]["type"] == "click" and slip["action"]["x"] != 350
    fixed = reply(teacher, screen(TABS, ["mail", "drafts"]), 1)
    assert fixed["action"] == {"type": "click", "x": 350, "y": 90} and "Sent" in fixed["thought"]
    assert [(e["event"], e["kind"]) for e in teacher.events] == [("mistake", "wrong_tab"), ("correction", "wrong_tab")]


def test_a_value_typed_earlier_is_typed_again_then_selected_and_replaced():
    assert stale_value(["Lyon", "412.50", "Acme"], "97.10", random.Random(0)) == "412.50"  # a number for a number
    assert stale_value(["412.50"], "Paris", random.Random(0)) is None
    field = {"id": "city", "tag": "input", "label": "City", "grid": [500, 300], "box": [300, 280, 400, 40]}
    teacher = ScriptedTeacher([{"do": "type", "text": "Lyon"}, {"do": "type", "text": "Paris"}],
                              "web", None, Noise(**QUIET, recover=1.0), seed=0, task_id="t")
    first = reply(teacher, screen([field], ["form"]), 0)
    assert first["action"]["text"] == "Lyon"
    teacher.noise = Noise(**{**QUIET, "wrong_value": 1.0, "recover": 1.0})
    teacher._rng = random.Random(0)  # 0: the stale branch is taken
    slip = reply(teacher, screen([{**field, "focused": True, "value": "Lyon"}], ["form"]), 1)
    assert slip["action"]["text"] == "Lyon"  # Paris belongs here
    shows = screen([{**field, "focused": True, "value": "LyonLyon"}], ["form"])
    select = reply(teacher, shows, 2)
    assert select["action"] == {"type": "hotkey", "keys": ["ctrl", "a"]} and "earlier value" in select["thought"]
    assert reply(teacher, shows, 3)["action"] == {"type": "type", "text": "Paris"}
    assert [e["kind"] for e in teacher.events] == ["stale_value", "stale_value"]


def test_a_command_slips_a_column_or_a_file_name_but_never_one_that_writes():
    rng = random.Random(0)
    assert wrong_command("awk -F, '{s+=$3} END {print s}' sales.csv", rng) in (
        "awk -F, '{s+=$2} END {print s}' sales.csv", "awk -F, '{s+=$4} END {print s}' sales.csv")
    misspelt = wrong_command("wc -l orders.txt", rng)
    assert misspelt != "wc -l orders.txt" and misspelt.startswith("wc -l ") and len(misspelt) == len("wc -l orders.txt") - 1
    assert wrong_command("cut -d, -f2 a.csv > out.csv", rng) is None
    assert wrong_command("rm notes.txt", rng) is None


def test_a_command_slip_is_followed_by_the_right_command_on_seeing_its_output():
    teacher = ScriptedTeacher([{"do": "bash", "command": "cut -d, -f3 sales.csv | sort | head -1"}], "desktop", "terminal",
                              Noise(**{**QUIET, "wrong_value": 1.0, "recover": 1.0}), seed=2, task_id="t")
    term = Observation(screenshot=None, width=0, height=0, text="$ ", debug={})
    slip = reply(teacher, term, 0)
    assert slip["action"]["type"] == "bash" and slip["action"]["text"] != "cut -d, -f3 sales.csv | sort | head -1"
    again = reply(teacher, Observation(screenshot=None, width=0, height=0, text="North", debug={}), 1)
    assert again["action"] == {"type": "bash", "text": "cut -d, -f3 sales.csv | sort | head -1"}
    assert "mistyped" in again["thought"]


def test_the_cell_beside_in_the_name_box_is_corrected_by_going_to_the_right_cell():
    addresses = {neighbour_cell(Action(type="type", text="B9\n"), random.Random(s)) for s in range(20)}
    assert addresses <= {"A9\n", "C9\n", "B8\n", "B10\n"} and len(addresses) >= 3
    assert neighbour_cell(Action(type="type", text="412\n"), random.Random(0)) is None


def test_a_calc_cell_slip_is_noticed_in_the_name_box_and_the_right_cell_is_visited_again():
    teacher = ScriptedTeacher([{"do": "cell", "ref": "B9", "value": "412"}], "desktop", "gui",
                              Noise(**{**QUIET, "wrong_value": 1.0, "recover": 1.0}), seed=0, task_id="t")
    calc = Observation(screenshot=b"x", width=1280, height=800, debug={})
    actions = [reply(teacher, calc, turn)["action"] for turn in range(9)]
    typed = [a["text"] for a in actions if a["type"] == "type"]
    assert typed[0] in ("A9\n", "C9\n", "B8\n", "B10\n") and typed[1] == "B9\n"  # the cell beside, then B9
    assert typed[2] != "412\n" and actions[-1] == {"type": "hotkey", "keys": ["ctrl", "a"]}  # a slipped digit, then back
    assert [(e["event"], e["kind"]) for e in teacher.events] == [
        ("mistake", "wrong_cell"), ("correction", "wrong_cell"), ("mistake", "wrong_cell_value"),
        ("correction", "wrong_cell_value")]


def test_a_deck_question_pages_to_its_slide_before_answering():
    program = ReferenceProgram([{"do": "slide", "index": 2, "title": "Sales"}, {"do": "answer", "text": "x"}],
                               "desktop", "gui")
    calc = Observation(screenshot=b"x", width=1280, height=800, debug={})
    planned = [program.send(calc) for _ in range(3)]
    assert [p.action.keys for p in planned[:2]] == [["pagedown"], ["pagedown"]] and "Sales" in planned[0].thought
    assert planned[2].action.type == "answer"
    card = load_card(SKILLS / "impress" / "chart_extreme_info.yaml", SKILLS)
    assert card.reference_for("desktop")[0].model_dump()["do"] == "slide"  # not an answer from slide 1


def test_answering_before_looking_takes_a_figure_from_the_screen_in_view():
    on_screen = screen([{"id": "r1", "label": "North 120.50"}, {"id": "r2", "label": "South 80"}], ["sheet"])
    wrong = premature_answer("The total is 430.50.", on_screen, random.Random(0))
    assert wrong in ("The total is 120.50.", "The total is 80.")
    slipped = premature_answer("The total is 430.50.", screen([], ["x"]), random.Random(0))
    assert slipped != "The total is 430.50." and slipped.startswith("The total is 430.5")
    teacher = ScriptedTeacher([{"do": "click", "label": "Totals"}, {"do": "answer", "text": "The total is 430.50."}],
                              "web", None, Noise(**{**QUIET, "early_stop": 1.0}), seed=0, task_id="t")
    first = reply(teacher, on_screen, 0)
    assert first["action"]["type"] == "answer" and first["action"]["answer"] in ("The total is 120.50.", "The total is 80.")
    assert [e["kind"] for e in teacher.events] == ["premature_answer"]


def test_a_confirming_press_is_send_save_or_ok_and_skipping_it_ends_the_task_early():
    send = Action(type="click", x=10, y=10)
    assert confirms({"do": "click", "id": "compose-send"}, send, screen([], ["x"]))
    assert not confirms({"do": "click", "id": "msg-reply"}, send, screen([], ["x"]))
    button = {"id": "compose-send", "label": "Send", "grid": [900, 650], "box": [1100, 450, 100, 40]}
    reference = [{"do": "click", "id": "compose-send"}]
    quiet = ScriptedTeacher(reference, "web", None, Noise(**QUIET), seed=0, task_id="t")
    assert reply(quiet, screen([button], ["mail", "compose"]), 0)["action"]["type"] == "click"
    skips = ScriptedTeacher(reference, "web", None, Noise(**{**QUIET, "skip": 1.0}), seed=0, task_id="t")
    early = reply(skips, screen([button], ["mail", "compose"]), 0)
    assert early["action"] == {"type": "terminate", "status": "success"}
    assert [e["kind"] for e in skips.events] == ["skipped_confirmation"]


# --- in real Chromium: the verifier decides ---------------------------------------------------

@pytest.fixture(scope="module")
def reply_task():
    card = load_card(SKILLS / "mail" / "reply_invoice_total.yaml", SKILLS)
    world = sample_worlds(1)[0]  # its scenario has an invoice mail to reply to
    ctx = bindings(card, world)[0]
    row = candidate_row(render(card, world, ctx, "web", None, 1))
    return task_spec(row, world), json.loads(row["reference_json"])


@pytest.fixture(scope="module")
def manager():
    with EnvManager(default_factories(), max_instances=1) as m:
        yield m


def play_and_verify(manager, task, reference, noise: Noise, seed: int):
    teacher = ScriptedTeacher(reference, "web", None, noise, seed=seed, task_id=task.task_id,
                              instruction=task.instruction)
    with manager.acquire(EnvSpec(domain="web")) as lease:
        episode = run_episode(lease, task, teacher, ContextPolicy())
    return episode.verdict, [(e["event"], e["kind"]) for e in teacher.events]


@pytest.mark.parametrize("recover", [1.0, 0.0])
def test_a_typed_slip_succeeds_only_when_it_is_recovered(manager, reply_task, recover):
    task, reference = reply_task
    verdict, events = play_and_verify(manager, task, reference, Noise(**{**QUIET, "wrong_value": 1.0,
                                                                        "recover": recover}), seed=3)
    assert any(event == "mistake" for event, _ in events), events
    if recover:
        assert ("correction", events[0][1]) in events and verdict.success, (events, verdict)
    else:
        assert not any(event == "correction" for event, _ in events) and not verdict.success, (events, verdict)


def test_a_skipped_send_fails_the_verifier(manager, reply_task):
    task, reference = reply_task
    verdict, events = play_and_verify(manager, task, reference, Noise(**{**QUIET, "skip": 1.0}), seed=0)
    assert events == [("mistake", "skipped_confirmation")] and not verdict.success, verdict


@pytest.mark.battery  # LibreOffice's start is slow; the Chromium tests above are the CI variant
@pytest.mark.parametrize("recover", [1.0, 0.0])
def test_a_calc_cell_slip_in_libreoffice_succeeds_only_when_it_is_recovered(manager, recover):
    card = load_card(SKILLS / "calc" / "fix_value.yaml", SKILLS)
    world, ctx = next((w, b[0]) for w in sample_worlds(3) if (b := bindings(card, w)))
    row = candidate_row(render(card, world, ctx, "desktop", "gui", 1))
    task, reference = task_spec(row, world), json.loads(row["reference_json"])
    teacher = ScriptedTeacher(reference, "desktop", "gui", Noise(**{**QUIET, "wrong_value": 1.0, "recover": recover}),
                              seed=0, task_id=task.task_id, instruction=task.instruction)
    with manager.acquire(env_spec("desktop", "gui", presentation=task.presentation)) as lease:
        episode = run_episode(lease, task, teacher, ContextPolicy())
    kinds = [(e["event"], e["kind"]) for e in teacher.events]
    assert ("mistake", "wrong_cell") in kinds and ("mistake", "wrong_cell_value") in kinds, kinds
    recovered = ("correction", "wrong_cell") in kinds and ("correction", "wrong_cell_value") in kinds
    assert recovered == bool(recover) and episode.verdict.success == bool(recover), (kinds, episode.verdict)


def test_an_answer_with_no_figure_is_never_answered_early():
    """Answering early can only get a figure wrong: with none, the teacher takes the step as
    planned (no unearned success, no mistake logged)."""
    on_screen = screen([{"id": "r1", "label": "North 120.50", "grid": [100, 200]}], ["sheet"])
    assert premature_answer("It is Maria Lopez.", on_screen, random.Random(0)) is None
    teacher = ScriptedTeacher([{"do": "click", "label": "North 120.50"}, {"do": "answer", "text": "It is Maria Lopez."}],
                              "web", None, Noise(**{**QUIET, "early_stop": 1.0}), seed=0, task_id="t")
    first = reply(teacher, on_screen, 0)
    assert first["action"]["type"] == "click" and teacher.events == []
