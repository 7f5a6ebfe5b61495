"""Currency with the world's rates (stated or derived) and unit conversion."""

from __future__ import annotations

import pytest
from tools_helpers import make_world, ok, run

from guiforge.envs.tools import ToolContext


def test_world_stated_rates_are_used_and_chained(ctx: ToolContext):
    ctx.world = make_world(facts=[
        {"key": "fx_EUR_USD", "value": 1.1, "kind": "number"},
        {"key": "fx_usd_jpy", "value": 150.0, "kind": "number"},
    ])
    r = ok(ctx, "convert_currency", amount=250, from_currency="eur", to_currency="USD")
    assert (r["converted"], r["rate"], r["source"]) == (275.0, 1.1, "world")
    # EUR -> JPY goes through USD: 1.1 * 150
    assert ok(ctx, "convert_currency", amount=10, from_currency="EUR", to_currency="JPY")["converted"] == 1650.0
    assert ok(ctx, "convert_currency", amount=165, from_currency="JPY", to_currency="EUR")["converted"] == 1.0
    missing = run(ctx, "convert_currency", amount=1, from_currency="EUR", to_currency="GBP")
    assert not missing.ok and "no exchange rate for GBP" in missing.error
    table = ok(ctx, "exchange_rates")
    assert table["base"] == "EUR" and table["rates"]["USD"] == 1.1 and table["source"] == "world"


def test_derived_rates_are_deterministic_per_world_and_say_so(ctx: ToolContext):
    first = ok(ctx, "convert_currency", amount=100, from_currency="EUR", to_currency="USD")
    again = ok(ctx, "convert_currency", amount=100, from_currency="EUR", to_currency="USD")
    assert first == again and first["source"] == "derived" and "deterministic" in first["note"]
    assert 100 < first["converted"] < 115  # near the reference 1/0.92 = 1.087, within +-3% each side
    ctx.world = make_world(world_id="w-other")
    other = ok(ctx, "convert_currency", amount=100, from_currency="EUR", to_currency="USD")
    assert other["converted"] != first["converted"]
    rates = ok(ctx, "exchange_rates", base="USD")["rates"]
    assert rates["USD"] == 1.0 and len(rates) >= 20


def test_unknown_world_currency_still_converts(ctx: ToolContext):
    ctx.world = make_world(currency="XAU")
    r = ok(ctx, "convert_currency", amount=2, from_currency="XAU", to_currency="USD")
    assert r["converted"] > 0 and r["source"] == "derived"


@pytest.mark.parametrize("tool,value,src,dst,expected", [
    ("convert_length", 26.2, "mi", "km", 42.1648128),
    ("convert_length", 12, "in", "ft", 1.0),
    ("convert_mass", 10, "lb", "kg", 4.5359237),
    ("convert_mass", 1, "st", "lb", 14.0),
    ("convert_volume", 5, "gal", "l", 18.92705892),
    ("convert_volume", 1, "cup", "ml", 236.5882365),
    ("convert_data_size", 5000, "MB", "GiB", 4.656612873),
    ("convert_data_size", 1, "KiB", "bit", 8192),
    ("convert_temperature", 350, "F", "C", 176.666667),
    ("convert_temperature", -40, "C", "F", -40.0),
    ("convert_temperature", 0, "K", "C", -273.15),
])
def test_units(ctx: ToolContext, tool, value, src, dst, expected):
    r = ok(ctx, tool, value=value, from_unit=src, to_unit=dst)
    assert r["result"] == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_generic_convert_units(ctx: ToolContext):
    assert ok(ctx, "convert_units", value=3, from_unit="km", to_unit="m")["result"] == 3000
    assert ok(ctx, "convert_units", value=100, from_unit="C", to_unit="F")["dimension"] == "temperature"
    bad = run(ctx, "convert_units", value=3, from_unit="km", to_unit="kg")
    assert not bad.ok and "cannot convert 'km' to 'kg'" in bad.error
    cold = run(ctx, "convert_temperature", value=-500, from_unit="F", to_unit="C")
    assert not cold.ok and "below absolute zero" in cold.error
