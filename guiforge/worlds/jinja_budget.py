"""A time and size budget for sandboxed Jinja: skill cards and scenario templates may be
written by a model, and ``{{ 9**(9**9) }}`` (minutes of one C call) or ``'a' * 10**8``
(100 MB) must fail as a template error, not hang or swell the process.

Jinja's sandbox stops attribute escapes, not cost. :class:`BudgetedSandbox` adds it:

- before any operation that can build a large value (``*``, ``**``, ``%``, ``+``, ``~``,
  ``str.format``, the size-taking string methods and filters) the result's size is
  estimated and refused over :data:`MAX_CHARS` characters (or :data:`MAX_INT_BITS` bits);
  every call's and filter's result is checked after it too;
- a render's output (what it yields, what blocks capture) is capped at :data:`MAX_OUTPUT`;
- every loop item, call and operator counts against a deadline (:data:`TIME_S`) and an
  iteration cap, so a nest of loops that outputs nothing still ends.

A render enters :func:`budget` (the card and world renderers do); nested renders share
the outer budget.
"""

from __future__ import annotations

import string
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import TemplateRuntimeError
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import _PassArg

MAX_CHARS = 1_000_000  # the longest string (or list) any expression may build
MAX_OUTPUT = 1_000_000  # characters one render may output, captured blocks included
MAX_INT_BITS = 1 << 16  # about 20,000 decimal digits
MAX_ITERATIONS = 1_000_000  # loop items per render
TIME_S = 5.0  # wall time per render

_SIZE_ARGS = {"center", "ljust", "rjust", "zfill", "expandtabs"}  # str methods: arg = width
# Jinja's filters whose result can be far larger than their input; the others are called
# as they are (a filter costs nothing extra on the hot path of card instantiation)
_AMPLIFYING_FILTERS = {"center", "indent", "batch", "slice", "tojson", "wordwrap", "replace", "format", "join"}
_SIZED = (str, bytes, list, tuple, dict, set, frozenset)


class TemplateBudgetError(TemplateRuntimeError):
    """A template went over its time or size budget."""


@dataclass
class _Budget:
    deadline: float
    iterations: int = 0
    output: int = 0


_local = threading.local()


class budget:  # noqa: N801 -- used as a function: ``with budget():``
    """Render inside a budget; a render already inside one keeps the outer budget. A class,
    not a generator: card instantiation enters it some hundred thousand times."""

    __slots__ = ("seconds", "owner")

    def __init__(self, seconds: float = TIME_S):
        self.seconds = seconds
        self.owner = False

    def __enter__(self) -> None:
        if getattr(_local, "budget", None) is None:
            _local.budget = _Budget(time.monotonic() + self.seconds)
            self.owner = True

    def __exit__(self, *exc: object) -> None:
        if self.owner:
            _local.budget = None


def _active() -> _Budget | None:
    return getattr(_local, "budget", None)


def _tick() -> None:
    b = _active()
    if b is not None and time.monotonic() > b.deadline:
        raise TemplateBudgetError("the template ran past its time budget; simplify its loops")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, _SIZED) else 0


def _refuse(what: str, size: int, limit: int = MAX_CHARS) -> None:
    if size > limit:
        raise TemplateBudgetError(f"{what} would be {size:,} long, over the template budget of {limit:,}")


def _checked(value: Any, what: str) -> Any:
    _refuse(what, _size(value))
    if isinstance(value, int) and not isinstance(value, bool):
        _refuse(f"{what} (an integer, in bits)", value.bit_length(), MAX_INT_BITS)
    return value


def _format_estimate(fmt: str, values: Iterable[Any]) -> int:
    """An upper bound for ``fmt.format(...)`` or ``fmt % ...``: each field at its widest."""
    widest = max((len(str(v)) for v in values), default=0)
    fields, width = 0, 0
    for _, name, spec, _ in string.Formatter().parse(fmt):
        if name is not None:
            fields += 1
            width = max(width, *(int(n) for n in _numbers(spec or "")), 0)
    return len(fmt) + fields * (widest + width)


def _percent_estimate(fmt: str, args: Any) -> int:
    values = list(args.values()) if isinstance(args, dict) else list(args) if isinstance(args, tuple) else [args]
    if any(isinstance(v, int) and not isinstance(v, bool) and v > MAX_CHARS for v in values):
        _refuse("a '*' width", max(values))  # '%*s' takes its width from the arguments
    fields = fmt.count("%")
    widest = max((len(str(v)) for v in values), default=0)
    width = max((int(n) for n in _numbers(fmt)), default=0)
    return len(fmt) + fields * (widest + width)


def _numbers(text: str) -> list[str]:
    out, digits = [], ""
    for ch in text + " ":
        if ch.isdigit():
            digits += ch
        elif digits:
            out.append(digits if len(digits) < 12 else "9" * 12)
            digits = ""
    return out


