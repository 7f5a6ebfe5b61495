"""Currency conversion with the world's exchange rates.

A world states a rate as a fact keyed ``fx_<FROM>_<TO>`` (``fx_EUR_USD = 1.08`` means one
euro buys 1.08 dollars). A world without such facts (the model has no rate table) gets a
deterministic table derived from its ``world_id`` and currency: reference rates perturbed by
at most +-3%, the same on every run, and every result says which source it used.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool
from guiforge.worlds.model import World

FX_FACT = re.compile(r"^fx[_.:-]([A-Za-z]{3})[_.:-]([A-Za-z]{3})$")
Code = Annotated[str, Field(pattern=r"^[A-Za-z]{3}$", description="ISO 4217 code such as EUR")]

# Units of each currency per US dollar: rounded reference values, only the anchor of the
# derived table (tasks must read rates from the world or from these tools, never from memory).
REFERENCE_PER_USD: dict[str, float] = {
    "USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 150.0, "CHF": 0.88, "CAD": 1.36,
    "AUD": 1.52, "NZD": 1.64, "CNY": 7.2, "INR": 83.0, "BRL": 5.0, "MXN": 17.0,
    "SEK": 10.5, "NOK": 10.6, "DKK": 6.9, "PLN": 4.0, "KRW": 1330.0, "SGD": 1.34,
    "HKD": 7.8, "ZAR": 18.5, "TRY": 32.0, "CZK": 23.0, "HUF": 360.0,
}


class RateTable(BaseModel):
    base: str
    rates: dict[str, float] = Field(description="units of each currency per one unit of base")
    source: Literal["world", "derived"]
    note: str


class Conversion(BaseModel):
    amount: float
    from_currency: str
    to_currency: str
    rate: float
    converted: float
    source: Literal["world", "derived"]
    note: str


def _unit_hash(*parts: str) -> float:
    """A number in [0, 1) fixed by ``parts``."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def rate_table(ctx: ToolContext) -> tuple[dict[str, float], Literal["world", "derived"], str]:
    """Units of each currency per USD, its source, and a note that says so."""
    world = ctx.world
    seed = world.world_id if world else "no-world"
    stated = {}
    for fact in world.facts if world else []:
        m = FX_FACT.match(fact.key)
        if m and isinstance(fact.value, int | float) and fact.value > 0:
            stated[(m.group(1).upper(), m.group(2).upper())] = float(fact.value)
    if stated:
        return _from_facts(stated), "world", f"rates from the world's fx_* facts ({len(stated)} stated)"
    per_usd = {
        code: round(ref * (1 + 0.06 * (_unit_hash(seed, code) - 0.5)), 6)
        for code, ref in REFERENCE_PER_USD.items()
    }
    per_usd["USD"] = 1.0
    if world and world.currency.upper() not in per_usd:
        # an unknown currency still gets a stable rate so the world's own money converts
        per_usd[world.currency.upper()] = round(0.5 + 9.5 * _unit_hash(seed, world.currency), 6)
    return per_usd, "derived", (f"the world states no fx_* rates: a deterministic table derived "
                                f"from world {seed!r}")


def _from_facts(stated: dict[tuple[str, str], float]) -> dict[str, float]:
    """Spread stated pairs into a table relative to one currency (breadth-first)."""
    edges: dict[str, dict[str, float]] = {}
    for (a, b), r in stated.items():
        edges.setdefault(a, {})[b] = r
        edges.setdefault(b, {})[a] = 1 / r
    anchor = "USD" if "USD" in edges else sorted(edges)[0]
    per_anchor = {anchor: 1.0}
    queue = [anchor]
    while queue:
        cur = queue.pop(0)
        for nxt, r in edges[cur].items():
            if nxt not in per_anchor:
                per_anchor[nxt] = per_anchor[cur] * r
                queue.append(nxt)
    return per_anchor


def _rate(table: dict[str, float], src: str, dst: str) -> float:
    missing = [c for c in (src, dst) if c not in table]
    if missing:
        raise ToolError(f"no exchange rate for {', '.join(missing)}; known: {', '.join(sorted(table))}")
    return table[dst] / table[src]


@tool("conversion")
def convert_currency(ctx: ToolContext, amount: float, from_currency: Code, to_currency: Code) -> Conversion:
    """Convert an amount of money between currencies (euros, dollars, pounds, yen, francs...:
    EUR to USD, GBP to JPY) using the world's exchange rates.

    Args:
        amount: the amount in from_currency
        from_currency: ISO 4217 code of the amount, e.g. EUR
        to_currency: ISO 4217 code to convert to, e.g. USD
    """
    table, source, note = rate_table(ctx)
    src, dst = from_currency.upper(), to_currency.upper()
    rate = _rate(table, src, dst)
    return Conversion(amount=amount, from_currency=src, to_currency=dst, rate=round(rate, 8),
                      converted=round(amount * rate, 2), source=source, note=note)


@tool("conversion")
def exchange_rates(ctx: ToolContext, base: Code | None = None) -> RateTable:
    """The exchange rate table: how many units of every currency one unit of the base buys.

    Args:
        base: ISO 4217 code to express rates against; defaults to the world's currency
    """
    table, source, note = rate_table(ctx)
    code = (base or (ctx.world.currency if ctx.world else "USD")).upper()
    rates = {c: round(_rate(table, code, c), 8) for c in sorted(table)}
    return RateTable(base=code, rates=rates, source=source, note=note)


def world_rate(world: World | None, src: str, dst: str) -> float:
    """The rate ``convert_currency`` uses in this world (for skill cards' expected answers)."""
    table, _, _ = rate_table(ToolContext(workspace=Path("."), world=world))
    return _rate(table, src.upper(), dst.upper())
