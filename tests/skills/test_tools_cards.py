"""The tools-domain skill cards (skills/tools): they load, cover the tool areas, bind on
most sample worlds with instructions that pass the text gates, pass the package gate in the
real ToolsEnv, and - the point of an information task - the answer the card expects is what
the tools themselves return when the reference calls them.

The full check is ``guiforge skills check tools --worlds 20 --per-card 4``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from card_checks import assert_text_gates_pass, binding_rates

from guiforge.envs.actions import Action
from guiforge.envs.base import Criterion, EnvSpec, FinalState
from guiforge.envs.tools.catalog import REGISTRY
from guiforge.envs.tools.env import ToolsEnv
from guiforge.skills.card import SkillCard
from guiforge.skills.check import check_cards, sample_worlds
from guiforge.skills.instantiate import instantiate
from guiforge.skills.loader import load_cards
from guiforge.tasks.candidates import candidate_row, file_problems
from guiforge.tasks.materialize import task_spec
from guiforge.verify.checks import CHECKS
from guiforge.verify.runner import score_rubric

SKILLS = Path(__file__).resolve().parents[2] / "skills"
N_WORLDS = 10  # one per scenario
SEED = 1
AREAS = {"world", "dates", "tables", "text", "meta", "images", "conversion"}


@pytest.fixture(scope="module")
def cards() -> dict[str, SkillCard]:
    return {cid: c for cid, c in load_cards(SKILLS).items() if c.app == "tools"}


@pytest.fixture(scope="module")
def worlds():
    return sample_worlds(N_WORLDS)


@pytest.fixture(scope="module")
def instances(cards, worlds):
    """Every (card, world, candidate) the sample worlds give."""
    return [(card, w, c) for card in cards.values() for w in worlds for c in instantiate(card, w, SEED)]


def _calls(card: SkillCard) -> list[dict]:
    return [s.model_dump() for s in card.reference_for("tools") if s.do == "call_tool"]


def test_cards_load_and_cover_the_tool_areas(cards):
    assert len(cards) >= 12
    areas = {REGISTRY[s["name"]].area for card in cards.values() for s in _calls(card)}
    assert areas >= AREAS, areas
    assert sum(c.cross_app for c in cards.values()) >= 3
    assert {c.difficulty for c in cards.values()} == {"easy", "medium", "hard"}
    infeasible = [c for c in cards.values() if not c.feasible]
    assert infeasible
    for card in infeasible:
        assert card.reference_for("tools")[-1].model_dump() == {"do": "terminate", "status": "infeasible"}
    for card in cards.values():
        assert card.domains == ["tools"], card.id
        assert len(card.instructions) >= 3, card.id
        assert card.leak_check or not card.feasible, card.id  # the answer must not be given away
        for step in _calls(card):
            assert step["name"] in REGISTRY, f"{card.id}: unknown tool {step['name']}"
        for name in card.setup.get("tools", []):
            assert name in REGISTRY, f"{card.id}: setup.tools names unknown tool {name}"
        if card.answer is not None:  # an information task answers last and its rubric reads it
            assert card.reference_for("tools")[-1].do == "answer", card.id
            assert any(c.required and c.check["fn"].startswith("answer_") for c in card.rubric), card.id


def test_cards_bind_on_most_worlds_and_pass_the_text_gates(cards, worlds, instances):
    # tables cards need a sheet with a date column or repeated categories: half the scenarios
    binding_rates(cards, worlds)
    phrasings = Counter()
    for card, world, c in instances:
        assert_text_gates_pass(card, world, c)
        phrasings[card.id] += 1
    assert set(phrasings) == set(cards)


def _ocr_miss(gate: str, reason: str) -> bool:
    """The file gate dropping a scan or photo whose figure OCR did not read: in a run an
    exclusion with this reason, a few per hundred images (bench/scans.py)."""
    return gate == "file" and ".png: does not state fact" in reason


def test_one_instance_of_each_card_passes_the_package_gate(cards, worlds):
    # an image card gets three tries: OCR may miss one degraded image's total
    reports = [r for card in cards.values() for r in check_cards(
        [card], worlds, seed=SEED, max_instances=3 if card.apps[0] == "images" else 1)]
    failed = [f"{r.skill_id} ({r.world_id}): {r.gate}: {r.reason}" for r in reports
              if r.gate != "pass" and not _ocr_miss(r.gate, r.reason)]
    assert not failed, failed
    assert {r.skill_id for r in reports if r.gate == "pass"} == set(cards)


def test_expected_answers_are_what_the_tools_return(instances):
    """Replay each reference's tool calls in ToolsEnv; every required answer criterion must
    hold for one tool output on its own, so the card's Jinja arithmetic (business days,
    group sums, standard deviations) agrees with the tools an agent would use. CI replays up
    to three instances of every card; ``--battery`` replays every instance."""
    per_card: dict[str, int] = {}
    sample = [i for i in instances if per_card.setdefault(i[2].skill_id, 0) < 3
              and not per_card.update({i[2].skill_id: per_card[i[2].skill_id] + 1})]
    _replay_answers(sample, minimum=40)


@pytest.mark.battery
def test_expected_answers_of_every_instance_are_what_the_tools_return(instances):
    _replay_answers(instances, minimum=100)


def _replay_answers(instances, minimum: int) -> None:
    env = ToolsEnv(EnvSpec(domain="tools"))
    env.start()
    checked = 0
    try:
        unread = images = 0
        for _, world, c in instances:
            if c.answer is None:
                continue
            if c.apps[0] == "images":  # the file gate drops a degraded image OCR cannot read
                images += 1
                problems = file_problems(c, world)
                if problems and all(_ocr_miss("file", p) for p in problems):
                    unread += 1
                    continue
            env.reset(task_spec(candidate_row(c), world))
            outputs = []
            for step in (s for s in c.reference if s["do"] == "call_tool"):
                payload = {"name": step["name"], "arguments": step.get("arguments", {})}
                result = env.step(Action(type="call_tool", text=json.dumps(payload)))
                assert result.error is None, f"{c.skill_id} {step['name']}: {result.error}"
                outputs.append(result.feedback)
            state = env.final_state()
            for crit in (k for k in c.rubric if k["required"] and k["check"]["fn"].startswith("answer_")):
                args = {k: v for k, v in crit["check"].items() if k != "fn"}
                hits = []
                for out in outputs:
                    state.answer = out
                    hits.append(CHECKS[crit["check"]["fn"]](state, **args))
                assert any(hits), f"{c.skill_id} ({world.scenario}): no tool output satisfies {crit['id']} {args}"
                checked += 1
    finally:
        env.close()
    assert checked >= minimum
    assert unread <= max(1, images // 10), f"{unread} of {images} images unread"


def test_repeating_the_question_does_not_pass(instances):
    """An answer that only echoes the instruction fails every information card's verifier."""
    for card, _, c in instances:
        if c.answer is None and card.feasible:
            continue  # an action task: its verifier reads files, covered by the package gate
        rubric = [Criterion(**k) for k in c.rubric]
        result = score_rubric(rubric, FinalState(answer=c.instruction, status="success"), card.feasible)
        assert not result.success, f"{c.skill_id}: {c.instruction}"


