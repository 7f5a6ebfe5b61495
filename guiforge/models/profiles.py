"""Model profiles: what a model family needs, set in one line of a model role.

``model_profile: claude-computer-use`` (or ``qwen3-vl``, ``qwen2.5-vl``, ``ui-tars-1.5``, ...)
sets the action format, the coordinate convention, how screenshots are sized before they
are sent (the provider's documented resize, done by guiforge so the model and the codec
agree on the frame), the tool version and the request options of that family. A setting
written on the role overrides the profile's. :func:`profile_warnings` says when a model
the profiles know meets a convention it does not answer in (``guiforge validate``).

The facts behind each row are the families' own: Anthropic's computer-use tool docs (tool
versions and beta headers by model, images shrunk to 1568 px / 1.15 MP, 2576 px / 3.75 MP on
Opus 4.7), Qwen's cookbooks (``computer_use`` / ``mobile_use``; Qwen2.5-VL answers in pixels
of the smart-resized image, Qwen3-VL on a 0-1000 grid), UI-TARS's action parser (pixels of
the image smart-resized with 100*28*28 .. 16384*28*28 pixels; 1.0 answered 0-1000).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CLAUDE_2025_11 = re.compile(r"claude-(opus-4-[5-9]|opus-[5-9]|sonnet-4-[6-9]|sonnet-[5-9]|haiku-[5-9])", re.I)
CLAUDE_BIG_IMAGES = re.compile(r"claude-opus-4-([7-9])|claude-(opus|sonnet|haiku)-[5-9]", re.I)


@dataclass(frozen=True)
class ModelProfile:
    name: str
    description: str
    settings: dict[str, Any]
    # lower-cased model-name fragments of this family (validate's warnings)
    models: tuple[str, ...] = ()
    provider: str | None = None  # the provider whose wire the family's format needs, if one
    by_model: Callable[[str], dict[str, Any]] | None = field(default=None, compare=False)

    def for_model(self, model: str | None) -> dict[str, Any]:
        """The settings for one model of the family (tool versions and image limits move
        with the model)."""
        return {**self.settings, **(self.by_model(model) if self.by_model and model else {})}


def _claude(model: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if CLAUDE_2025_11.search(model):
        out["tool_version"] = "computer_20251124"
    if CLAUDE_BIG_IMAGES.search(model):
        out |= {"max_edge": 2576, "max_pixels": 3_750_000}
    return out


PROFILES: dict[str, ModelProfile] = {p.name: p for p in (
    ModelProfile(
        "claude-computer-use", "Claude with Anthropic's computer-use tool; screenshots shrunk to what the API "
        "keeps (1568 px, 1.15 MP), the display declared at that size",
        {"action_format": "anthropic_computer", "coords": "pixels", "image_resize": "fit", "max_edge": 1568,
         "max_pixels": 1_150_000, "tool_version": "computer_20250124", "parallel_tool_calls": False},
        models=("claude",), provider="anthropic", by_model=_claude),
    ModelProfile(
        "qwen3-vl", "Qwen3-VL computer_use / mobile_use in <tool_call>, points on a 0-1000 grid",
        {"action_format": "qwen_vl", "coords": "grid1000", "image_resize": "none", "parallel_tool_calls": False},
        models=("qwen3-vl", "qwen3vl", "qwen3.5", "qwen3_5")),
    ModelProfile(
        "qwen2.5-vl", "Qwen2.5-VL computer_use / mobile_use in <tool_call>, pixels of the smart-resized image",
        {"action_format": "qwen_vl", "coords": "resized", "image_resize": "smart", "resize_factor": 28,
         "min_pixels": 3136, "max_pixels": 12_845_056, "parallel_tool_calls": False},
        models=("qwen2.5-vl", "qwen2_5-vl", "qwen2.5vl", "qwen2-vl")),
    ModelProfile(
        "ui-tars-1.5", "UI-TARS-1.5 'Thought: ... Action: click(...)', pixels of the smart-resized image",
        {"action_format": "uitars", "coords": "resized", "image_resize": "smart", "resize_factor": 28,
         "min_pixels": 78_400, "max_pixels": 12_845_056},
        models=("ui-tars-1.5", "ui-tars-1_5", "uitars-1.5", "ui-tars-7b-1.5")),
    ModelProfile(
        "ui-tars-1.0", "UI-TARS 1.0 'Thought: ... Action: click(...)', points on a 0-1000 grid",
        {"action_format": "uitars", "coords": "grid1000", "image_resize": "none"},
        models=("ui-tars-7b-sft", "ui-tars-72b", "ui-tars-2b", "ui-tars-7b-dpo", "ui-tars-72b-dpo")),
    ModelProfile(
        "openai-cua", "OpenAI's computer-use model on the Responses API (computer_use_preview), points in pixels "
        "of the display declared at the screenshot's size",
        {"action_format": "openai_computer", "coords": "pixels", "image_resize": "none", "parallel_tool_calls": False},
        models=("computer-use-preview",), provider="openai"),
    ModelProfile(
        "openai-tools", "function calling (OpenAI, or vLLM/SGLang with a tool parser): one function per action, "
        "points on guiforge's 0-999 grid, one call per turn",
        {"action_format": "openai_tools", "coords": "grid999", "image_resize": "none", "parallel_tool_calls": False},
        provider="openai"),
    ModelProfile(
        "pyautogui", "pyautogui-style calls (Aguvis, Smol2Operator), points as fractions of the screen",
        {"action_format": "pyautogui", "coords": "unit", "image_resize": "none"},
        models=("aguvis", "smol2operator")),
)}


def profile_names() -> list[str]:
    return list(PROFILES)


def apply_profile(values: dict[str, Any]) -> dict[str, Any]:
    """A model role's settings with its profile's filled in where the role left them unset
    (a key the role writes wins, even ``null``)."""
    name = values.get("model_profile")
    if name is None:
        return values
    if name not in PROFILES:
        raise ValueError(f"unknown model_profile {name!r}; use one of {', '.join(PROFILES)}")
    defaults = PROFILES[name].for_model(values.get("model"))
    return {**defaults, **values}


def profile_for_model(model: str | None) -> ModelProfile | None:
    """The profile of the family a model name belongs to, if the profiles know it."""
    low = (model or "").lower()
    hits = [p for p in PROFILES.values() for fragment in p.models if fragment in low]
    return max(hits, key=lambda p: max(len(f) for f in p.models if f in low)) if hits else None


def profile_warnings(role: str, config: Any, format_coords: Callable[[str], str] | None = None) -> list[str]:
    """Lines for ``guiforge validate``: a model the profiles know, set up in a way its family
    does not answer (a Qwen3-VL read as resized pixels: [500, 500] becomes (259, 458) on a
    1920x1080 screen), or a profile whose provider the role does not use. ``format_coords``
    names an action format's own convention (what ``coords: null`` means)."""
    out = []
    where = f"models.{role}"
    profile = PROFILES.get(config.model_profile) if config.model_profile else None
    if profile and profile.provider and config.provider not in ("auto", profile.provider):
        out.append(f"{where}: model_profile {profile.name} speaks the {profile.provider} wire; provider is "
                   f"{config.provider}")
    family = profile_for_model(config.model)
    if family is None or (profile is not None and profile.name == family.name):
        return out
    want = family.for_model(config.model)
    coords = config.coords or (format_coords(config.action_format) if format_coords else None)
    if config.action_format == want["action_format"] and coords != want["coords"]:
        got = config.coords or (f"{coords} (the format's default)" if coords else "the format's default")
        out.append(f"{where}: {config.model} answers in {want['coords']} coordinates, but coords is {got}; "
                   f"set model_profile: {family.name} (or coords: {want['coords']})")
    elif profile is not None:
        out.append(f"{where}: {config.model} looks like a {family.name} model, but model_profile is "
                   f"{profile.name}; set model_profile: {family.name} if that is the family")
    elif family.name == "claude-computer-use" and config.action_format == "anthropic_computer" \
            and config.image_resize in (None, "none"):
        out.append(f"{where}: {config.model} with anthropic_computer sends screenshots at full size; Anthropic "
                   "shrinks those over 1568 px or 1.15 MP and Claude answers in the smaller image's pixels: "
                   "set model_profile: claude-computer-use")
    return out
