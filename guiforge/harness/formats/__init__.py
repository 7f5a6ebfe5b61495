"""Action formats: how a model is told the action set and how it writes an action.

One registry of codecs (built-ins plus any ``module:ClassName``), each able to *render* a
domain's action set for the prompt (text, or native tools), *encode* a canonical action as
that model writes it (an SFT target in the student's own format) and *decode* a reply into
``(thought, Action)``::

    from guiforge.harness.formats import get_format
    fmt = get_format("uitars")
    fmt.encode("Open the mail.", Action(type="click", x=500, y=20), frame=(1280, 800), coords="resized")
    fmt.decode("Thought: ...\\nAction: click(start_box='(640,12)')", "web", frame=(1280, 800), coords="resized")

Coordinates are declared, never guessed: see :mod:`guiforge.harness.formats.coords`.
"""

from __future__ import annotations

import importlib

from guiforge.harness.formats.anthropic_computer import AnthropicComputer
from guiforge.harness.formats.base import ActionFormat, ModelReply, ParseError, Rendered, ToolCall
from guiforge.harness.formats.coords import (
    COORD_KINDS,
    CoordError,
    CoordSystem,
    coord_system,
    smart_resize,
)
from guiforge.harness.formats.guiforge_json import GuiforgeJSON
from guiforge.harness.formats.openai_computer import OpenAIComputer
from guiforge.harness.formats.pyautogui import PyAutoGUI
from guiforge.harness.formats.qwen import QwenComputerUse, QwenComputerUseTools
from guiforge.harness.formats.tools import AnthropicTools, OpenAITools
from guiforge.harness.formats.uitars import UITars

BUILTIN: dict[str, type[ActionFormat]] = {f.name: f for f in (
    GuiforgeJSON, OpenAITools, AnthropicTools, AnthropicComputer, OpenAIComputer, QwenComputerUse,
    QwenComputerUseTools, UITars, PyAutoGUI)}
_loaded: dict[str, ActionFormat] = {}


def get_format(name: str | None = None, **options: object) -> ActionFormat:
    """The codec called ``name`` (a built-in, or ``package.module:ClassName``); ``options``
    (a tool version) configure it, where the codec takes them."""
    name = name or "guiforge"
    options = {k: v for k, v in options.items() if v is not None}
    if options:
        key = name + "?" + "&".join(f"{k}={v}" for k, v in sorted(options.items()))
        if key not in _loaded:
            _loaded[key] = get_format(name).configured(**options)
        return _loaded[key]
    if name in _loaded:
        return _loaded[name]
    if name in BUILTIN:
        codec = BUILTIN[name]()
    elif ":" in name:
        module, _, attr = name.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"action format {name!r} cannot be loaded: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, ActionFormat)):
            raise ValueError(f"action format {name!r} is not an ActionFormat subclass")
        codec = cls()
    else:
        raise ValueError(f"unknown action format {name!r}; use one of {', '.join(BUILTIN)} or module:ClassName")
    _loaded[name] = codec
    return codec


def format_names() -> list[str]:
    return list(BUILTIN)


__all__ = ["BUILTIN", "COORD_KINDS", "ActionFormat", "CoordError", "CoordSystem", "ModelReply", "ParseError",
           "Rendered", "ToolCall", "coord_system", "format_names", "get_format", "smart_resize"]
