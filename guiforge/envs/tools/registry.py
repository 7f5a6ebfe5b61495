"""The tool registry: typed Python functions become tools with JSON schemas.

A tool is a plain function ``fn(ctx, **params) -> Result``. Its type hints become a pydantic
model, which is both the JSON schema the agent sees and the validator of its arguments; its
docstring gives the description (first paragraph) and the parameter descriptions (``Args:``
lines), so no schema is written by hand. A call never raises: bad arguments, a missing file
or a crash inside the tool come back as a :class:`ToolResult` with ``ok=False``.
"""

from __future__ import annotations

import inspect
import re
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model


class ToolError(Exception):
    """A failure the agent can act on (missing file, unknown key); its message is one line
    that says what failed and what to do."""


class ToolResult(BaseModel):
    ok: bool
    value: Any = None
    error: str | None = None
    images: list[str] = Field(default_factory=list, description="image handles this call produced")
    duration_ms: float = 0.0


@dataclass(frozen=True)
class Tool:
    name: str
    area: str
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    result_adapter: TypeAdapter
    param_docs: dict[str, str]

    def schema(self) -> dict[str, Any]:
        """The function schema in the OpenAI/Anthropic shape: name, description, parameters."""
        return {"name": self.name, "description": self.description,
                "parameters": _strip_titles(self.args_model.model_json_schema())}

    def result_schema(self) -> dict[str, Any]:
        return _strip_titles(self.result_adapter.json_schema())

    def summary(self) -> str:
        first = _SENTENCE_END.split(self.description, maxsplit=1)[0]
        return f"{self.name}: {first.rstrip('.')}"


REGISTRY: dict[str, Tool] = {}
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s+(?=[A-Z])")  # a sentence end, not "e.g."
_ARGS_DOC = re.compile(r"^\s+([A-Za-z_]\w*):\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (one-paragraph description, {param: description})."""
    text = inspect.cleandoc(doc or "")
    head, _, args = text.partition("\nArgs:")
    description = " ".join(head.split())
    params: dict[str, str] = {}
    last: str | None = None
    for line in args.splitlines():
        m = _ARGS_DOC.match(line)
        if m:
            last = m.group(1)
            params[last] = m.group(2).strip()
        elif last and line.strip():
            params[last] += " " + line.strip()
    return description, params


def tool(area: str, name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a tool of ``area``. Its first parameter must be ``ctx``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        tool_name = name or fn.__name__
        if tool_name in REGISTRY:
            raise ValueError(f"tool {tool_name!r} is registered twice")
        hints = typing.get_type_hints(fn, include_extras=True)
        description, docs = parse_docstring(fn.__doc__)
        if not description:
            raise ValueError(f"tool {tool_name!r} needs a docstring: it is the agent's description")
        params = list(inspect.signature(fn).parameters.values())
        if not params or params[0].name != "ctx":
            raise ValueError(f"tool {tool_name!r}: the first parameter must be ctx")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            if p.name not in docs:
                raise ValueError(f"tool {tool_name!r}: parameter {p.name!r} is not described in Args:")
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (hints[p.name], Field(default, description=docs[p.name]))
        model = create_model(
            f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )
        REGISTRY[tool_name] = Tool(
            name=tool_name, area=area, description=description, fn=fn, args_model=model,
            result_adapter=TypeAdapter(hints.get("return", Any)), param_docs=docs,
        )
        return fn

    return register


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """All argument problems on one line, each naming the parameter."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required parameter {where!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unknown parameter {where!r}")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 40 else got[:37] + "..."
            parts.append(f"{where}: {err['msg']} (got {got})")
    return (f"invalid arguments for {tool_name}: " + "; ".join(parts)
            + f" -- see its schema with search_tool(query={tool_name!r})")


def call_tool(tool: Tool, ctx: Any, arguments: Any) -> ToolResult:
    """Validate ``arguments`` against the tool's schema and run it; never raises."""
    started = time.perf_counter()
    ctx.produced = []

    def done(**kw: Any) -> ToolResult:
        return ToolResult(images=list(ctx.produced),
                          duration_ms=round((time.perf_counter() - started) * 1000, 2), **kw)

    if not isinstance(arguments, dict):
        return done(ok=False, error=f"arguments for {tool.name} must be a JSON object, got "
                                    f"{type(arguments).__name__}")
    try:
        args = tool.args_model.model_validate(arguments)
    except ValidationError as exc:
        return done(ok=False, error=format_validation_error(tool.name, exc))
    kwargs = {name: getattr(args, name) for name in type(args).model_fields}
    try:
        value = tool.fn(ctx, **kwargs)
        return done(ok=True, value=tool.result_adapter.dump_python(value, mode="json"))
    except ToolError as exc:
        return done(ok=False, error=f"{tool.name}: {exc}")
    except Exception as exc:  # a bug or an unexpected input: the agent sees it, the env survives
        return done(ok=False, error=f"{tool.name} failed: {type(exc).__name__}: {exc}")


def _strip_titles(schema: Any, parent: str | None = None) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they repeat the names and cost tokens."""
    if isinstance(schema, dict):
        return {k: _strip_titles(v, k) for k, v in schema.items()
                if not (k == "title" and parent != "properties" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_strip_titles(v, parent) for v in schema]
    return schema
