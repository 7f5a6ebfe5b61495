"""Prices, reason patterns and thresholds: the pieces stats, the report and the viewer share.
A bad prices or thresholds file is one line naming the file and the field."""

from __future__ import annotations

import pytest

from guiforge.errors import GuiforgeError
from guiforge.report.advice import load_thresholds
from guiforge.report.costs import Price, load_prices, price_for, role_prices
from guiforge.report.patterns import reason_pattern


def test_a_pipeline_price_wins_then_the_table_by_full_then_bare_name():
    table = {"gpt-4o-mini": Price(0.15, 0.6, "prices.yaml"), "openai:special": Price(1, 2, "prices.yaml")}
    pipeline = role_prices({"models": {"judge": {"provider": "openai", "model": "gpt-4o-mini",
                                                 "prices": {"input_per_mtok": 9.0, "output_per_mtok": 9.0}},
                                       "teacher": {"provider": "openai", "model": "free",
                                                   "prices": {"input_per_mtok": 0.0, "output_per_mtok": 0.0}}}})
    assert price_for("openai:gpt-4o-mini", table, pipeline).source == "pipeline (judge)"
    assert price_for("openai:gpt-4o-mini", table, {}).input_per_mtok == 0.15
    assert price_for("openai:special", table, {}).output_per_mtok == 2
    assert price_for("openai:free", table, pipeline) is None  # prices left at 0 are unset, not "free"
    assert price_for("anthropic:unknown", table, {}) is None
    assert Price(2.0, 10.0, "x").cost(1_000_000, 500_000) == pytest.approx(7.0)


def test_the_shipped_prices_file_loads():
    prices = load_prices()
    assert prices["gpt-4o-mini"].input_per_mtok > 0 and prices["offline"].output_per_mtok == 0


@pytest.mark.parametrize("body, field", [
    ("models:\n  gpt-x: {input_per_mtok: cheap}\n", "models.gpt-x"),
    ("models:\n  gpt-x: {input: 1}\n", "models.gpt-x"),
    ("models:\n  gpt-x: {input_per_mtok: -1}\n", "models.gpt-x"),
    ("models: [1, 2]\n", "models"),
])
def test_a_bad_prices_file_is_one_line(tmp_path, body, field):
    path = tmp_path / "prices.yaml"
    path.write_text(body)
    with pytest.raises(GuiforgeError) as err:
        load_prices(path)
    assert str(path) in str(err.value) and field in str(err.value) and "\n" not in str(err.value)


def test_a_bad_thresholds_file_is_one_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("judge_kappa_min: high\n")
    with pytest.raises(GuiforgeError, match="judge_kappa_min: must be a number"):
        load_thresholds(path)
    path.write_text("kappa: 0.3\n")
    with pytest.raises(GuiforgeError, match="kappa: unknown threshold"):
        load_thresholds(path)
    path.write_text("judge_kappa_min: 0.3\n")
    assert load_thresholds(path)["judge_kappa_min"] == 0.3 and load_thresholds(path)["min_n"] == 5


def test_reasons_that_differ_only_in_ids_and_numbers_share_a_pattern():
    a = reason_pattern("task tsk_81c2a9 failed 3 of 5 checks ('total is 412.50')")
    b = reason_pattern("task tsk_0f77b1 failed 1 of 4 checks ('total is 9.99')")
    assert a == b == "task <id> failed # of # checks ('…')"
    assert reason_pattern("not accepted under policy both") == "not accepted under policy both"
    assert reason_pattern(None) == ""
