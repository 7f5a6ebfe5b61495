"""OpenAI and every OpenAI-compatible server (vLLM, SGLang, Ollama) via the official SDK."""

from __future__ import annotations

import json
from typing import Any

import openai

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
from guiforge.models.openai_responses import completion as responses_completion
from guiforge.models.openai_responses import request_body as responses_body
from guiforge.models.openai_responses import uses_responses
from guiforge.models.transport import sdk_http_client


def _content(msg: Message, sizing: ImageSizing) -> str | list[dict[str, Any]]:
    if isinstance(msg.content, str):
        return msg.content
    parts: list[dict[str, Any]] = []
    for p in msg.parts():
        if isinstance(p, ImagePart):
            p = ImagePart(sized_for_sending(p.data, p.media_type, sizing), p.media_type)
            parts.append({"type": "image_url", "image_url": {"url": f"data:{p.media_type};base64,{p.b64()}"}})
        else:
            parts.append({"type": "text", "text": p})
    return parts


def _messages(messages: list[Message], sizing: ImageSizing = AS_CAPTURED) -> list[dict[str, Any]]:
    """Wire messages (images sized as the model role asks); an assistant turn's tool calls,
    each followed by its tool result."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
                for c in m.tool_calls]})
            out.extend({"role": "tool", "tool_call_id": c["id"], "content": c.get("result", TOOL_RESULT)}
                       for c in m.tool_calls)
        else:
            out.append({"role": m.role, "content": _content(m, sizing)})
    return out


def _tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral function spec as an OpenAI tool."""
    if "type" in spec:
        raise ValueError(f"tool {spec.get('name')!r} of type {spec['type']!r} is Anthropic's own; "
                         "use the anthropic provider for it (or a function-tools action format)")
    return {"type": "function", "function": spec}


class OpenAIClient(ModelClient):
    def __init__(self, config, cache=None, role=None):
        super().__init__(config, cache, role)
        # Retries are ours (shared backoff and accounting), not the SDK's.
        self.client = openai.AsyncOpenAI(
            api_key=config.api_key(), base_url=config.base_url, max_retries=0, timeout=config.timeout_s,
            http_client=with_fault_transport(sdk_http_client(openai, config.concurrency)),
        )

    async def _send(self, messages: list[Message], fault: str | None = None, **params: Any) -> Completion:
        if uses_responses(params.get("tools")):  # the computer-use tool speaks only the Responses API
            return await self._send_responses(messages, fault=fault, **params)
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": _messages(messages, sizing_for(self.config)),
            "max_tokens": params.get("max_tokens", self.config.max_tokens),
        }
        body |= self.config.sampling(params.get("sample"))
        if params.get("temperature") is not None:
            body["temperature"] = params["temperature"]
        if params.get("json"):
            body["response_format"] = {"type": "json_object"}
        if params.get("tools"):
            body["tools"] = [_tool(t) for t in params["tools"]]
            if self.config.parallel_tool_calls is not None:  # false: one action per turn, not two to refuse
                body["parallel_tool_calls"] = self.config.parallel_tool_calls
        try:
            # The SDK's low-level post (its auth, headers, timeouts and error types) with the
            # reply as plain JSON: chat.completions.create re-walks the request against its
            # TypedDicts and builds pydantic models, ~2 ms of CPU a call that buys nothing here.
            resp = await self.client.post("/chat/completions", body=body, cast_to=object,
                                          options={"headers": fault_headers(fault)})
        except (openai.APIError, ValueError) as exc:  # ValueError: a body the SDK could not parse
            raise transport_error(exc, openai) from exc
        try:
            choice = resp["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise TransientError(f"unreadable reply body: a chat completion without choices: "
                                 f"{' '.join(str(resp).split())[:160]}") from None
        usage = resp.get("usage") or {}
        message = choice.get("message") or {}
        calls = []
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            calls.append({"id": call.get("id") or "", "name": function.get("name") or "",
                          "arguments": function.get("arguments")})
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return Completion(
            text=message.get("content") or "",
            model=resp.get("model") or self.config.model or "",
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            extra={"finish_reason": choice.get("finish_reason")},
            tool_calls=calls,
            reasoning=reasoning if isinstance(reasoning, str) else None,
        )

    async def _send_responses(self, messages: list[Message], fault: str | None = None, **params: Any) -> Completion:
        """One request on the Responses API (guiforge/models/openai_responses.py), with the
        chat path's error handling."""
        body = responses_body(self.config.model, messages, params["tools"],
                              params.get("max_tokens", self.config.max_tokens),
                              self.config.sampling(params.get("sample")), sizing_for(self.config),
                              self.config.parallel_tool_calls)
        try:
            resp = await self.client.post("/responses", body=body, cast_to=object,
                                          options={"headers": fault_headers(fault)})
        except (openai.APIError, ValueError) as exc:  # ValueError: a body the SDK could not parse
            raise transport_error(exc, openai) from exc
        if not isinstance(resp, dict):
            raise TransientError(f"unreadable reply body: {' '.join(str(resp).split())[:160]}")
        return responses_completion(resp, self.endpoint, self.config.model)

    async def aclose(self) -> None:
        await self.client.close()
