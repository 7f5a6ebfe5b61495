"""Anthropic's computer-use tool: the ``computer`` tool (``left_click`` at ``coordinate``
in pixels of the screenshot Claude was shown, ``key`` with xdotool key names, ...), the
``bash`` tool, and functions for the actions it has no word for (answer, terminate, goto,
phone gestures, call_tool).

The tool version follows the model (``tool_version``: ``computer_20250124`` for Claude
Sonnet 4.5 and older, ``computer_20251124`` for Opus 4.5+ and Sonnet 4.6+); the display is
declared at the size of the image sent (see ``resize: fit``), so Claude's pixels and ours
are the same pixels.

Every action of the tool is read. Those guiforge has no canonical action for are refused
with what to do instead, never guessed:

- ``screenshot`` (Claude's usual first move): a zero-second wait; the next observation is
  the screenshot.
- ``mouse_move``, ``left_mouse_down`` / ``left_mouse_up``, ``cursor_position``: guiforge's
  actions carry their point and no cursor is tracked; a drag is ``left_click_drag`` with
  ``start_coordinate`` and ``coordinate``, a press is a click at a point.
- ``triple_click`` (select a line), ``hold_key``, a click or scroll with a key held
  (``text``), several keys in a row (``key`` with ``"Down Down"``), ``zoom``: no canonical
  action does these; the error names the nearest that exists.
"""

from __future__ import annotations

import json
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.kinds import is_touch
from guiforge.harness.formats.base import (
    ParseError,
    ToolCall,
    model_fields,
    point_pair,
    take,
    wait_seconds,
)
from guiforge.harness.formats.coords import CoordSystem
from guiforge.harness.formats.tools import (
    FunctionTools,
    call_from_function,
    function_arguments,
    function_spec,
)

TOOL_VERSIONS = ("computer_20241022", "computer_20250124", "computer_20251124")
_POINTER = {"left_click": "click", "double_click": "double_click", "right_click": "right_click",
            "middle_click": "click"}
_KINDS = {"click", "double_click", "right_click", "drag", "scroll", "type", "key", "hotkey", "wait", "tap",
          "swipe"}
_NO_CURSOR = ("guiforge's actions carry their point: to press something use left_click with its coordinate; "
              "to drag use left_click_drag with start_coordinate and coordinate")
REFUSED = {
    "mouse_move": "mouse_move only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "left_mouse_down": "left_mouse_down is not an action here; " + _NO_CURSOR,
    "left_mouse_up": "left_mouse_up is not an action here; " + _NO_CURSOR,
    "cursor_position": "cursor_position is not available here; " + _NO_CURSOR,
    "triple_click": "triple_click is not an action here: to select a field's whole text, left_click it and then "
                    "key ctrl+a; double_click selects one word",
    "hold_key": "hold_key is not an action here: press keys together with key, e.g. ctrl+s",
    "zoom": "zoom is not enabled here: the screenshot is already the whole screen at the size you are shown",
}
KNOWN = sorted([*_POINTER, "left_click_drag", "scroll", "type", "key", "wait", "screenshot"])


def _check_version(value: Any) -> None:
    if value not in TOOL_VERSIONS:
        raise ValueError(f"tool_version {value!r} is not one of {', '.join(TOOL_VERSIONS)}")


def _no_modifier(args: dict[str, Any], action: str) -> None:
    if args.get("text") or args.get("key"):
        held = args.get("text") or args.get("key")
        raise ParseError(f"{action} with {held!r} held is not an action here: press the keys with key first, "
                         f"or {action} alone")


