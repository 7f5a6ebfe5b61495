"""Native tool calling: the domain's action set as tools, read back from the reply's tool
calls (content may be null; the thought is the reasoning plus any text).

- ``openai_tools``: one function per action (OpenAI ``tools``; vLLM/SGLang with a tool parser).
- ``anthropic_tools``: the same functions as Anthropic tools (``tool_use`` blocks).
- ``anthropic_computer``: Anthropic's computer-use tool (``computer`` with ``left_click``,
  ``coordinate`` in screen pixels, ...) and its ``bash`` tool, plus functions for the actions
  it has no word for (answer, terminate, goto, mobile gestures, call_tool).
"""

from __future__ import annotations

import json
import re
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.harness.actions_doc import ACTION_DOCS
from guiforge.harness.formats.base import (
    USED_FIELDS,
    ActionFormat,
    ModelReply,
    ParseError,
    Rendered,
    ToolCall,
    finish,
    join_thought,
    model_fields,
    one_action,
    point_pair,
    split_thinking,
    take,
    tool_arguments,
)
from guiforge.harness.formats.coords import CoordSystem

_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_DESCRIPTIONS = {k: v.split(" - ", 1)[1] if " - " in v else k.replace("_", " ") for k, v in ACTION_DOCS.items()}
HINT = "call exactly one of the tools"


def field_schema(name: str, coords: CoordSystem) -> dict[str, Any]:
    if name in ("x", "y", "x2", "y2"):
        return {"type": "integer" if coords.integral else "number", "description": coords.describe()}
    if name == "keys":
        return {"type": "array", "items": {"type": "string"}, "description": "key names, e.g. [\"ctrl\", \"s\"]"}
    if name == "direction":
        return {"type": "string", "enum": ["up", "down", "left", "right"]}
    if name == "status":
        return {"type": "string", "enum": ["success", "failure", "infeasible"]}
    if name == "button":
        return {"type": "string", "enum": ["left", "right", "middle"]}
    if name == "amount":
        return {"type": "integer", "description": "scroll clicks, or seconds to wait"}
    return {"type": "string"}


def function_spec(kind: str, coords: CoordSystem) -> dict[str, Any]:
    """One action as a neutral function spec: {name, description, parameters}."""
    if kind == "call_tool":
        params = {"type": "object", "properties": {"name": {"type": "string", "description": "the tool's name"},
                                                   "arguments": {"type": "object"}},
                  "required": ["name"]}
        return {"name": kind, "description": "call a tool of the registry", "parameters": params}
    used = sorted(USED_FIELDS[kind])
    required = [f for f in used if f not in ("amount", "button") and not (kind == "scroll" and f in ("x", "y"))]
    return {"name": kind, "description": _DESCRIPTIONS.get(kind, kind),
            "parameters": {"type": "object", "properties": {f: field_schema(f, coords) for f in used},
                           "required": required}}


