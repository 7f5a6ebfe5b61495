"""Model clients: openai (and compatible servers), anthropic, and offline providers."""

from __future__ import annotations

from guiforge.models.base import (
    Completion,
    ImagePart,
    Message,
    ModelClient,
    TransientError,
    prompt_hash,
)
from guiforge.models.config import ModelConfig


def make_client(config: ModelConfig, cache=None) -> ModelClient:
    """A client for a resolved, non-offline model config."""
    config = config.resolved()
    if config.provider == "openai":
        from guiforge.models.openai_provider import OpenAIClient

        return OpenAIClient(config, cache)
    if config.provider == "anthropic":
        from guiforge.models.anthropic_provider import AnthropicClient

        return AnthropicClient(config, cache)
    raise ValueError(f"provider {config.provider!r} has no network client; stages use their offline builder")


__all__ = ["Completion", "ImagePart", "Message", "ModelClient", "ModelConfig", "TransientError",
           "make_client", "prompt_hash"]
