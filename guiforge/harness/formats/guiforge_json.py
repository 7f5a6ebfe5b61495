"""guiforge's own format: ``{"thought": "...", "action": {"type": "click", "x": 120, "y": 48}}``.

Also read: the JSON fenced or bare, a bare action object (the thought is the prose before
it), ``Thought: ...`` / ``Action: {...}``, a function-call object ``{"name": "click",
"arguments": {...}}`` (also inside ``"action"``), and a last-line call ``click(x=10, y=20)``.
The action is the reply's only one outside thinking blocks: two different ones are an error.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.harness.actions_doc import ACTION_DOCS
from guiforge.harness.formats.base import (
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
    tool_arguments,
)
from guiforge.harness.formats.coords import CoordSystem

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_CALL = re.compile(r"\b([a-z_]+)\((.*)\)\s*$", re.S)
_THOUGHT = re.compile(r"thought\s*:\s*(.*?)(?:\n\s*action\s*:|$)", re.S | re.I)
HINT = 'reply with JSON {"thought": "...", "action": {"type": ...}}'


def json_objects(text: str) -> list[Any]:
    """Every top-level JSON object in ``text``, in order."""
    decoder = json.JSONDecoder()
    out, i = [], 0
    while (start := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        out.append(value)
        i = end
    return out


def _call_line(text: str) -> dict[str, Any] | None:
    lines = text.strip().splitlines()
    m = _CALL.search(lines[-1] if lines else "")
    if not m:
        return None
    try:
        call = ast.parse(f"f({m.group(2)})", mode="eval").body
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}  # type: ignore[union-attr]
    except (SyntaxError, ValueError):
        return None
    return {"type": m.group(1), **kwargs}


def normalise(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(thought, action fields) of one object in any of the accepted shapes."""
    thought = obj.get("thought") if isinstance(obj.get("thought"), str) else None
    action = obj.get("action", obj)
    if isinstance(action, str):  # {"action": "terminate", "status": "success"}: the rest are its fields
        action = {**{k: v for k, v in obj.items() if k not in ("action", "thought")}, "type": action}
    if not isinstance(action, dict):
        raise ParseError("'action' must be a JSON object such as {\"type\": \"click\", \"x\": 10, \"y\": 20}")
    if "name" in action and "type" not in action:  # a function call
        args = tool_arguments(ToolCall(str(action["name"]), action.get("arguments", action.get("input"))))
        action = {"type": action["name"], **args}
    action = {k: v for k, v in action.items() if k != "thought"}
    if action.get("type") == "call_tool" and not isinstance(action.get("text"), str) and "tool" in action:
        action = {"type": "call_tool", "text": json.dumps({"name": action["tool"], "arguments": action.get("arguments", {})})}
    return thought, action


class GuiforgeJSON(ActionFormat):
    name = "guiforge"
    description = "guiforge JSON: {\"thought\", \"action\": {type, x, y, ...}} on the declared grid"

    def render(self, domain: str, variant: str | None, coords: CoordSystem) -> Rendered:
        lines = [ACTION_DOCS[a] for a in sorted(action_set(domain, variant))]
        return Rendered("\n".join(f"- {line}" for line in lines))

    def encode_action(self, thought: str, action: Action, coords: CoordSystem, domain: str | None = None) -> str:
        return json.dumps({"thought": thought, "action": model_fields(action, coords)}, ensure_ascii=False)

    def decode_reply(self, reply: ModelReply, domain: str, variant: str | None,
                     coords: CoordSystem) -> tuple[str, Action]:
        thinking, text = split_thinking(reply.text, reply.reasoning)
        found: list[tuple[str | None, dict[str, Any]]] = []
        for call in reply.tool_calls:
            found.append((None, {"type": call.name, **tool_arguments(call)}))
        if not found:
            fenced = _FENCE.findall(text)
            objects = [o for block in fenced for o in json_objects(block)] or json_objects(text)
            found = [normalise(o) for o in objects
                     if isinstance(o, dict) and ("action" in o or "type" in o or "name" in o)]
        prose = ""
        if not found:
            call = _call_line(text)
            if call is None:
                raise ParseError(f"no action found: {HINT}")
            found = [(None, call)]
            prose = "\n".join(text.strip().splitlines()[:-1]).strip()
        raw = one_action([a for _, a in found], HINT)
        explicit = next((t for t, a in found if t is not None), None)
        if explicit is None and not prose:
            m = _THOUGHT.search(text)
            prose = (m.group(1).strip() if m else text.split("{", 1)[0].strip())
        return join_thought(thinking, explicit if explicit is not None else prose), finish(raw, domain, variant, coords)
