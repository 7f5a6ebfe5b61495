"""Model clients: openai (and compatible servers), anthropic, any provider plugin\n(guiforge.models.providers), and offline providers."""

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
from guiforge.models.providers import MODES, PROVIDERS


def make_client(config: ModelConfig, cache=None, role: str | None = None) -> ModelClient:
    """A client for a resolved, non-offline model config; ``role`` is named in its errors."""
    config = config.resolved()
    if config.provider in MODES:
        raise ValueError(f"provider {config.provider!r} has no network client; stages use their offline builder")
    return PROVIDERS.get(config.provider)(config, cache, role)


__all__ = ["Completion", "ImagePart", "Message", "ModelClient", "ModelConfig", "ModelFailure", "RequestRejected",
           "TransientError",
           "make_client", "prompt_hash"]
