"""What every action format shares: the reply a model gave (text, tool calls, reasoning),
the parse error fed back to it, and :func:`finish`, which turns one decoded action (in the
model's coordinates) into a canonical :class:`Action` or says exactly what is wrong.

A codec only maps its vocabulary: it finds the reply's final action(s) and renames them
into canonical fields; checking, coordinate conversion and the domain's action set are
done here, the same way for every format.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import ValidationError

from guiforge.envs.actions import GRID, Action, action_set
from guiforge.envs.keys import UnknownKey, canonical_keys
from guiforge.harness.formats.coords import CoordError, CoordSystem, coord_system


class ParseError(ValueError):
    """A reply that yields no single valid action; the message is fit to feed back."""


@dataclass(frozen=True)
class ToolCall:
    """One native tool call: ``arguments`` as the wire sent it (a JSON string, or an object)."""

    name: str
    arguments: Any = None
    id: str = ""


@dataclass
class ModelReply:
    """A reply as providers return it: content (may be empty), native tool calls, reasoning
    (``reasoning_content`` / ``reasoning`` fields, Anthropic thinking blocks)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None

    def raw(self) -> str:
        """The reply as one string for ``steps.raw_output``: the text alone when there is
        nothing else, else JSON with every part."""
        if not self.tool_calls and not self.reasoning:
            return self.text
        return json.dumps({"content": self.text or None, "reasoning": self.reasoning,
                           "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                          for c in self.tool_calls]}, ensure_ascii=False)


@dataclass
class Rendered:
    """The action set for a prompt: text for the system prompt, and native tools (neutral
    ``{"name", "description", "parameters"}`` function specs, or provider-typed tool dicts
    such as Anthropic's computer tool, which carry a ``type``)."""

    text: str
    tools: list[dict[str, Any]] | None = None


# The canonical fields each action type uses; any other field is an error, not ignored.
USED_FIELDS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "click": {"x", "y", "button"}, "double_click": {"x", "y"}, "right_click": {"x", "y"},
    "drag": {"x", "y", "x2", "y2", "button"}, "scroll": {"x", "y", "direction", "amount"},
    "type": {"text"}, "key": {"keys"}, "hotkey": {"keys"}, "goto": {"text"}, "back": set(),
    "wait": {"amount"}, "answer": {"answer"}, "terminate": {"status"}, "tap": {"x", "y"},
    "long_press": {"x", "y"}, "swipe": {"x", "y", "x2", "y2"}, "home": set(), "enter": set(),
    "open_app": {"app"}, "bash": {"text"}, "call_tool": {"text"},
}.items()}
POINT_FIELDS = (("x", "y"), ("x2", "y2"))

_THINK = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1>", re.S | re.I)
_THINK_OPEN_END = re.compile(r"^(.*?)</(?:think|thinking|reasoning)>", re.S | re.I)


def split_thinking(text: str, reasoning: str | None = None) -> tuple[str, str]:
    """(thinking, the rest): thinking blocks (``<think>``, also one whose opening tag the
    server stripped) and the reasoning field; the action is read from the rest only."""
    thoughts = [reasoning.strip()] if reasoning and reasoning.strip() else []
    text = text or ""
    m = _THINK_OPEN_END.match(text)
    if m and "<think" not in m.group(1).lower() and "<reasoning" not in m.group(1).lower():
        thoughts.append(m.group(1).strip())
        text = text[m.end():]
    for m in _THINK.finditer(text):
        thoughts.append(m.group(2).strip())
    rest = _THINK.sub("", text)
    return "\n\n".join(t for t in thoughts if t), rest.strip()


def join_thought(*parts: str | None) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def tool_arguments(call: ToolCall) -> dict[str, Any]:
    """A tool call's arguments as an object; bad JSON or a non-object is a parse error."""
    args = call.arguments
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            raise ParseError(f"the arguments of tool call {call.name!r} are not valid JSON ({exc.msg} at "
                             f"position {exc.pos}): {args[:120]!r}") from None
    if not isinstance(args, dict):
        raise ParseError(f"the arguments of tool call {call.name!r} must be a JSON object, "
                         f"not {type(args).__name__}: {json.dumps(args)[:120]}")
    return args


def take(args: dict[str, Any], name: str, allowed: set[str] | frozenset[str], required: tuple[str, ...] = ()) -> None:
    """Arguments ``name`` may not have are an error, as are missing required ones."""
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise ParseError(f"{name} does not take {', '.join(map(repr, extra))}"
                         + (f"; it takes {', '.join(sorted(allowed))}" if allowed else "; it takes no arguments"))
    missing = [k for k in required if args.get(k) is None]
    if missing:
        raise ParseError(f"{name} needs {', '.join(map(repr, missing))}")


