"""Jinja for scenario templates. A string that is exactly one ``{{ expression }}`` yields the
expression's native value (a number, a date, a list); any other string renders to text.
Compiled templates are cached because every world renders the same few hundred strings."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

import jinja2
from jinja2 import StrictUndefined, pass_context
from jinja2.meta import find_undeclared_variables

from guiforge.worlds.formats import format_date, format_money, format_number, slug
from guiforge.worlds.jinja_budget import BudgetedSandbox, budget
from guiforge.worlds.seeds import FALLBACK_LOCALE, LocaleInfo

_SINGLE = re.compile(r"^\s*\{\{(?P<expr>(?:(?!\}\}|\{\{).)*)\}\}\s*$", re.DOTALL)
LOCALE_KEY = "_locale"  # the context entry the money/date filters read their conventions from
_READY = "_guiforge_context"  # marks a context made by Renderer.context (globals included)


def _loc(ctx: Any) -> LocaleInfo:
    return ctx.get(LOCALE_KEY) or FALLBACK_LOCALE


def _as_date(v: Any) -> date:
    if isinstance(v, datetime):
        return v.date()
    if isinstance(v, date):
        return v
    if isinstance(v, str):
        return date.fromisoformat(v[:10])
    raise TypeError(f"expected a date, got {type(v).__name__} {v!r}")


@pass_context
def _money(ctx: Any, v: float, cents: bool = True) -> str:
    return format_money(float(v), _loc(ctx), cents)


@pass_context
def _num(ctx: Any, v: float, decimals: int = 0) -> str:
    return format_number(float(v), decimals, _loc(ctx))


@pass_context
def _date(ctx: Any, v: Any, year: bool = True) -> str:
    return format_date(_as_date(v), _loc(ctx), year=year)


@pass_context
def _longdate(ctx: Any, v: Any) -> str:
    return format_date(_as_date(v), _loc(ctx), weekday=True)


def _plus_days(v: Any, n: int) -> Any:
    return v + timedelta(days=int(n))


def _days_between(a: Any, b: Any) -> int:
    return (_as_date(b) - _as_date(a)).days


FILTERS: dict[str, Any] = {
    "money": _money,
    "num": _num,
    "date": _date,
    "longdate": _longdate,
    "iso": lambda v: _as_date(v).isoformat(),
    "time": lambda v: v.strftime("%H:%M"),
    "weekday": lambda v: _as_date(v).strftime("%A"),
    "month": lambda v: _as_date(v).strftime("%B"),
    "plus_days": _plus_days,
    "cents": lambda v: round(float(v), 2),
    "slug": slug,
    "first_name": lambda v: str(v).split()[0],
    "last_name": lambda v: str(v).split()[-1],
    "sum_of": lambda items, key: round(sum(float(x[key]) for x in items), 2),
}
GLOBALS: dict[str, Any] = {"days_between": _days_between}


class TemplateError(Exception):
    """A template failed to compile or render; the caller adds file, line and field."""


class Renderer:
    def __init__(self) -> None:
        # sandboxed: scenario files (and later LLM-written ones) must not reach Python
        # internals, nor run for minutes or build gigabytes (a time and size budget)
        self.env = BudgetedSandbox(undefined=StrictUndefined, keep_trailing_newline=False)
        self.env.filters.update(FILTERS)
        self.env.globals.update(GLOBALS)
        self._text: dict[str, jinja2.Template] = {}
        self._expr: dict[str, jinja2.Template] = {}

    def is_template(self, src: str) -> bool:
        return "{{" in src or "{%" in src

    def context(self, values: dict[str, Any]) -> dict[str, Any]:
        """A render context: ``values`` plus the environment's globals. Rendering shares this
        dict instead of copying it for every template (the copy dominated build time)."""
        return {**self.env.globals, **values, _READY: True}

    def text(self, src: str, ctx: dict[str, Any]) -> str:
        if not self.is_template(src):
            return src
        tpl = self._text.get(src)
        if tpl is None:
            tpl = self._text[src] = self._compile(src)
        return self.env.concat(self._run(tpl, ctx))  # type: ignore[attr-defined]

    def native(self, src: Any, ctx: dict[str, Any]) -> Any:
        """A single ``{{ expr }}`` gives its value; other strings render as text; non-strings
        pass through."""
        if not isinstance(src, str):
            return src
        m = _SINGLE.match(src)
        if not m:
            return self.text(src, ctx)
        tpl = self._expr.get(src)
        if tpl is None:
            # "{% set %}" leaves the expression's value, not its text, in the context's vars
            tpl = self._expr[src] = self._compile("{% set _result = (" + m["expr"] + ") %}")
        val = self._run(tpl, ctx, want="_result")
        if isinstance(val, jinja2.Undefined):
            raise TemplateError(f"{m['expr'].strip()!r} is undefined")
        return val

    def _run(self, tpl: jinja2.Template, ctx: dict[str, Any], want: str | None = None) -> Any:
        shared = ctx.get(_READY) is True
        context = tpl.new_context(ctx, shared=shared)
        try:
            with budget():
                out = list(tpl.root_render_func(context))
        except Exception as e:  # jinja raises many types; all mean "this template is wrong"
            raise TemplateError(_describe(e)) from None
        return context.vars[want] if want else out

    def names(self, src: str) -> set[str]:
        """The free variables of a template (for the loader's unknown-name check)."""
        try:
            return set(find_undeclared_variables(self.env.parse(src)))
        except jinja2.TemplateSyntaxError as e:
            raise TemplateError(
                f"template syntax (template line {e.lineno}): {e.message}"
            ) from None

    def _compile(self, src: str) -> jinja2.Template:
        try:
            return self.env.from_string(src)
        except jinja2.TemplateSyntaxError as e:
            raise TemplateError(
                f"template syntax (template line {e.lineno}): {e.message}"
            ) from None


def _describe(e: Exception) -> str:
    if isinstance(e, jinja2.UndefinedError):
        return f"undefined name: {e.message}"
    return f"{type(e).__name__}: {e}"


_shared: Renderer | None = None


def renderer() -> Renderer:
    """The process-wide renderer (its caches are what make building many worlds fast)."""
    global _shared
    if _shared is None:
        _shared = Renderer()
    return _shared
