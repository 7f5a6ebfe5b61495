"""Anthropic's Messages API via the official SDK."""

from __future__ import annotations

from typing import Any

import anthropic

from guiforge.faults.http import fault_headers, with_fault_transport
from guiforge.models.base import (
    TOOL_RESULT,
    Completion,
    ImagePart,
    Message,
    ModelClient,
    transport_error,
)
from guiforge.models.errors import TransientError
from guiforge.models.images import AS_CAPTURED, ImageSizing, sized_for_sending, sizing_for
from guiforge.models.transport import sdk_http_client


def _content(msg: Message, sizing: ImageSizing) -> str | list[dict[str, Any]]:
    if isinstance(msg.content, str):
        return msg.content
    parts: list[dict[str, Any]] = []
    for p in msg.parts():
        if isinstance(p, ImagePart):
            p = ImagePart(sized_for_sending(p.data, p.media_type, sizing), p.media_type)
            parts.append({"type": "image", "source": {"type": "base64", "media_type": p.media_type, "data": p.b64()}})
        else:
            parts.append({"type": "text", "text": p})
    return parts


def _messages(messages: list[Message], sizing: ImageSizing = AS_CAPTURED) -> list[dict[str, Any]]:
    """Wire messages (images sized as the model role asks); an assistant turn's tool_use
    blocks, their tool_result blocks opening the next user message (as the API requires)."""
    out: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if isinstance(m.content, str) \
                and m.content.strip() else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                       for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
            pending = [(c["id"], c.get("result", TOOL_RESULT)) for c in m.tool_calls]
            continue
        content = _content(m, sizing)
        if pending and m.role == "user":
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            content = [{"type": "tool_result", "tool_use_id": i, "content": result} for i, result in pending] + parts
        pending = []
        out.append({"role": m.role, "content": content})
    return out


# Anthropic tool types that need a beta header; the computer tool's version decides it
# (bash_20250124 rides along with computer_20251124 under that tool's beta).
_BETAS = {"computer_20251124": "computer-use-2025-11-24", "computer_20250124": "computer-use-2025-01-24",
          "computer_20241022": "computer-use-2024-10-22", "bash_20250124": "computer-use-2025-01-24",
          "bash_20241022": "computer-use-2024-10-22"}


def _betas(tools: list[dict[str, Any]]) -> list[str]:
    types = [t.get("type") for t in tools if t.get("type") in _BETAS]
    computer = [t for t in types if t.startswith("computer_")]
    return sorted({_BETAS[t] for t in (computer or types)})


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral function spec as an Anthropic tool; typed tools (computer use) as they are."""
    if "type" in spec:
        return spec
    return {"name": spec["name"], "description": spec.get("description", ""),
            "input_schema": spec.get("parameters") or {"type": "object", "properties": {}}}


class AnthropicClient(ModelClient):
    def __init__(self, config, cache=None, role=None):
        super().__init__(config, cache, role)
        self.client = anthropic.AsyncAnthropic(
            api_key=config.api_key(), base_url=config.base_url, max_retries=0, timeout=config.timeout_s,
            http_client=with_fault_transport(sdk_http_client(anthropic, config.concurrency)),
        )

    async def _send(self, messages: list[Message], fault: str | None = None, **params: Any) -> Completion:
        system = "\n\n".join(m.content for m in messages if m.role == "system" and isinstance(m.content, str))
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": _messages([m for m in messages if m.role != "system"], sizing_for(self.config)),
            "max_tokens": params.get("max_tokens", self.config.max_tokens),
        }
        # Sampling goes in the body (the SDK's create no longer takes all of it); no seed here.
        body |= {k: v for k, v in self.config.sampling(params.get("sample")).items() if k != "seed"}
        if params.get("temperature") is not None:
            body["temperature"] = params["temperature"]
        if system:
            body["system"] = system
        headers: dict[str, str] = {}
        if params.get("tools"):
            body["tools"] = [_tool(t) for t in params["tools"]]
            if self.config.parallel_tool_calls is False:  # one action per turn, not two to refuse
                body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
            betas = _betas(params["tools"])
            if betas:
                headers["anthropic-beta"] = ",".join(betas)
        try:
            # The SDK's low-level post (auth, version header, timeouts, error types) with the
            # reply as plain JSON, without messages.create's TypedDict walk and pydantic models.
            resp = await self.client.post("/v1/messages", body=body, cast_to=object,
                                          options={"headers": {**headers, **fault_headers(fault)}})
        except (anthropic.APIError, ValueError) as exc:  # ValueError: a body the SDK could not parse
            raise transport_error(exc, anthropic) from exc
        if not isinstance(resp, dict) or not isinstance(resp.get("content"), list):
            raise TransientError(f"unreadable reply body: a message reply without content: "
                                 f"{' '.join(str(resp).split())[:160]}")
        blocks = [b for b in resp["content"] if isinstance(b, dict)]
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        thinking = "\n\n".join(b.get("thinking", "") for b in blocks if b.get("type") == "thinking")
        calls = [{"id": b.get("id") or "", "name": b.get("name") or "", "arguments": b.get("input")}
                 for b in blocks if b.get("type") == "tool_use"]
        usage = resp.get("usage") or {}
        return Completion(
            text=text,
            model=resp.get("model") or self.config.model or "",
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            extra={"stop_reason": resp.get("stop_reason")},
            tool_calls=calls,
            reasoning=thinking or None,
        )

    async def aclose(self) -> None:
        await self.client.close()
