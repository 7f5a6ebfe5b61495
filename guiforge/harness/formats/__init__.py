"""Action formats: how a model is told the action set and how it writes an action.

One registry of codecs (entry points of ``guiforge.action_formats``, the built-ins
included, plus any ``module:ClassName``), each able to *render* a
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

import inspect

from guiforge.harness.formats.base import ActionFormat, ModelReply, ParseError, Rendered, ToolCall
from guiforge.harness.formats.coords import (
    COORD_KINDS,
    CoordError,
    CoordSystem,
    coord_system,
    smart_resize,
)
from guiforge.plugins import PluginError, Registry


def _is_format(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, ActionFormat) and not inspect.isabstract(obj)


def _check_format(name: str, cls: type[ActionFormat]) -> str | None:
    if ":" not in name and getattr(cls, "name", None) != name:
        return f"registered as {name!r} but the class says name {getattr(cls, 'name', None)!r}; make them the same"
    return None


# Every codec, the built-ins included, is an entry point of ``guiforge.action_formats``.
ACTION_FORMATS: Registry[type[ActionFormat]] = Registry(
    "guiforge.action_formats", "action format", "an ActionFormat subclass", _is_format, _check_format)
_loaded: dict[str, ActionFormat] = {}


def get_format(name: str | None = None, **options: object) -> ActionFormat:
    """The codec called ``name`` (a registered name, or ``package.module:ClassName``);
    ``options`` (a tool version) configure it, where the codec takes them."""
    name = name or "guiforge"
    options = {k: v for k, v in options.items() if v is not None}
    if options:
        key = name + "?" + "&".join(f"{k}={v}" for k, v in sorted(options.items()))
        if key not in _loaded:
            _loaded[key] = get_format(name).configured(**options)
        return _loaded[key]
    if name in _loaded:
        return _loaded[name]
    try:
        codec = ACTION_FORMATS.get(name)()
    except PluginError as exc:
        raise ValueError(str(exc)) from None
    _loaded[name] = codec
    return codec


def format_names() -> list[str]:
    return ACTION_FORMATS.names()


__all__ = ["ACTION_FORMATS", "COORD_KINDS", "ActionFormat", "CoordError", "CoordSystem", "ModelReply", "ParseError",
           "Rendered", "ToolCall", "coord_system", "format_names", "get_format", "smart_resize"]