def call_from_function(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A function tool call -> canonical action fields (model coordinates)."""
    if name == "call_tool":
        take(args, name, {"name", "arguments"}, ("name",))
        inner = args.get("arguments") or {}
        if isinstance(inner, str):
            inner = tool_arguments(ToolCall(str(args["name"]), inner))
        return {"type": "call_tool", "text": json.dumps({"name": args["name"], "arguments": inner})}
    if name not in USED_FIELDS:
        raise ParseError(f"there is no tool {name!r}")
    take(args, name, USED_FIELDS[name] | ({"text"} if name == "answer" else set()))
    return {"type": name, **args}


def function_arguments(action: Action, coords: CoordSystem) -> tuple[str, dict[str, Any]]:
    fields = model_fields(action, coords)
    kind = fields.pop("type")
    if kind == "call_tool":
        payload = json.loads(action.text or "{}")
        return kind, {"name": payload.get("name"), "arguments": payload.get("arguments") or {}}
    return kind, fields


def content_tool_calls(text: str) -> list[ToolCall]:
    """``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` blocks written in the content
    (a server without a tool parser leaves them there)."""
    calls = []
    for body in _TOOL_CALL_TAG.findall(text):
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"a <tool_call> block is not valid JSON ({exc.msg} at position {exc.pos}): "
                             f"{body[:120]!r}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            raise ParseError(f"a <tool_call> block must be {{\"name\": ..., \"arguments\": {{...}}}}: {body[:120]!r}")
        calls.append(ToolCall(obj["name"], obj.get("arguments", obj.get("parameters"))))
    return calls


class FunctionTools(ActionFormat):
    """One function per canonical action; the wire shape is the provider's."""

    native_tools = True
    template = "tools.j2"
    wire = "openai"

    def tools(self, domain: str, variant: str | None, coords: CoordSystem) -> list[dict[str, Any]]:
        return [function_spec(k, coords) for k in sorted(action_set(domain, variant))]

    def render(self, domain: str, variant: str | None, coords: CoordSystem) -> Rendered:
        tools = self.tools(domain, variant, coords)
        return Rendered(", ".join(t.get("name", "") for t in tools), tools)

    def to_canonical(self, call: ToolCall, args: dict[str, Any], domain: str) -> dict[str, Any]:
        return call_from_function(call.name, args)

    def from_canonical(self, action: Action, coords: CoordSystem, domain: str | None) -> tuple[str, dict[str, Any]]:
        return function_arguments(action, coords)

    def decode_reply(self, reply: ModelReply, domain: str, variant: str | None,
                     coords: CoordSystem) -> tuple[str, Action]:
        thinking, text = split_thinking(reply.text, reply.reasoning)
        calls = list(reply.tool_calls)
        if not calls:
            calls = content_tool_calls(text)
            text = _TOOL_CALL_TAG.sub("", text).strip()
        raw = one_action([self.to_canonical(c, tool_arguments(c), domain) for c in calls], HINT)
        return join_thought(thinking, text), finish(raw, domain, variant, coords)

    def encode_action(self, thought: str, action: Action, coords: CoordSystem,
                      domain: str | None = None) -> str | dict[str, Any]:
        name, args = self.from_canonical(action, coords, domain)
        if self.wire == "anthropic":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": thought}] if thought else []
            blocks.append({"type": "tool_use", "id": "toolu_0", "name": name, "input": args})
            return {"role": "assistant", "content": blocks}
        return {"role": "assistant", "content": thought or None,
                "tool_calls": [{"id": "call_0", "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]}

    @staticmethod
    def as_reply(encoded: str | dict[str, Any]) -> ModelReply:
        """An encoded reply (an OpenAI message, an Anthropic message) as a ModelReply."""
        if isinstance(encoded, str):
            return ModelReply(encoded)
        content = encoded.get("content")
        if isinstance(content, list):  # Anthropic blocks
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            thinking = "".join(b.get("thinking", "") for b in content if b.get("type") == "thinking")
            calls = [ToolCall(b["name"], b.get("input"), b.get("id", "")) for b in content if b.get("type") == "tool_use"]
            return ModelReply(text, calls, thinking or None)
        calls = [ToolCall(c["function"]["name"], c["function"].get("arguments"), c.get("id", ""))
                 for c in encoded.get("tool_calls") or []]
        return ModelReply(content or "", calls, encoded.get("reasoning_content") or encoded.get("reasoning"))


class OpenAITools(FunctionTools):
    name = "openai_tools"
    description = "OpenAI function tools: one function per action, read from message.tool_calls"


class AnthropicTools(FunctionTools):
    name = "anthropic_tools"
    wire = "anthropic"
    description = "Anthropic tools: one tool per action, read from tool_use blocks"


# Anthropic computer-use actions <-> canonical types (pointer actions take `coordinate`).
_COMPUTER_POINTER = {"left_click": "click", "double_click": "double_click", "right_click": "right_click",
                     "middle_click": "click"}
_COMPUTER_KINDS = {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey", "wait",
                   "tap", "swipe"}



class AnthropicComputer(FunctionTools):
    """Anthropic's computer-use tool shape (computer_20250124 and bash_20250124)."""

    name = "anthropic_computer"
    wire = "anthropic"
    default_coords = "pixels"
    description = "Anthropic computer use: the computer tool (left_click, coordinate in pixels) and bash"
    computer_type = "computer_20250124"
    bash_type = "bash_20250124"

    def tools(self, domain: str, variant: str | None, coords: CoordSystem) -> list[dict[str, Any]]:
        kinds = action_set(domain, variant)
        out: list[dict[str, Any]] = []
        if kinds & _COMPUTER_KINDS:
            w, h = coords.space or (coords.width, coords.height)
            out.append({"type": self.computer_type, "name": "computer", "display_width_px": w,
                        "display_height_px": h, "display_number": 1})
        if "bash" in kinds:
            out.append({"type": self.bash_type, "name": "bash"})
        rest = sorted(k for k in kinds if k != "bash" and k not in _COMPUTER_KINDS)
        return out + [function_spec(k, coords) for k in rest]

    def to_canonical(self, call: ToolCall, args: dict[str, Any], domain: str) -> dict[str, Any]:
        raw = self._computer(call, args)
        if domain == "mobile" and call.name == "computer":  # a phone: clicks are taps, drags swipes
            raw["type"] = {"click": "tap", "drag": "swipe"}.get(raw["type"], raw["type"])
        return raw

    def _computer(self, call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
        if call.name == "bash":
            take(args, "bash", {"command", "restart"}, ("command",))
            return {"type": "bash", "text": args["command"]}
        if call.name != "computer":
            return call_from_function(call.name, args)
        action = args.get("action")
        if not isinstance(action, str):
            raise ParseError(f"the computer tool needs action as a string, got {json.dumps(action)[:60]}")
        if action in _COMPUTER_POINTER:
            take(args, action, {"action", "coordinate"}, ("coordinate",))
            x, y = point_pair(args, "coordinate", action)
            return {"type": _COMPUTER_POINTER[action], "x": x, "y": y,
                    **({"button": "middle"} if action == "middle_click" else {})}
        if action == "left_click_drag":
            take(args, action, {"action", "start_coordinate", "coordinate"}, ("start_coordinate", "coordinate"))
            (x, y), (x2, y2) = point_pair(args, "start_coordinate", action), point_pair(args, "coordinate", action)
            return {"type": "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if action == "scroll":
            take(args, action, {"action", "coordinate", "scroll_direction", "scroll_amount"}, ("scroll_direction",))
            point = point_pair(args, "coordinate", action) if "coordinate" in args else (None, None)
            return {"type": "scroll", "x": point[0], "y": point[1], "direction": args["scroll_direction"],
                    "amount": args.get("scroll_amount")}
        if action == "type":
            take(args, action, {"action", "text"}, ("text",))
            return {"type": "type", "text": args["text"]}
        if action == "key":
            take(args, action, {"action", "text"}, ("text",))
            keys = [k for k in re.split(r"\+", str(args["text"])) if k]
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        if action == "wait":
            take(args, action, {"action", "duration"})
            return {"type": "wait", "amount": args.get("duration")}
        raise ParseError(f"computer action {action!r} is not supported here; use left_click, double_click, "
                         "right_click, middle_click, left_click_drag, scroll, type, key or wait")

    def from_canonical(self, action: Action, coords: CoordSystem, domain: str | None) -> tuple[str, dict[str, Any]]:
        f = model_fields(action, coords)
        kind = f["type"]
        if kind == "bash":
            return "bash", {"command": f["text"]}
        if kind not in _COMPUTER_KINDS:
            return function_arguments(action, coords)
        if kind == "tap":
            return "computer", {"action": "left_click", "coordinate": [f["x"], f["y"]]}
        if kind in ("click", "double_click", "right_click"):
            name = {"click": "middle_click" if f.get("button") == "middle" else "left_click"}.get(kind, kind)
            return "computer", {"action": name, "coordinate": [f["x"], f["y"]]}
        if kind in ("drag", "swipe"):
            return "computer", {"action": "left_click_drag", "start_coordinate": [f["x"], f["y"]],
                                "coordinate": [f["x2"], f["y2"]]}
        if kind == "scroll":
            args: dict[str, Any] = {"action": "scroll", "scroll_direction": f["direction"]}
            if "x" in f:
                args["coordinate"] = [f["x"], f["y"]]
            if "amount" in f:
                args["scroll_amount"] = f["amount"]
            return "computer", args
        if kind == "type":
            return "computer", {"action": "type", "text": f["text"]}
        if kind in ("key", "hotkey"):
            return "computer", {"action": "key", "text": "+".join(f["keys"])}
        return "computer", {"action": "wait", **({"duration": f["amount"]} if "amount" in f else {})}
