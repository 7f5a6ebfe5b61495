"""OpenAI's computer-use tool (``computer_use_preview``, the CUA model, on the Responses
API): ``computer_call`` items whose ``action`` is ``click`` / ``double_click`` / ``drag``
(a ``path``) / ``keypress`` / ``scroll`` (``scroll_x``, ``scroll_y`` in pixels) / ``type`` /
``wait`` / ``screenshot`` / ``move``, points in pixels of the display declared with the tool
(the screenshot as sent), plus functions for what the tool has no word for (answer,
terminate, goto, phone gestures, call_tool).

Read as OpenAI's sample app runs them: a ``click`` with ``button: wheel`` is a middle click,
``back`` the browser's back; ``scroll`` pixels become wheel notches of
:data:`SCROLL_NOTCH_PX`; a ``drag`` goes from its path's first point to its last; key names
are normalised (``CTRL``, ``ARROWDOWN``). A ``screenshot`` is a zero-second wait. Refused with
what to do instead: ``move`` (no cursor is tracked), keys held during a pointer action,
a scroll on both axes, ``button: forward``, and a batch of several different actions
(``actions``: one action per turn).
"""

from __future__ import annotations

import json
import math
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.kinds import facts_of, is_touch
from guiforge.harness.formats.base import ParseError, ToolCall, model_fields, take, whole_number
from guiforge.harness.formats.coords import CoordSystem
from guiforge.harness.formats.tools import (
    FunctionTools,
    call_from_function,
    function_arguments,
    function_spec,
)

SCROLL_NOTCH_PX = 100  # a wheel notch, in pixels (what the web environment scrolls per notch)
ENVIRONMENTS = ("browser", "linux", "ubuntu", "mac", "windows")
_KINDS = {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey", "wait", "tap",
          "swipe", "back"}
_NO_CURSOR = "to press something click at it; no cursor is tracked"


def _check_environment(value: Any) -> None:
    if value not in ENVIRONMENTS:
        raise ValueError(f"environment {value!r} is not one of {', '.join(ENVIRONMENTS)}")


def _xy(action: dict[str, Any], kind: str) -> tuple[Any, Any]:
    if action.get("x") is None or action.get("y") is None:
        raise ParseError(f"{kind} needs x and y")
    return action["x"], action["y"]


def _no_keys_held(action: dict[str, Any], kind: str) -> None:
    if action.get("keys"):
        raise ParseError(f"{kind} with {action['keys']} held is not an action here: press the keys with keypress, "
                         f"or {kind} alone")


