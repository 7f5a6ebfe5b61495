"""OpenAI's Responses API wire, for the computer-use tool (``computer_use_preview``), which
the chat-completions API does not take: the request body built from guiforge's messages and
the reply read back into a :class:`~guiforge.models.base.Completion`.

Every call sends the whole conversation (``store: false``, no ``previous_response_id``), as
guiforge's context policies build it: a past action of the computer tool goes back as a
``computer_call`` followed by a ``computer_call_output`` holding the screenshot that came
after it (the next user message's image); other tools as ``function_call`` and
``function_call_output``; system messages as ``instructions``.
"""

from __future__ import annotations

import json
from typing import Any

from guiforge.models.base import TOOL_RESULT, Completion, ImagePart, Message
from guiforge.models.images import ImageSizing, sized_for_sending

COMPUTER_TOOL_TYPES = ("computer_use_preview",)


def uses_responses(tools: list[dict[str, Any]] | None) -> bool:
    """Whether a request's tools need the Responses API (the computer-use tool)."""
    return any(t.get("type") in COMPUTER_TOOL_TYPES for t in tools or [])


def _image_url(part: ImagePart, sizing: ImageSizing) -> str:
    data = ImagePart(sized_for_sending(part.data, part.media_type, sizing), part.media_type)
    return f"data:{data.media_type};base64,{data.b64()}"


def _user_input(texts: list[str], images: list[str]) -> dict[str, Any]:
    content = [{"type": "input_text", "text": t} for t in texts]
    content += [{"type": "input_image", "image_url": url, "detail": "auto"} for url in images]
    return {"role": "user", "content": content}


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral function spec as a Responses function tool (flat, not nested); typed tools as they are."""
    if "type" in spec:
        return spec
    return {"type": "function", "name": spec["name"], "description": spec.get("description", ""),
            "parameters": spec.get("parameters") or {"type": "object", "properties": {}}, "strict": False}


def input_items(messages: list[Message], sizing: ImageSizing) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # calls of the last assistant turn, awaiting their output
    last_image: str | None = None
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            if isinstance(m.content, str) and m.content.strip():
                items.append({"role": "assistant", "content": m.content})
            for c in m.tool_calls:
                if c["name"] == "computer":
                    items.append({"type": "computer_call", "id": f"cu_{c['id']}", "call_id": c["id"],
                                  **_computer_args(c["arguments"]), "pending_safety_checks": [],
                                  "status": "completed"})
                else:
                    items.append({"type": "function_call", "call_id": c["id"], "name": c["name"],
                                  "arguments": json.dumps(c["arguments"], ensure_ascii=False)})
            pending = list(m.tool_calls)
            continue
        texts = [p for p in m.parts() if isinstance(p, str)]
        images = [_image_url(p, sizing) for p in m.parts() if isinstance(p, ImagePart)]
        for c in pending:
            if c["name"] == "computer":  # the screen after the action is the call's output
                shot = images[0] if images else last_image
                if shot is not None:
                    items.append({"type": "computer_call_output", "call_id": c["id"],
                                  "output": {"type": "computer_screenshot", "image_url": shot}})
                if c.get("result"):
                    texts.insert(0, c["result"])
            else:
                items.append({"type": "function_call_output", "call_id": c["id"],
                              "output": c.get("result", TOOL_RESULT)})
        if any(c["name"] == "computer" for c in pending) and images:
            images = images[1:]  # sent as the call's output already
        pending = []
        last_image = (images[-1] if images else None) or last_image
        if texts or images:
            items.append(_user_input(texts, images))
    return items


def _computer_args(arguments: dict[str, Any]) -> dict[str, Any]:
    """A computer tool call's arguments as the item's fields: ``action``, or ``actions`` (batched)."""
    if isinstance(arguments, dict) and ("action" in arguments or "actions" in arguments):
        return {k: arguments[k] for k in ("action", "actions") if k in arguments}
    return {"action": arguments}


def request_body(model: str | None, messages: list[Message], tools: list[dict[str, Any]], max_tokens: int,
                 sampling: dict[str, Any], sizing: ImageSizing, parallel_tool_calls: bool | None) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in messages if m.role == "system" and isinstance(m.content, str))
    body: dict[str, Any] = {"model": model, "input": input_items(messages, sizing), "tools": [_tool(t) for t in tools],
                            "max_output_tokens": max_tokens, "truncation": "auto", "store": False}
    body |= {k: v for k, v in sampling.items() if k != "seed"}  # the Responses API takes no seed
    if system:
        body["instructions"] = system
    if parallel_tool_calls is not None:
        body["parallel_tool_calls"] = parallel_tool_calls
    return body


def completion(resp: Any, endpoint: str, model: str | None) -> Completion:
    """A Responses reply (plain JSON) as a Completion: message text, reasoning summaries,
    computer and function calls."""
    if not isinstance(resp, dict) or not isinstance(resp.get("output"), list):
        raise ValueError(f"{endpoint}: a response without output: {str(resp)[:200]}")
    texts, reasoning, calls = [], [], []
    for item in resp["output"]:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            texts += [c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)
                      and c.get("type") == "output_text"]
        elif kind == "reasoning":
            reasoning += [s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)]
        elif kind == "computer_call":
            args = {k: item[k] for k in ("action", "actions") if item.get(k) is not None}
            calls.append({"id": item.get("call_id") or "", "name": "computer", "arguments": args})
        elif kind == "function_call":
            calls.append({"id": item.get("call_id") or "", "name": item.get("name") or "",
                          "arguments": item.get("arguments")})
    usage = resp.get("usage") or {}
    return Completion(text="".join(texts), model=resp.get("model") or model or "",
                      input_tokens=usage.get("input_tokens") or 0, output_tokens=usage.get("output_tokens") or 0,
                      extra={"status": resp.get("status")}, tool_calls=calls,
                      reasoning="\n\n".join(r for r in reasoning if r) or None)
