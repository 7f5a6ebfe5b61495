"""Evaluate a scenario's ``vars``: each generator draws from the world's random stream (or
its locale's Faker), in declaration order, so later variables can use earlier ones."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from guiforge.worlds.dsl import (
    Choice,
    DateGen,
    Expr,
    FakerGen,
    Money,
    RandInt,
    Repeat,
    Sample,
    Value,
    VarSpec,
)
from guiforge.worlds.runtime import Run, workday
from guiforge.worlds.sources import cents
from guiforge.yamlfile import PathKey

# provider names that would change Faker's state or reach outside data generation
_FAKER_DENY = {"seed", "seed_instance", "seed_locale", "add_provider", "get_providers", "provider",
               "set_arguments", "get_arguments", "del_arguments", "format", "parse", "random"}  # fmt: skip


def faker_provider_ok(name: str) -> bool:
    return not name.startswith("_") and name not in _FAKER_DENY


def eval_vars(run: Run) -> None:
    for name, spec in run.scenario.vars.items():
        run.ctx[name] = evaluate(run, spec, ("vars", name), run.ctx)


def nice_step(x: float) -> float:
    """Round a scaled step to 1, 2 or 5 times a power of ten (5 EUR -> 500 INR, not 447)."""
    if x <= 0.01:
        return 0.01
    p = 10 ** math.floor(math.log10(x))
    return min((m * p for m in (1, 2, 5, 10)), key=lambda s: abs(s - x))


def evaluate(run: Run, spec: VarSpec, path: PathKey, ctx: dict[str, Any]) -> Any:
    rng = run.rng
    if isinstance(spec, RandInt):
        return rng.randint(*spec.randint)
    if isinstance(spec, Money):
        scale = run.loc.money_scale
        lo, hi = (run.number(b if not isinstance(b, str) else "{{ " + b + " }}", (*path, "money"), ctx)
                  for b in spec.money)  # fmt: skip
        if lo > hi:
            raise run.error((*path, "money"), f"range [{lo}, {hi}] must be ascending")
        v = rng.uniform(lo * scale, hi * scale)
        if spec.step:
            step = nice_step(spec.step * scale)
            v = max(step, round(v / step) * step)
        return max(0.01, cents(v))
    if isinstance(spec, Choice):
        options = _as_list(run, spec.choice, (*path, "choice"), ctx)
        if not options:
            raise run.error((*path, "choice"), "nothing to choose from")
        picked = (
            rng.choices(options, weights=spec.weights)[0] if spec.weights else rng.choice(options)
        )
        return run.deep(picked, (*path, "choice"), ctx)
    if isinstance(spec, Sample):
        options = _as_list(run, spec.sample, (*path, "sample"), ctx)
        k = spec.k if isinstance(spec.k, int) else rng.randint(*spec.k)
        picked = rng.sample(options, min(k, len(options)))
        return run.deep(picked, (*path, "sample"), ctx)
    if isinstance(spec, FakerGen):
        locale = run.text(spec.locale, (*path, "locale"), ctx) if spec.locale else None
        fk = run.faker(locale, path)
        fn = getattr(fk, spec.faker, None)
        if fn is None or not callable(fn) or not faker_provider_ok(spec.faker):
            raise run.error((*path, "faker"), f"no usable Faker provider {spec.faker!r}")
        args = run.deep(spec.args, (*path, "args"), ctx)
        try:
            out = fn(**args)
        except (TypeError, ValueError, AttributeError) as e:
            raise run.error((*path, "faker"), f"{spec.faker}: {e}") from None
        # multi-line addresses would break titles, subjects and one-line cells
        return ", ".join(p.strip() for p in out.splitlines()) if isinstance(out, str) else out
    if isinstance(spec, DateGen):
        off = spec.date if isinstance(spec.date, int) else rng.randint(*spec.date)
        d = run.base_date + timedelta(days=off)
        return workday(d) if spec.workday else d
    if isinstance(spec, Expr):
        v = run.expr(spec.expr, (*path, "expr"), ctx)
        if spec.round is not None:
            v = round(float(v), spec.round)
        return v
    if isinstance(spec, Value):
        return run.deep(spec.value, (*path, "value"), ctx)
    if isinstance(spec, Repeat):
        return _repeat(run, spec, path, ctx)
    raise AssertionError(f"unhandled generator {type(spec).__name__}")


def _as_list(run: Run, src: list[Any] | str, path: PathKey, ctx: dict[str, Any]) -> list[Any]:
    if isinstance(src, list):
        return src
    v = run.expr(src, path, ctx)
    if not isinstance(v, list | tuple):
        raise run.error(path, f"expected a list, got {type(v).__name__}")
    return list(v)


def _repeat(run: Run, spec: Repeat, path: PathKey, ctx: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(spec.repeat, str):
        v = run.expr(spec.repeat, (*path, "repeat"), ctx)
        if isinstance(v, int) and not isinstance(v, bool):
            elements = list(range(max(v, 0)))  # an expression may give a count
        elif isinstance(v, list | tuple):
            elements = list(v)
        else:
            raise run.error(
                (*path, "repeat"), f"expected a count or a list, got {type(v).__name__}"
            )
    else:
        n = spec.repeat if isinstance(spec.repeat, int) else run.rng.randint(*spec.repeat)
        elements = list(range(n))
    out = []
    for i, el in enumerate(elements):
        item: dict[str, Any] = {}
        local = {**ctx, "i": i, spec.as_: el}
        for field, sub in spec.item.items():
            item[field] = evaluate(run, sub, (*path, "item", field), local)
            local[field] = item[field]  # later fields see earlier ones by name
        out.append(item)
    return out