def whole_number(value: Any, what: str) -> int:
    """A count (scroll clicks, seconds) as an integer; anything else is a parse error."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) <= 1e6:
        raise ParseError(f"{what} must be a number, got {json.dumps(value)[:40]}")
    return int(value)


def wait_seconds(value: Any) -> int | None:
    """A wait's duration as whole seconds (rounded up: a model asking for 1.5 s gets 2)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1e6:
        raise ParseError(f"wait's duration must be a number of seconds, got {json.dumps(value)[:40]}")
    return math.ceil(value)


def point_pair(args: dict[str, Any], key: str, action: str) -> tuple[Any, Any]:
    """``args[key]`` as the (x, y) of a point written ``[x, y]``; anything else is a parse error."""
    value = args.get(key)
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ParseError(f"{action} needs {key} as [x, y], got {json.dumps(value)[:60]}")
    return value[0], value[1]


def one_action(found: list[dict[str, Any]], hint: str) -> dict[str, Any]:
    """The reply's final action: none is an error, two different ones are an error."""
    if not found:
        raise ParseError(f"no action found: {hint}")
    distinct = []
    for a in found:
        if a not in distinct:
            distinct.append(a)
    if len(distinct) > 1:
        shown = "; ".join(json.dumps(a, ensure_ascii=False)[:100] for a in distinct[:3])
        raise ParseError(f"the reply holds {len(distinct)} different actions ({shown}); reply with exactly one")
    return distinct[0]


def finish(raw: dict[str, Any], domain: str, variant: str | None, coords: CoordSystem) -> Action:
    """One decoded action (canonical names, the model's coordinates) -> a checked Action."""
    raw = dict(raw)
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        raise ParseError(f"the action has no type: {json.dumps(raw, ensure_ascii=False)[:160]}")
    allowed = action_set(domain, variant)
    touch_scroll = kind == "scroll" and "scroll" not in allowed and "swipe" in allowed
    if touch_scroll:  # a phone scrolls by swiping; made a swipe once its point is on the grid
        kind = "swipe"
    if kind not in allowed:
        raise ParseError(f"{kind!r} is not an action here; use one of: {', '.join(sorted(allowed))}")
    if kind == "answer" and "text" in raw:  # the answer may arrive as text; both must agree
        text = raw.pop("text")
        if raw.get("answer") is None:
            raw["answer"] = text
        elif text != raw["answer"]:
            raise ParseError("answer has both 'answer' and a different 'text'; give the answer once")
    raw = {k: v for k, v in raw.items() if v is not None}
    used = USED_FIELDS.get("scroll" if touch_scroll else kind, frozenset())
    extra = sorted(set(raw) - used - {"type"})
    if extra:
        raise ParseError(f"{kind} does not use {', '.join(map(repr, extra))}"
                         + (f"; it uses {', '.join(sorted(used))}" if used else "; it takes no fields"))
    for xk, yk in POINT_FIELDS:
        if xk in raw or yk in raw:
            if xk not in raw or yk not in raw:
                raise ParseError(f"{kind} needs both {xk} and {yk}")
            try:
                raw[xk], raw[yk] = coords.from_model(raw[xk], raw[yk], (xk, yk))
            except CoordError as exc:
                raise ParseError(str(exc)) from None
    if "keys" in raw:
        try:
            raw["keys"] = canonical_keys(raw["keys"])
        except UnknownKey as exc:
            raise ParseError(str(exc)) from None
    if touch_scroll:
        raw = swipe_for_scroll(raw)
    try:
        return Action.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "action"
        raise ParseError(f"invalid action {json.dumps(raw, ensure_ascii=False)[:200]}: {where}: {first['msg']}") from None


SWIPE = 400  # grid units a scroll's swipe travels (the scripted teacher's, 40% of the screen)
_SWIPE_DELTA = {"down": (0, -SWIPE), "up": (0, SWIPE), "right": (-SWIPE, 0), "left": (SWIPE, 0)}


