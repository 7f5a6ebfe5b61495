"""Which model serves a role. ``provider: auto`` (the default) uses a real model when a key
is set in the environment and the offline provider otherwise, so one pipeline file serves
a laptop with no network and a cluster with an endpoint."""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guiforge.models.profiles import apply_profile
from guiforge.plugins import PluginRef, is_reference, registered

DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}


class Prices(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_per_mtok: float = Field(default=0.0, ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    # auto, offline, or a provider plugin (guiforge.models.providers): openai, anthropic, module:Class
    provider: Annotated[str, PluginRef("guiforge.providers", builtin=("auto", "offline"))] = "auto"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key")
    temperature: float | None = Field(default=None, ge=0, le=2, description="None: the provider's default")
    top_p: float | None = Field(default=None, gt=0, le=1, description="None: the provider's default")
    seed: int | None = Field(default=None, description="sent where the server takes one; sample k gets seed + k")
    max_tokens: int = Field(default=4096, gt=0)
    concurrency: int = Field(default=8, ge=1, le=1024, description="calls in flight per endpoint")
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    max_parse_attempts: int = Field(default=3, ge=1, le=10)
    cache: bool = True
    prices: Prices = Field(default_factory=Prices)
    # How this model writes actions and points (a policy role: the teacher, a student).
    action_format: Annotated[str, PluginRef("guiforge.action_formats")] = Field(
        default="guiforge", description="an action format plugin (guiforge.harness.formats) or module:Class")
    coords: Literal["grid999", "grid1000", "unit", "pixels", "resized"] | None = Field(
        default=None, description="the coordinate convention; None: the action format's own")
    min_pixels: int | None = Field(default=None, gt=0, description="resized coords: the processor's min_pixels")
    max_pixels: int | None = Field(default=None, gt=0, description="resized coords: the processor's max_pixels")
    resize_factor: int | None = Field(default=None, gt=0, description="resized coords: 28 (Qwen2.5-VL), 32 (Qwen3-VL)")
    # One line for a model family (guiforge/models/profiles.py); the settings above and below override it.
    model_profile: str | None = Field(default=None, description="claude-computer-use, qwen3-vl, qwen2.5-vl, "
                                      "ui-tars-1.5, ...: format, coords, image sizing, tools, request options")
    image_resize: Literal["none", "fit", "smart"] | None = Field(
        default=None, description="screenshots sized before sending: fit (max_edge, max_pixels), smart (Qwen)")
    max_edge: int | None = Field(default=None, gt=0, description="image_resize fit: the longest side in pixels")
    tool_version: str | None = Field(default=None, description="anthropic_computer: computer_20250124 or "
                                     "computer_20251124 (Claude Opus 4.5+, Sonnet 4.6+)")
    parallel_tool_calls: bool | None = Field(default=False, description="with native tools: false asks for one "
                                             "call per turn; null sends nothing (a server that rejects it)")

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, values: object) -> object:
        return apply_profile(values) if isinstance(values, dict) else values

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        # Names only: the compile step imports and type-checks the provider a run uses.
        names = registered("guiforge.providers")
        if value not in ("auto", "offline", *names) and not is_reference(value):
            raise ValueError(f"unknown model provider {value!r}; use auto, offline or an installed provider: "
                             f"{', '.join(names) or 'none'} (or module:Class)")
        return value

    @field_validator("action_format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        # Names only: the codecs live with the harness, which loads and type-checks them.
        names = registered("guiforge.action_formats")
        if value not in names and not is_reference(value):
            raise ValueError(f"unknown action format {value!r}; use one of {', '.join(names)} or module:ClassName")
        return value

    @model_validator(mode="after")
    def _format_fits_provider(self) -> ModelConfig:
        if self.action_format == "anthropic_computer" and self.provider == "openai":
            raise ValueError("action_format anthropic_computer is Anthropic's computer-use tool: use provider "
                             "anthropic, or openai_tools / qwen_vl_tools for an OpenAI-compatible server")
        if self.action_format == "openai_computer" and self.provider == "anthropic":
            raise ValueError("action_format openai_computer is OpenAI's computer-use tool (the Responses API): use "
                             "provider openai, or anthropic_computer for Claude")
        return self

    def sampling(self, sample: int | None = None) -> dict:
        """The sampling settings a request carries (and lineage records) for sample ``sample``."""
        seed = None if self.seed is None else self.seed + (sample or 0)
        return {k: v for k, v in {"temperature": self.temperature, "top_p": self.top_p, "seed": seed}.items()
                if v is not None}

    def resolved(self) -> ModelConfig:
        """Fill provider, endpoint and model from the environment where left open.

        Environment: GUIFORGE_PROVIDER, GUIFORGE_BASE_URL, GUIFORGE_API_KEY, GUIFORGE_MODEL;
        or the SDKs' own OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL.
        """
        env = os.environ
        provider = self.provider
        if provider == "auto":
            if env.get("GUIFORGE_API_KEY"):
                provider = env.get("GUIFORGE_PROVIDER", "openai")
            elif env.get("OPENAI_API_KEY"):
                provider = "openai"
            elif env.get("ANTHROPIC_API_KEY"):
                provider = "anthropic"
            else:
                provider = "offline"
        if provider != "offline" and provider not in registered("guiforge.providers") and not is_reference(provider):
            raise ValueError(f"GUIFORGE_PROVIDER={provider!r}; use an installed provider: "
                             f"{', '.join(registered('guiforge.providers'))}")
        if provider == "offline":
            return self.model_copy(update={"provider": "offline", "model": "offline", "base_url": None})
        upper = provider.upper().replace(".", "_").replace(":", "_")
        base_url = self.base_url or env.get("GUIFORGE_BASE_URL") or env.get(f"{upper}_BASE_URL")
        model = self.model or env.get("GUIFORGE_MODEL") or DEFAULT_MODELS.get(provider)
        return self.model_copy(update={"provider": provider, "model": model, "base_url": base_url})

    def api_key(self) -> str:
        env = os.environ
        names = [self.api_key_env] if self.api_key_env else ["GUIFORGE_API_KEY", f"{self.provider.upper()}_API_KEY"]
        for name in names:
            if env.get(name):
                return env[name]
        raise ValueError(f"no API key for provider {self.provider}: set {' or '.join(names)}")

    def identity(self) -> dict:
        """What about this model changes outputs (for run and cache fingerprints)."""
        out = {"provider": self.provider, "model": self.model, "base_url": self.base_url,
               "temperature": self.temperature, "max_tokens": self.max_tokens}
        # Added settings enter only when set, so fingerprints of existing configs hold.
        extra = {"top_p": self.top_p, "seed": self.seed, "coords": self.coords, "min_pixels": self.min_pixels,
                 "max_pixels": self.max_pixels, "resize_factor": self.resize_factor,
                 "image_resize": self.image_resize, "max_edge": self.max_edge, "tool_version": self.tool_version}
        out |= {k: v for k, v in extra.items() if v is not None}
        if self.parallel_tool_calls is not False:
            out["parallel_tool_calls"] = self.parallel_tool_calls
        if self.action_format != "guiforge":
            out["action_format"] = self.action_format
        return out

    @property
    def offline(self) -> bool:
        return self.provider == "offline"
