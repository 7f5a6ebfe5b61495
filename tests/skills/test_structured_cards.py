"""The cards that need structured documents: writer.update_table_cell (a value in the table
under a named heading) and impress.chart_extreme_info (a chart's highest or lowest value)
bind on the sample worlds and pass the package gate in real LibreOffice: the verifier fails
on the initial files, passes after the reference, fails again after reset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from guiforge.skills.check import sample_worlds
from guiforge.skills.instantiate import bindings, render
from guiforge.skills.loader import load_cards

SKILLS = Path(__file__).resolve().parents[2] / "skills"
CARDS = ("writer.update_table_cell", "impress.chart_extreme_info")
SEED = 1


@pytest.fixture(scope="module")
def worlds():
    return sample_worlds(10)


def test_the_cards_bind_on_the_scenarios_with_tables_and_charts(worlds):
    cards = load_cards(SKILLS)
    bound = {cid: sorted(w.scenario for w in worlds if bindings(cards[cid], w)) for cid in CARDS}
    assert len(bound["writer.update_table_cell"]) >= 7, bound
    assert {"renovation_quotes", "teaching_class"} <= set(bound["impress.chart_extreme_info"]), bound
    # a row is named by a label that occurs once and is not found earlier in the document
    ctx = bindings(cards["writer.update_table_cell"], next(w for w in worlds if w.scenario == "moving_house"))[0]
    assert ctx["column"] == "Boxes" and int(ctx["new"]) == int(ctx["old"]) + 2


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("Xvfb", "xdotool", "soffice")),
                    reason="needs Xvfb, xdotool and LibreOffice")
def test_the_cards_pass_the_package_gate(worlds):
    from guiforge.envs import EnvManager, default_factories
    from guiforge.gates.package_gate import PackageGate
    from guiforge.tasks.candidates import candidate_row
    from guiforge.tasks.materialize import task_spec

    cards = load_cards(SKILLS)
    failures = []
    with EnvManager(default_factories(), max_instances=1) as manager:
        gate = PackageGate(manager)
        for cid in CARDS:
            card = cards[cid]
            world, ctx = next((w, b[0]) for w in worlds if (b := bindings(card, w)))
            c = render(card, world, ctx, "desktop", card.variants[0], SEED)
            row = candidate_row(c)
            verdict = gate.check(task_spec(row, world), json.loads(row["reference_json"]), c.variant)
            if not verdict.passed:
                failures.append(f"{cid} ({world.scenario}): {verdict.reason}")
    assert not failures, failures