def swipe_for_scroll(raw: dict[str, Any]) -> dict[str, Any]:
    """A scroll on a touch screen as the swipe that does it: the finger moves against the
    direction to reveal (scroll down = swipe up) by :data:`SWIPE`, through the scroll's point
    (the middle of the screen without one), shifted to stay on the screen. The amount is
    not kept: a swipe moves the content by the finger's distance."""
    direction = raw.get("direction")
    if direction not in _SWIPE_DELTA:
        raise ParseError(f"scroll's direction must be up, down, left or right, not {direction!r}")
    dx, dy = _SWIPE_DELTA[direction]
    x, y = raw.get("x", GRID // 2), raw.get("y", GRID // 2)
    x0, y0 = x - dx // 2, y - dy // 2
    x0 -= min(0, x0, x0 + dx) + max(0, x0 - GRID, x0 + dx - GRID)
    y0 -= min(0, y0, y0 + dy) + max(0, y0 - GRID, y0 + dy - GRID)
    return {"type": "swipe", "x": x0, "y": y0, "x2": x0 + dx, "y2": y0 + dy}


def model_fields(action: Action, coords: CoordSystem) -> dict[str, Any]:
    """The action's used fields, points in the model's coordinates (the inverse of finish)."""
    out = action.model_dump(exclude_none=True)
    for xk, yk in POINT_FIELDS:
        if xk in out:
            out[xk], out[yk] = coords.to_model(out[xk], out[yk])
    return out


class ActionFormat(ABC):
    """A codec: renders a domain's action set for the prompt, encodes a canonical action as
    the model writes it, decodes a reply into (thought, Action)."""

    name: str = ""
    native_tools: bool = False  # the request carries the action set as tools
    default_coords: str = "grid999"
    template: str = "system.j2"  # under guiforge/harness/prompts/
    description: str = ""
    # settings a model role may give (name -> a check that raises ValueError on a bad value)
    options: ClassVar[dict[str, Callable[[Any], None]]] = {}

    def configured(self, **options: Any) -> ActionFormat:
        """A copy of this codec with ``options`` set (each one a class attribute it declares
        in ``options``); an option it does not take is an error."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValueError(f"action format {self.name} does not take {', '.join(unknown)}"
                             + (f"; it takes {', '.join(self.options)}" if self.options else ""))
        copy = type(self)()
        for key, value in options.items():
            self.options[key](value)
            setattr(copy, key, value)
        return copy

    def coords(self, coords: CoordSystem | str | None = None, frame: tuple[int, int] | None = None,
               **kwargs: Any) -> CoordSystem:
        return coord_system(coords or self.default_coords, frame, **kwargs)

    @abstractmethod
    def render(self, domain: str, variant: str | None, coords: CoordSystem) -> Rendered:
        """The action set as this model expects to be told it."""

    @abstractmethod
    def encode_action(self, thought: str, action: Action, coords: CoordSystem,
                      domain: str | None = None) -> str | dict[str, Any]:
        """The reply this model would write for ``action`` (an SFT target); ``domain``
        matters where a format names one action differently per domain."""

    @abstractmethod
    def decode_reply(self, reply: ModelReply, domain: str, variant: str | None,
                     coords: CoordSystem) -> tuple[str, Action]:
        """(thought, the reply's single final action); raises ParseError."""

    # -- the public API, with coordinates given by name and frame ------------------------
    def encode(self, thought: str, action: Action, frame: tuple[int, int] | None = None,
               coords: CoordSystem | str | None = None, domain: str | None = None,
               **kwargs: Any) -> str | dict[str, Any]:
        return self.encode_action(thought, action, self.coords(coords, frame, **kwargs), domain)

    @staticmethod
    def as_reply(encoded: str | dict[str, Any]) -> ModelReply:
        """What :meth:`encode` returned, as the reply a provider would hand back."""
        return ModelReply(encoded) if isinstance(encoded, str) else ModelReply(json.dumps(encoded))

    def decode(self, reply: ModelReply | str | dict[str, Any], domain: str, variant: str | None = None,
               frame: tuple[int, int] | None = None, coords: CoordSystem | str | None = None,
               **kwargs: Any) -> tuple[str, Action]:
        if not isinstance(reply, ModelReply):
            reply = self.as_reply(reply)
        return self.parse(reply, domain, variant, self.coords(coords, frame, **kwargs))

    def parse(self, reply: ModelReply, domain: str, variant: str | None, coords: CoordSystem) -> tuple[str, Action]:
        """:meth:`decode_reply` where anything a reply can make go wrong is a ParseError
        (a value of the wrong type deep in an argument), never an exception that escapes.

        A reply whose only part is its reasoning field is read from there: a reasoning
        parser (vLLM's) puts the whole answer in ``reasoning_content`` when the model never
        closes ``</think>``, and the action the model wrote is at its end."""
        if reply.reasoning and not reply.tool_calls and not (reply.text or "").strip():
            reply = ModelReply(reply.reasoning)
        try:
            return self.decode_reply(reply, domain, variant, coords)
        except ParseError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, ArithmeticError, RecursionError) as exc:
            raise ParseError(f"the action could not be read ({type(exc).__name__}: {str(exc)[:160]})") from None