def _check_binop(operator: str, left: Any, right: Any) -> None:
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0:
        _refuse("a power (in bits)", max(abs(left), 1).bit_length() * right, MAX_INT_BITS)
    elif operator == "*":
        if ints:
            _refuse("a product (in bits)", abs(left).bit_length() + abs(right).bit_length(), MAX_INT_BITS)
        elif isinstance(right, int) and isinstance(left, _SIZED):
            _refuse("a repeated value", _size(left) * right)
        elif isinstance(left, int) and isinstance(right, _SIZED):
            _refuse("a repeated value", _size(right) * left)
    elif operator == "%" and isinstance(left, str):
        _refuse("a formatted string", _percent_estimate(left, right))
    elif operator == "+":
        _refuse("a concatenation", _size(left) + _size(right))


def _check_method(obj: Any, args: tuple, kwargs: dict) -> None:
    owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", "")
    if not isinstance(owner, str | bytes):
        return
    if name in _SIZE_ARGS:
        widths = [a for a in (*args, *kwargs.values()) if isinstance(a, int)]
        tabs = owner.count("\t" if isinstance(owner, str) else b"\t") if name == "expandtabs" else 1
        _refuse(f"str.{name}", max([len(owner), *(w * max(tabs, 1) for w in widths)]))
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        count = owner.count(old) if old else len(owner) + 1
        _refuse("str.replace", len(owner) + count * max(len(new) - len(old), 0))
    elif name == "join" and args and isinstance(args[0], list | tuple):
        items = args[0]
        _refuse("str.join", len(owner) * len(items) + sum(_size(i) for i in items))


def _filter(name: str, fn: Any) -> Any:
    """A filter whose size-taking arguments and result stay inside the budget."""
    skip = 0 if _PassArg.from_obj(fn) is None else 1  # a context/environment comes first

    def budgeted(*all_args: Any, **kwargs: Any) -> Any:
        _tick()
        args = all_args[skip:]
        value = args[0] if args else None
        extra = [a for a in (*args[1:], *kwargs.values()) if isinstance(a, int) and not isinstance(a, bool)]
        if name in ("center", "indent", "batch", "slice", "tojson", "wordwrap") and extra:
            lines = value.count("\n") + 1 if isinstance(value, str) else 1
            _refuse(f"the {name} filter", _size(value) + max(extra) * lines)
        elif name == "replace" and isinstance(value, str) and len(args) >= 3:
            _check_method(value.replace, args[1:3], {})
        elif name == "format" and isinstance(value, str):
            _refuse("the format filter", _percent_estimate(value, tuple(args[1:]) or dict(kwargs)))
        elif name == "join" and isinstance(value, list | tuple):
            sep = args[1] if len(args) > 1 else kwargs.get("d", "")
            _refuse("the join filter", _size(sep) * len(value) + sum(len(str(v)) for v in value))
        return _checked(fn(*all_args, **kwargs), f"the {name} filter's result")

    budgeted.__dict__.update(getattr(fn, "__dict__", {}))  # keeps pass_context and friends
    return budgeted


class _BudgetedFilters(dict):
    """The filter table: every filter put in it (built-in or added later) is budgeted."""

    def __setitem__(self, name: str, fn: Any) -> None:
        super().__setitem__(name, _filter(name, fn) if name in _AMPLIFYING_FILTERS else fn)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for name, fn in dict(*args, **kwargs).items():
            self[name] = fn


class _BudgetedCodeGenerator(CodeGenerator):
    """Compiles loops, ``~`` and output through the environment's budget hooks."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        node.iter = nodes.Call(nodes.EnvironmentAttribute("budget_iter"), [node.iter], [], None, None)
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.budget_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write("environment.budget_out(")
        super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        super()._output_child_post(node, frame, finalize)
        self.write(")")


class BudgetedSandbox(SandboxedEnvironment):
    """A sandboxed environment whose renders stay inside :func:`budget`."""

    code_generator_class = _BudgetedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})  # intercepted ops are not constant-folded

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.globals.pop("lipsum", None)  # n paragraphs of filler: nothing a card needs
        filters = _BudgetedFilters()
        filters.update(self.filters)
        self.filters = filters

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        _check_binop(operator, left, right)
        return _checked(super().call_binop(context, operator, left, right), f"'{operator}'")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _tick()
        _check_method(__obj, args, kwargs)
        return _checked(super().call(__context, __obj, *args, **kwargs), "a call's result")

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__

        def format_within_budget(*args: Any, **kwargs: Any) -> str:
            values = [*args, *kwargs.values(), *(args[0].values() if args and isinstance(args[0], dict) else ())]
            _refuse("a formatted string", _format_estimate(fmt, values))
            return wrapped(*args, **kwargs)

        return format_within_budget

    def budget_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        b = _active()
        for item in iterable:
            if b is not None:
                b.iterations += 1
                if b.iterations > MAX_ITERATIONS:
                    raise TemplateBudgetError(f"the template's loops ran over {MAX_ITERATIONS:,} items")
                if time.monotonic() > b.deadline:
                    raise TemplateBudgetError("the template ran past its time budget; simplify its loops")
            yield item

    def budget_concat(self, parts: tuple[Any, ...]) -> str:
        texts = [str(p) for p in parts]
        _refuse("a '~' concatenation", sum(map(len, texts)))
        return "".join(texts)

    def budget_out(self, text: str) -> str:
        b = _active()
        if b is not None:
            b.output += len(text)
            _refuse("the template's output", b.output, MAX_OUTPUT)
        return text
