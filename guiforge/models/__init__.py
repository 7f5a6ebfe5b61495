"""Model clients: openai (and compatible servers), anthropic, and offline providers."""

from __future__ import annotations

from guiforge.models.base import (
    Completion,
    ImagePart,
    Message,
    ModelClient,
    prompt_hash,
)
from guiforge.models.config import ModelConfig
from guiforge.models.errors import ModelFailure, RequestRejected, TransientError


def make_client(config: ModelConfig, cache=None, role: str | None = None) -> ModelClient:
    """A client for a resolved, non-offline model config; ``role`` is named in its errors."""
    config = config.resolved()
    if config.provider == "openai":
        from guiforge.models.openai_provider import OpenAIClient

        return OpenAIClient(config, cache, role)
    if config.provider == "anthropic":
        from guiforge.models.anthropic_provider import AnthropicClient

        return AnthropicClient(config, cache, role)
    raise ValueError(f"provider {config.provider!r} has no network client; stages use their offline builder")


__all__ = ["Completion", "ImagePart", "Message", "ModelClient", "ModelConfig", "ModelFailure", "RequestRejected",
           "TransientError",
           "make_client", "prompt_hash"]