class OpenAIComputer(FunctionTools):
    name = "openai_computer"
    default_coords = "pixels"
    description = "OpenAI computer use (computer_use_preview on the Responses API), points in display pixels"
    environment = "browser"
    options = {"environment": _check_environment}

    def tools(self, domain: str, variant: str | None, coords: CoordSystem) -> list[dict[str, Any]]:
        kinds = action_set(domain, variant)
        out: list[dict[str, Any]] = []
        if kinds & _KINDS:
            w, h = coords.space or (coords.width, coords.height)
            env = facts_of(domain).computer or self.environment  # the kind's screen, else the option's
            out.append({"type": "computer_use_preview", "display_width": w, "display_height": h, "environment": env})
        rest = sorted(k for k in kinds if k not in _KINDS or (k == "back" and is_touch(domain)))
        return out + [function_spec(k, coords) for k in rest]

    def to_canonical(self, call: ToolCall, args: dict[str, Any], domain: str) -> dict[str, Any]:
        if call.name != "computer":
            return call_from_function(call.name, args)
        take(args, "the computer call", {"action", "actions"})
        actions = args["actions"] if args.get("actions") is not None else [args.get("action")]
        distinct = [a for i, a in enumerate(actions) if a not in actions[:i]]
        if len(distinct) != 1:
            raise ParseError(f"the computer call holds {len(distinct)} different actions; make one action per turn")
        raw = self._action(distinct[0])
        if is_touch(domain):  # a phone: clicks are taps, drags swipes
            raw["type"] = {"click": "tap", "drag": "swipe"}.get(raw["type"], raw["type"])
        return raw

    def _action(self, action: Any) -> dict[str, Any]:
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise ParseError(f"a computer action must be an object with a type, got {json.dumps(action)[:80]}")
        kind = action["type"]
        fields = set(action) - {"type"}
        if kind == "screenshot":
            take(dict.fromkeys(fields), kind, set())
            return {"type": "wait", "amount": 0}
        if kind == "move":
            raise ParseError("move only moves the pointer, which changes nothing here; " + _NO_CURSOR)
        if kind in ("click", "double_click"):
            take(dict.fromkeys(fields), kind, {"x", "y", "button", "keys"})
            _no_keys_held(action, kind)
            button = action.get("button") or "left"
            if kind == "click" and button == "back":
                return {"type": "back"}
            if button not in ("left", "right", "wheel") or (kind == "double_click" and button != "left"):
                raise ParseError(f"{kind} with button {button!r} is not an action here: use left, right or wheel")
            x, y = _xy(action, kind)
            if kind == "double_click":
                return {"type": "double_click", "x": x, "y": y}
            return {"type": "right_click" if button == "right" else "click", "x": x, "y": y,
                    **({"button": "middle"} if button == "wheel" else {})}
        if kind == "drag":
            take(dict.fromkeys(fields), kind, {"path", "keys"})
            _no_keys_held(action, kind)
            path = action.get("path")
            if not isinstance(path, list) or len(path) < 2 or not all(isinstance(p, dict) for p in path):
                raise ParseError("drag needs a path of at least two points [{x, y}, ...]")
            (x, y), (x2, y2) = _xy(path[0], "drag"), _xy(path[-1], "drag")
            return {"type": "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if kind == "keypress":
            take(dict.fromkeys(fields), kind, {"keys"})
            keys = action.get("keys")
            if not isinstance(keys, list) or not keys:
                raise ParseError("keypress needs keys, e.g. [\"CTRL\", \"S\"]")
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        if kind == "scroll":
            take(dict.fromkeys(fields), kind, {"x", "y", "scroll_x", "scroll_y", "keys"})
            _no_keys_held(action, kind)
            sx = whole_number(action.get("scroll_x") or 0, "scroll_x")
            sy = whole_number(action.get("scroll_y") or 0, "scroll_y")
            if sx and sy:
                raise ParseError("scroll one axis at a time: scroll_x or scroll_y, the other 0")
            if not sx and not sy:
                raise ParseError("scroll needs scroll_x or scroll_y (pixels)")
            direction = ("right" if sx > 0 else "left") if sx else ("down" if sy > 0 else "up")
            x, y = (action.get("x"), action.get("y"))
            return {"type": "scroll", "x": x, "y": y, "direction": direction,
                    "amount": max(1, math.ceil(abs(sx or sy) / SCROLL_NOTCH_PX))}
        if kind == "type":
            take(dict.fromkeys(fields), kind, {"text"}, ())
            if not isinstance(action.get("text"), str):
                raise ParseError("type needs text")
            return {"type": "type", "text": action["text"]}
        if kind == "wait":
            take(dict.fromkeys(fields), kind, {"ms", "duration"})
            return {"type": "wait"}
        raise ParseError(f"computer action {kind!r} does not exist; use click, double_click, drag, keypress, scroll, "
                         "type, wait or screenshot")

    def from_canonical(self, action: Action, coords: CoordSystem, domain: str | None) -> tuple[str, dict[str, Any]]:
        f = model_fields(action, coords)
        kind = f["type"]
        if kind not in _KINDS or (kind == "back" and is_touch(domain)):
            return function_arguments(action, coords)
        if kind in ("click", "tap", "right_click"):
            button = {"right_click": "right"}.get(kind, "wheel" if f.get("button") == "middle" else "left")
            out: dict[str, Any] = {"type": "click", "button": button, "x": f["x"], "y": f["y"]}
        elif kind == "double_click":
            out = {"type": "double_click", "x": f["x"], "y": f["y"]}
        elif kind in ("drag", "swipe"):
            out = {"type": "drag", "path": [{"x": f["x"], "y": f["y"]}, {"x": f["x2"], "y": f["y2"]}]}
        elif kind == "scroll":
            px = f.get("amount", 3) * SCROLL_NOTCH_PX * (1 if f["direction"] in ("down", "right") else -1)
            horizontal = f["direction"] in ("left", "right")
            out = {"type": "scroll", "x": f.get("x"), "y": f.get("y"), "scroll_x": px if horizontal else 0,
                   "scroll_y": 0 if horizontal else px}
            out = {k: v for k, v in out.items() if v is not None}
        elif kind == "type":
            out = {"type": "type", "text": f["text"]}
        elif kind in ("key", "hotkey"):
            out = {"type": "keypress", "keys": [k.upper() if len(k) > 1 else k for k in f["keys"]]}
        elif kind == "back":
            out = {"type": "click", "button": "back", "x": 0, "y": 0}
        elif f.get("amount") == 0:
            out = {"type": "screenshot"}
        else:
            out = {"type": "wait"}
        return "computer", {"action": out}