def test_file_search_values_occur_in_exactly_one_workspace_file(cards, worlds):
    from guiforge.preparers.files import prepare_workspace

    card = cards["tools.file_mentioning_value"]
    seen = 0
    for world in worlds:
        for c in instantiate(card, world, SEED):
            files = prepare_workspace(world, c.setup["files"])
            value = c.instruction.split('"')[1].casefold()
            holders = [name for name, data in files.items() if value in data.decode().casefold()]
            assert holders == [c.answer], f"{world.scenario}: {value!r} in {holders}, expected {c.answer}"
            seen += 1
    assert seen >= 5


# -- the checks these cards added to guiforge/verify/checks.py ---------------------------------

def _answer(text: str | None) -> FinalState:
    return FinalState(answer=text)


@pytest.mark.parametrize(("answer", "value", "expected"), [
    ("There are 12 working days.", 12, True),
    ("From 2025-07-16 to 2025-07-23.", 7, False),  # numbers inside ISO dates are not counts
    ("From 16 July 2025 to July 23rd, 2025 at 11:00.", 16, False),
    ("16/07/2025", 7, False),
    ("7 days, from 2025-07-16", 7, True),
    (None, 3, False),
])
def test_answer_mentions_count(answer, value, expected):
    assert CHECKS["answer_mentions_count"](_answer(answer), value=value) is expected


@pytest.mark.parametrize(("answer", "value", "expected"), [
    ("Call her on +44(0)121 4960266.", "+44(0)121 4960266", True),
    ("Her number is +441214960266", "+44(0)121 4960266", True),  # the (0) trunk dropped
    ("0800318777", "(080)-0318777", True),
    ("536-803-5787 x1591", "536-803-5787x1591", True),
    ("536-803-5787", "536-803-5787x1591", False),  # the extension is part of the number
    ("080031877", "(080)-0318777", False),
    ("She was born 2024-01-15.", "(080)-0318777", False),
    (None, "0520 131963", False),
])
def test_answer_mentions_phone(answer, value, expected):
    assert CHECKS["answer_mentions_phone"](_answer(answer), value=value) is expected


def test_file_mentions_phone(tmp_path):
    (tmp_path / "card.txt").write_text("Phone: 0520-131 963\n")
    state = FinalState(workspace=tmp_path)
    assert CHECKS["file_mentions_phone"](state, path="card.txt", value="0520 131963")
    assert not CHECKS["file_mentions_phone"](state, path="card.txt", value="0520 131964")
    assert not CHECKS["file_mentions_phone"](state, path="missing.txt", value="0520 131963")


@pytest.mark.parametrize(("answer", "value", "expected"), [
    ("Mostly yes.", "Yes", True),
    ("It was yesterday", "Yes", False),
    ("The Spring campaign group", "Spring campaign", True),
    ("Springcampaign", "Spring campaign", False),
    (None, "Yes", False),
])
def test_answer_mentions_word(answer, value, expected):
    assert CHECKS["answer_mentions_word"](_answer(answer), value=value) is expected
