"""Anthropic's Messages API via the official SDK."""

from __future__ import annotations

from typing import Any

import anthropic

from guiforge.models.base import Completion, ImagePart, Message, ModelClient, TransientError


def _content(msg: Message) -> str | list[dict[str, Any]]:
    if isinstance(msg.content, str):
        return msg.content
    parts: list[dict[str, Any]] = []
    for p in msg.parts():
        if isinstance(p, ImagePart):
            parts.append({"type": "image", "source": {"type": "base64", "media_type": p.media_type, "data": p.b64()}})
        else:
            parts.append({"type": "text", "text": p})
    return parts


class AnthropicClient(ModelClient):
    def __init__(self, config, cache=None):
        super().__init__(config, cache)
        self.client = anthropic.AsyncAnthropic(
            api_key=config.api_key(), base_url=config.base_url, max_retries=0, timeout=config.timeout_s
        )

    async def _send(self, messages: list[Message], **params: Any) -> Completion:
        system = "\n\n".join(m.content for m in messages if m.role == "system" and isinstance(m.content, str))
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": m.role, "content": _content(m)} for m in messages if m.role != "system"],
            "max_tokens": params.get("max_tokens", self.config.max_tokens),
        }
        temperature = params.get("temperature", self.config.temperature)
        if temperature is not None:
            # The SDK no longer takes it as an argument; servers that do accept it in the body.
            body["extra_body"] = {"temperature": temperature}
        if system:
            body["system"] = system
        try:
            resp = await self.client.messages.create(**body)
        except (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APITimeoutError,
                anthropic.APIConnectionError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        except anthropic.APIStatusError as exc:
            if exc.status_code in (408, 409, 529) or exc.status_code >= 500:
                raise TransientError(f"HTTP {exc.status_code}") from exc
            raise
        text = "".join(block.text for block in resp.content if getattr(block, "type", "") == "text")
        return Completion(
            text=text,
            model=resp.model or self.config.model or "",
            input_tokens=resp.usage.input_tokens,
            output_tokens=resp.usage.output_tokens,
            extra={"stop_reason": resp.stop_reason},
        )

    async def aclose(self) -> None:
        await self.client.close()
