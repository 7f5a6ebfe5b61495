"""The package gate proves every card's verifier sees side damage, in the real environments
(Chromium for web and mobile, LibreOffice and bubblewrap for desktop, the tool registry for
tools): the reference passes, and its final state with one planted side error (a digit
changed in another record, an extra record, another cell or line edited, an extra file) fails
``no_side_damage``. A side error made through the UI fails it too.

CI runs two cards (one app-state plant in Chromium, one file plant in the tools' workspace;
the card tests' package gates plant too); ``pytest --battery`` runs a few cards per domain and
every card in every domain and variant it supports, one item each (``-k "every_card and
desktop"`` for one domain): passed when its planted side error failed the rubric, skipped when
the task changes no state and nothing could be planted, failed otherwise; the counts are
written at the end."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from guiforge.envs import EnvManager, default_factories
from guiforge.gates.package_gate import PackageGate, env_spec, run_reference
from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import bindings, render, targets
from guiforge.skills.loader import load_cards
from guiforge.tasks.candidates import candidate_row
from guiforge.tasks.materialize import task_spec
from guiforge.verify.side_effects import CRITERION_ID

SKILLS = Path(__file__).resolve().parents[2] / "skills"
SEED = 1
CI_SAMPLE = {("mail.send_draft", "web"), ("tools.column_std_with_code", "tools")}
SUBSET = {  # (card, domain): a few per domain, each changing state in its own way
    ("mail.send_draft", "web"), ("bank.move_to_savings", "web"), ("shop.buy_cheapest_in_category", "web"),
    ("contacts.update_phone", "mobile"), ("notes.append_line", "mobile"),
    ("tools.save_contact_details", "tools"), ("tools.column_std_with_code", "tools"),
    ("calc.fix_value", "desktop"), ("terminal.awk_total", "desktop"), ("terminal.fix_script", "desktop"),
}


CARDS = load_cards(SKILLS)
EVERY = [(cid, domain, variant) for cid in sorted(CARDS) for domain, variant in targets(CARDS[cid])]


@pytest.fixture(scope="module")
def worlds():
    return sample_worlds(10)


@pytest.fixture(scope="module")
def manager():
    with EnvManager(default_factories(), max_instances=1) as m:  # one Chromium for the module
        yield m


@pytest.fixture(scope="module")
def tally(request):
    """What the every-card run found, written to the terminal when the module ends: cards
    whose planted side error failed the rubric, cards that change no state, cards failing."""
    counts: dict[str, list[str]] = {"planted and caught": [], "answer-only": [], "without state change": [],
                                    "failing": []}
    yield counts
    report = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if report is None or capture is None or not any(counts.values()):
        return
    with capture.global_and_fixture_disabled():  # a teardown's output is captured otherwise
        report.write_line(f"\nside-damage gate: {len(counts['planted and caught'])} planted and caught "
                          f"({len(counts['answer-only'])} of them answer-only tasks, whose state must stay as it "
                          f"was), {len(counts['without state change'])} without state change (skipped), "
                          f"{len(counts['failing'])} failing")
        for key in ("without state change", "failing"):
            for line in counts[key]:
                report.write_line(f"  {key}: {line}")


@dataclass
class Outcome:
    where: str
    failure: str | None = None  # why the gate did not prove the verifier sees side damage
    planted: str | None = None  # the side error the verifier caught
    answer_only: bool = False  # the rubric lets nothing change: the task only answers


def gate_one(manager, card, worlds, domain: str, variant: str | None) -> Outcome:
    """Gate one bound instance of (card, domain, variant) with a planted side error."""
    world, ctx = next((w, b[0]) for w in worlds if (b := bindings(card, w)))
    row = candidate_row(render(card, world, ctx, domain, variant, SEED))
    rubric = json.loads(row["rubric_json"])
    assert rubric[-1]["id"] == CRITERION_ID and rubric[-1]["required"], card.id
    out = Outcome(f"{card.id} ({domain}{'/' + variant if variant else ''}, {world.scenario})",
                  answer_only=not rubric[-1]["check"].get("changes"))
    verdict = PackageGate(manager).check(task_spec(row, world), json.loads(row["reference_json"]), variant)
    if not verdict.passed:
        out.failure = verdict.reason
    elif verdict.details.get("planted"):
        out.planted = verdict.details["planted"]
    elif not out.answer_only:  # a task that changes state always leaves something to damage
        out.failure = "no side error could be planted"
    return out


def gate_every(manager, worlds, wanted) -> tuple[list[str], list[str]]:
    """Gate each wanted (card, domain): (failures, plants)."""
    failures, plants = [], []
    for cid, domain, variant in EVERY:
        if wanted(cid, domain):
            out = gate_one(manager, CARDS[cid], worlds, domain, variant)
            if out.failure or not out.planted:
                failures.append(f"{out.where}: {out.failure or 'no side error could be planted'}")
            else:
                plants.append(f"{out.where}: {out.planted}")
    return failures, plants


def test_a_planted_side_error_fails_the_rubric_in_app_state_and_in_files(manager, worlds):
    failures, plants = gate_every(manager, worlds, lambda cid, domain: (cid, domain) in CI_SAMPLE)
    assert not failures, failures
    assert len(plants) == len(CI_SAMPLE)


@pytest.mark.battery
def test_a_planted_side_error_fails_the_rubric_on_a_few_cards_per_domain(manager, worlds):
    failures, plants = gate_every(manager, worlds, lambda cid, domain: (cid, domain) in SUBSET)
    print("\n".join(plants))
    assert not failures, failures
    assert len(plants) == len(SUBSET)


@pytest.mark.battery
@pytest.mark.parametrize("card_id,domain,variant", EVERY,
                         ids=[f"{c}-{d}{'-' + v if v else ''}" for c, d, v in EVERY])
def test_a_planted_side_error_fails_the_rubric_on_every_card(manager, worlds, tally, card_id, domain, variant):
    """One item per card, domain and variant (select with -k, e.g. ``-k "every_card and
    desktop"``): it passes when a planted side error failed the rubric, is skipped when the
    task changes no state and nothing could be planted (an answer-only task: out of the
    gate's proof), fails otherwise. The module's tally prints the three counts at the end."""
    out = gate_one(manager, CARDS[card_id], worlds, domain, variant)
    if out.failure:
        tally["failing"].append(f"{out.where}: {out.failure}")
        pytest.fail(f"{out.where}: {out.failure}")
    if out.planted is None:
        tally["without state change"].append(out.where)
        pytest.skip(f"{out.where} changes no state (its rubric allows no change): nothing to plant a side error in")
    tally["planted and caught"].append(f"{out.where}: {out.planted}")
    if out.answer_only:
        tally["answer-only"].append(out.where)
    print(f"{out.where}: planted {out.planted}")


def test_a_side_error_made_in_the_ui_fails_the_rubric(manager, worlds):
    """The reference of mail.send_draft, then one more click that stars an inbox email: the
    task's own criteria pass, no_side_damage fails."""

    card = CARDS["mail.send_draft"]
    world, ctx = next((w, b[0]) for w in worlds if (b := bindings(card, w)))
    row = candidate_row(render(card, world, ctx, "web", None, SEED))
    spec = task_spec(row, world)
    other = max((e for e in world.emails if e.folder == "inbox"), key=lambda e: e.sent_at)  # the top row
    reference = json.loads(row["reference_json"])
    careless = [*reference, {"do": "click", "id": "folder-inbox"}, {"do": "click", "id": f"star-{other.email_id}"}]
    with manager.acquire(env_spec("web", None)) as lease:
        for steps, damaged in ((reference, False), (careless, True)):
            obs = lease.reset(spec)
            _, error = run_reference(lease, obs, steps, "web", None, 30)
            assert error is None, error
            result = lease.evaluate()
            assert result.criteria[CRITERION_ID] == (0 if damaged else 1), result
            assert all(v for k, v in result.criteria.items() if k != CRITERION_ID), result
            assert result.success is not damaged
