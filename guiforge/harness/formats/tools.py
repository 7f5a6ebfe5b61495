"""Native tool calling: the domain's action set as tools, read back from the reply's tool
calls (content may be null; the thought is the reasoning plus any text).

- ``openai_tools``: one function per action (OpenAI ``tools``; vLLM/SGLang with a tool parser).
- ``anthropic_tools``: the same functions as Anthropic tools (``tool_use`` blocks).

Anthropic's computer-use tool is :mod:`guiforge.harness.formats.anthropic_computer`.
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
