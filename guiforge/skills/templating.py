"""Jinja for skill cards: a sandboxed environment with the world's formatting filters, and
a time and size budget on every render (:mod:`guiforge.worlds.jinja_budget`: cards may be
written by a model).

``render_value`` renders nested setup/rubric/reference structures; a string that is a
single ``{{ expression }}`` keeps the expression's native type (a number stays a number).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import cache, lru_cache
from typing import Any

from jinja2 import StrictUndefined, pass_context
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel

from guiforge.worlds.formats import format_date, format_money, format_number
from guiforge.worlds.jinja_budget import BudgetedSandbox, budget
from guiforge.worlds.seeds import locale_info

_SINGLE = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\}\}|\{\{).)*)\}\}\s*$", re.DOTALL)


def _as_date(v: Any) -> date:
    if isinstance(v, datetime):
        return v.date()
    if isinstance(v, date):
        return v
    return date.fromisoformat(str(v)[:10])


def _loc(ctx: Any):
    world = ctx.get("world")
    return locale_info(world.me.locale if world is not None else "en_US")


@pass_context
def _money(ctx: Any, v: float, cents: bool = True) -> str:
    return format_money(float(v), _loc(ctx), cents)


@pass_context
def _number(ctx: Any, v: float, decimals: int = 2) -> str:
    return format_number(float(v), decimals, _loc(ctx))


@pass_context
def _date(ctx: Any, v: Any, year: bool = True) -> str:
    return format_date(_as_date(v), _loc(ctx), year=year)


def _plain(v: float) -> str:
    """A number as an agent would type it: 1234.5 -> '1234.50', 12.0 -> '12'."""
    v = float(v)
    return str(int(v)) if v == int(v) else f"{v:.2f}"


class _WorldSandbox(BudgetedSandbox):
    """The sandbox, with a fast path for what cards read most: a declared field of a world
    model (``t.category`` over a hundred transactions, for every binding). Jinja's own path
    tries ``obj[name]`` first, which raises for a model, then vets the attribute: about a
    third of the time of instantiating the cards on dense worlds."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, BaseModel) and attribute in _fields(type(obj)):
            return getattr(obj, attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, BaseModel) and isinstance(argument, str) and argument in _fields(type(obj)):
            return getattr(obj, argument)
        return super().getitem(obj, argument)


@cache
def _fields(cls: type[BaseModel]) -> frozenset[str]:
    return frozenset(cls.model_fields)


@cache
def environment() -> SandboxedEnvironment:
    env = _WorldSandbox(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.filters.update(
        money=_money, number=_number, date=_date, plain=_plain,
        iso=lambda v: _as_date(v).isoformat(),
        first_name=lambda name: str(name).split()[0],
        last_name=lambda name: str(name).split()[-1],
        weekday=lambda v: _as_date(v).strftime("%A"),
        plus_days=lambda v, n: _as_date(v) + timedelta(days=int(n)),
    )
    return env


@lru_cache(maxsize=4096)
def _expression(expression: str):
    return environment().compile_expression(expression, undefined_to_none=False)


@lru_cache(maxsize=4096)
def _template(template: str):
    return environment().from_string(template)


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    # Compiling is far dearer than evaluating: each card's expressions compile once.
    with budget():
        return _expression(expression)(**context)


def render_text(template: str, context: dict[str, Any]) -> str:
    with budget():
        return _template(template).render(**context).strip()


def render_value(value: Any, context: dict[str, Any]) -> Any:
    with budget():  # one budget for the whole structure
        return _render_value(value, context)


def _render_value(value: Any, context: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        single = _SINGLE.match(value)
        if single:
            return evaluate(single.group("expr"), context)
        return render_text(value, context)
    if isinstance(value, dict):
        return {k: _render_value(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [_render_value(v, context) for v in value]
    return value
