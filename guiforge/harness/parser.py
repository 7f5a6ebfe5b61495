"""Parse a model's reply into (thought, canonical action).

Accepted shapes, all on the 0-999 grid:
- ``{"thought": "...", "action": {"type": "click", "x": 120, "y": 48}}`` (plain JSON, fenced or not)
- ``{"type": "click", "x": 120, "y": 48}`` (a bare action; the thought is the text before it)
- ``Thought: ...`` then ``Action: {...}``
- a tool call ``{"name": "click", "arguments": {"x": 120, "y": 48}}`` (OpenAI/Anthropic
  function-calling style), also inside ``"action"``
- ``click(x=120, y=48)`` (a call expression)

A reply that yields no valid action raises :class:`ParseError` with a message fit to feed
back to the model.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import ValidationError

from guiforge.envs.actions import Action, action_set

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_CALL = re.compile(r"\b([a-z_]+)\((.*)\)\s*$", re.S)
_THOUGHT = re.compile(r"thought\s*:\s*(.*?)(?:\n\s*action\s*:|$)", re.S | re.I)


class ParseError(ValueError):
    pass


def _json_objects(text: str) -> list[Any]:
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


def _from_call(text: str) -> dict[str, Any] | None:
    m = _CALL.search(text.strip().splitlines()[-1] if text.strip() else "")
    if not m:
        return None
    try:
        call = ast.parse(f"f({m.group(2)})", mode="eval").body
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}  # type: ignore[union-attr]
    except (SyntaxError, ValueError):
        return None
    return {"type": m.group(1), **kwargs}


def _normalise(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    thought = obj.get("thought") if isinstance(obj.get("thought"), str) else None
    action = obj.get("action", obj)
    if isinstance(action, str):
        action = {"type": action}
    if not isinstance(action, dict):
        raise ParseError("'action' must be a JSON object such as {\"type\": \"click\", \"x\": 10, \"y\": 20}")
    if "name" in action and "type" not in action:  # a function call
        args = action.get("arguments") or action.get("input") or {}
        if isinstance(args, str):
            args = json.loads(args or "{}")
        action = {"type": action["name"], **args}
    action = {k: v for k, v in action.items() if k != "thought"}
    if isinstance(action.get("keys"), str):
        action["keys"] = [k.strip() for k in re.split(r"[+ ]", action["keys"]) if k.strip()]
    if action.get("type") == "call_tool" and not isinstance(action.get("text"), str) and "tool" in action:
        action = {"type": "call_tool", "text": json.dumps({"name": action["tool"], "arguments": action.get("arguments", {})})}
    return thought, action


def parse_reply(text: str, domain: str, variant: str | None = None) -> tuple[str, Action]:
    fenced = _FENCE.findall(text)
    candidates = [o for block in fenced for o in _json_objects(block)] or _json_objects(text)
    raw: dict[str, Any] | None = None
    thought: str | None = None
    for obj in candidates:
        if isinstance(obj, dict) and ("action" in obj or "type" in obj or "name" in obj):
            thought, raw = _normalise(obj)
            break
    if raw is None:
        call = _from_call(text)
        if call is None:
            raise ParseError("no action found: reply with JSON {\"thought\": \"...\", \"action\": {\"type\": ...}}")
        raw = call
        thought = "\n".join(text.strip().splitlines()[:-1]).strip()
    if thought is None:
        m = _THOUGHT.search(text)
        before = text.split("{", 1)[0].strip()
        thought = (m.group(1).strip() if m else before) or ""
    try:
        action = Action.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "action"
        raise ParseError(f"invalid action {json.dumps(raw)[:200]}: {where}: {first['msg']}") from None
    allowed = action_set(domain, variant)
    if action.type not in allowed:
        raise ParseError(f"{action.type!r} is not an action here; use one of: {', '.join(sorted(allowed))}")
    return thought, action


def format_reply(thought: str, action: Action) -> str:
    """The canonical reply text (what the scripted teacher writes, and the SFT target)."""
    body = action.model_dump(exclude_none=True)
    return json.dumps({"thought": thought, "action": body}, ensure_ascii=False)