class AnthropicComputer(FunctionTools):
    """Anthropic's computer-use tool shape (computer_* and bash_20250124)."""

    name = "anthropic_computer"
    wire = "anthropic"
    default_coords = "pixels"
    description = "Anthropic computer use: the computer tool (left_click, coordinate in pixels) and bash"
    tool_version = "computer_20250124"
    bash_type = "bash_20250124"
    options = {"tool_version": _check_version}

    def tools(self, domain: str, variant: str | None, coords: CoordSystem) -> list[dict[str, Any]]:
        kinds = action_set(domain, variant)
        out: list[dict[str, Any]] = []
        if kinds & _KINDS:
            w, h = coords.space or (coords.width, coords.height)
            out.append({"type": self.tool_version, "name": "computer", "display_width_px": w,
                        "display_height_px": h, "display_number": 1})
        if "bash" in kinds:
            out.append({"type": self.bash_type, "name": "bash"})
        rest = sorted(k for k in kinds if k != "bash" and k not in _KINDS)
        return out + [function_spec(k, coords) for k in rest]

    def to_canonical(self, call: ToolCall, args: dict[str, Any], domain: str) -> dict[str, Any]:
        raw = self._computer(call, args)
        if is_touch(domain) and call.name == "computer":  # a phone: clicks are taps, drags swipes
            raw["type"] = {"click": "tap", "drag": "swipe"}.get(raw["type"], raw["type"])
        return raw

    def _computer(self, call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
        if call.name == "bash":
            take(args, "bash", {"command", "restart"}, ("command",))
            return {"type": "bash", "text": args["command"]}
        if call.name != "computer":
            return call_from_function(call.name, args)
        action = args.get("action")
        if not isinstance(action, str):
            raise ParseError(f"the computer tool needs action as a string, got {json.dumps(action)[:60]}")
        if action in REFUSED:
            raise ParseError(REFUSED[action])
        if action == "screenshot":
            take(args, action, {"action"})
            return {"type": "wait", "amount": 0}
        if action in _POINTER:
            take(args, action, {"action", "coordinate", "text", "key"})
            _no_modifier(args, action)
            if args.get("coordinate") is None:
                raise ParseError(f"{action} needs coordinate [x, y]: " + _NO_CURSOR)
            x, y = point_pair(args, "coordinate", action)
            return {"type": _POINTER[action], "x": x, "y": y,
                    **({"button": "middle"} if action == "middle_click" else {})}
        if action == "left_click_drag":
            take(args, action, {"action", "start_coordinate", "coordinate", "text", "key"}, ("coordinate",))
            _no_modifier(args, action)
            if args.get("start_coordinate") is None:
                raise ParseError("left_click_drag needs 'start_coordinate' [x, y] where the drag starts as well as "
                                 "coordinate where it ends: guiforge does not track the cursor")
            (x, y), (x2, y2) = point_pair(args, "start_coordinate", action), point_pair(args, "coordinate", action)
            return {"type": "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if action == "scroll":
            take(args, action, {"action", "coordinate", "scroll_direction", "scroll_amount", "text"},
                 ("scroll_direction",))
            _no_modifier(args, action)
            point = point_pair(args, "coordinate", action) if args.get("coordinate") is not None else (None, None)
            return {"type": "scroll", "x": point[0], "y": point[1], "direction": args["scroll_direction"],
                    "amount": args.get("scroll_amount")}
        if action == "type":
            take(args, action, {"action", "text"}, ("text",))
            return {"type": "type", "text": args["text"]}
        if action == "key":
            take(args, action, {"action", "text"}, ("text",))
            presses = str(args["text"]).split()
            if len(presses) != 1:
                raise ParseError(f"key {args['text']!r} presses {len(presses)} keys in a row; press one key or "
                                 "chord (e.g. ctrl+s) per action")
            token = presses[0]
            keys = ["+"] if token == "+" else [k for k in token.replace("++", "+plus").split("+") if k]
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        if action == "wait":
            take(args, action, {"action", "duration"})
            return {"type": "wait", "amount": wait_seconds(args.get("duration"))}
        raise ParseError(f"computer action {action!r} does not exist; use one of {', '.join(KNOWN)}")

    def from_canonical(self, action: Action, coords: CoordSystem, domain: str | None) -> tuple[str, dict[str, Any]]:
        f = model_fields(action, coords)
        kind = f["type"]
        if kind == "bash":
            return "bash", {"command": f["text"]}
        if kind not in _KINDS:
            return function_arguments(action, coords)
        if kind == "tap":
            return "computer", {"action": "left_click", "coordinate": [f["x"], f["y"]]}
        if kind in ("click", "double_click", "right_click"):
            name = {"click": "middle_click" if f.get("button") == "middle" else "left_click"}.get(kind, kind)
            return "computer", {"action": name, "coordinate": [f["x"], f["y"]]}
        if kind in ("drag", "swipe"):
            return "computer", {"action": "left_click_drag", "start_coordinate": [f["x"], f["y"]],
                                "coordinate": [f["x2"], f["y2"]]}
        if kind == "scroll":
            args: dict[str, Any] = {"action": "scroll", "scroll_direction": f["direction"]}
            if "x" in f:
                args["coordinate"] = [f["x"], f["y"]]
            if "amount" in f:
                args["scroll_amount"] = f["amount"]
            return "computer", args
        if kind == "type":
            return "computer", {"action": "type", "text": f["text"]}
        if kind in ("key", "hotkey"):
            return "computer", {"action": "key", "text": "+".join(f["keys"])}
        if f.get("amount") == 0:  # a look at the screen
            return "computer", {"action": "screenshot"}
        return "computer", {"action": "wait", **({"duration": f["amount"]} if "amount" in f else {})}
