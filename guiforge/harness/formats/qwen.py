"""Qwen2.5-VL / Qwen3-VL computer use: one ``computer_use`` tool (``mobile_use`` on a phone)
whose ``action`` argument names the action, points as ``coordinate: [x, y]``.

``qwen_vl`` tells the model the tool in the system prompt (Qwen's ``<tools>`` block) and
reads ``<tool_call>{...}</tool_call>`` from the content, as the cookbooks run it;
``qwen_vl_tools`` sends the tool natively and reads the server's tool calls. Both read
either place. Coordinates: pixels of the smart-resized image (Qwen2.5-VL, ``resized``) or
0-1000 (Qwen3-VL, ``grid1000``), as declared per model.

Every action of both cookbooks' tools is read: ``middle_click`` is a middle-button click,
``hscroll`` a horizontal scroll (positive pixels: right), ``long_press``'s ``time`` is not
kept (the phone's long press has its own length), ``mobile_use``'s ``key`` reads Back, Home
and Enter. Refused with what to do instead: ``mouse_move`` and a ``left_click_drag``
without ``start_coordinate`` (guiforge's actions carry their points; no cursor is tracked),
``triple_click``, a ``system_button`` Menu.

Our vocabulary where Qwen's has no word: ``left_click_drag`` takes ``start_coordinate``
(Qwen's drags from wherever the mouse is), ``scroll`` may take ``coordinate``, and
``goto``, ``back``, ``bash`` are actions of the tool; ``call_tool`` is a function of its own.
"""

from __future__ import annotations

import json
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.kinds import is_touch
from guiforge.harness.formats.base import (
    ModelReply,
    ParseError,
    ToolCall,
    model_fields,
    point_pair,
    take,
    wait_seconds,
    whole_number,
)
from guiforge.harness.formats.coords import CoordSystem
from guiforge.harness.formats.tools import FunctionTools, function_arguments, function_spec

_COMPUTER = {  # canonical type -> Qwen action
    "click": "left_click", "double_click": "double_click", "right_click": "right_click",
    "drag": "left_click_drag", "scroll": "scroll", "type": "type", "key": "key", "hotkey": "key",
    "wait": "wait", "answer": "answer", "terminate": "terminate", "goto": "goto", "back": "back",
    "bash": "bash",
}
_MOBILE = {
    "tap": "click", "long_press": "long_press", "swipe": "swipe", "type": "type", "back": "system_button",
    "home": "system_button", "enter": "system_button", "open_app": "open", "wait": "wait",
    "answer": "answer", "terminate": "terminate",
}
_BUTTONS = {"back": "Back", "home": "Home", "enter": "Enter"}
_NO_CURSOR = ("guiforge's actions carry their point: to press something use left_click with its coordinate; to drag "
              "use left_click_drag with start_coordinate and coordinate")
REFUSED = {  # actions of Qwen's published computer_use with no canonical action: what to do instead
    "mouse_move": "mouse_move only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "triple_click": "triple_click is not an action here: to select a field's whole text, left_click it and then "
                    "key [\"ctrl\", \"a\"]; double_click selects one word",
}
_DOCS = {
    "left_click": "Click the left mouse button at `coordinate`.",
    "double_click": "Double-click the left mouse button at `coordinate`.",
    "right_click": "Click the right mouse button at `coordinate`.",
    "left_click_drag": "Press at `start_coordinate`, drag to `coordinate`, release.",
    "scroll": "Scroll the wheel by `pixels` (positive up, negative down) at `coordinate`; "
              "`hscroll`-style horizontal scrolls take `direction` left or right.",
    "type": "Type `text` into the focused field.",
    "key": "Press `keys` together (one key, or a combination such as [\"ctrl\", \"s\"]).",
    "wait": "Wait `time` seconds for the screen to change.",
    "answer": "Give the final answer `text` and end the task.",
    "terminate": "End the task with `status` success, failure or infeasible.",
    "goto": "Open an app by name (or one of its paths) given as `text`.",
    "back": "Go back.",
    "bash": "Run `command` in the terminal (the workspace is the cwd).",
    "click": "Tap the point `coordinate`.",
    "long_press": "Press and hold at `coordinate`.",
    "swipe": "Swipe from `coordinate` to `coordinate2`.",
    "system_button": "Press the system `button`: Back, Home or Enter.",
    "open": "Open the app named `text`.",
}



class QwenComputerUse(FunctionTools):
    name = "qwen_vl"
    native_tools = False
    template = "qwen_vl.j2"
    default_coords = "resized"
    description = "Qwen-VL computer_use / mobile_use <tool_call> in the content"

    @staticmethod
    def tool_name(domain: str) -> str:
        return "mobile_use" if is_touch(domain) else "computer_use"

    def tools(self, domain: str, variant: str | None, coords: CoordSystem) -> list[dict[str, Any]]:
        kinds = action_set(domain, variant)
        table = _MOBILE if is_touch(domain) else _COMPUTER
        actions = sorted({table[k] for k in kinds if k in table})
        out = []
        if actions:
            point = {"type": "array", "items": {"type": "integer" if coords.integral else "number"},
                     "description": coords.describe()}
            props: dict[str, Any] = {
                "action": {"type": "string", "enum": actions,
                           "description": "\n".join(f"* `{a}`: {_DOCS[a]}" for a in actions)},
                "coordinate": point, "text": {"type": "string"}, "time": {"type": "number"},
            }
            if is_touch(domain):
                props |= {"coordinate2": point, "button": {"type": "string", "enum": ["Back", "Home", "Enter"]}}
            else:
                props |= {"start_coordinate": point, "keys": {"type": "array", "items": {"type": "string"}},
                          "pixels": {"type": "integer"}, "direction": {"type": "string", "enum": ["left", "right"]},
                          "command": {"type": "string"}}
            props["status"] = {"type": "string", "enum": ["success", "failure", "infeasible"]}
            size = coords.space or ((1000, 1000) if coords.kind == "grid1000" else None)  # Qwen3-VL's 0-1000 grid
            screen = f" The screen's resolution is {size[0]}x{size[1]}." if size else ""
            out.append({"name": self.tool_name(domain),
                        "description": f"Use a mouse and keyboard to interact with the screen.{screen} "
                                       + coords.describe(),
                        "parameters": {"type": "object", "properties": props, "required": ["action"]}})
        if "call_tool" in kinds:
            out.append(function_spec("call_tool", coords))
        return out

    def to_canonical(self, call: ToolCall, args: dict[str, Any], domain: str) -> dict[str, Any]:
        if call.name == "call_tool":
            return super().to_canonical(call, args, domain)
        if call.name != self.tool_name(domain):
            raise ParseError(f"there is no tool {call.name!r}; call {self.tool_name(domain)}")
        action = args.get("action")
        if not isinstance(action, str):
            raise ParseError(f"{call.name} needs action as a string, got {json.dumps(action)[:60]}")
        return self._mobile(action, args) if is_touch(domain) else self._computer(action, args)

    def _computer(self, action: Any, args: dict[str, Any]) -> dict[str, Any]:
        pointer = {"left_click": "click", "double_click": "double_click", "right_click": "right_click",
                   "middle_click": "click"}
        if action in REFUSED:
            raise ParseError(REFUSED[action])
        if action in pointer:
            take(args, action, {"action", "coordinate"})
            if args.get("coordinate") is None:
                raise ParseError(f"{action} needs coordinate [x, y]: guiforge does not track the cursor")
            x, y = point_pair(args, "coordinate", action)
            return {"type": pointer[action], "x": x, "y": y, **({"button": "middle"} if action == "middle_click" else {})}
        if action == "left_click_drag":
            take(args, action, {"action", "start_coordinate", "coordinate"}, ("coordinate",))
            if args.get("start_coordinate") is None:
                raise ParseError("left_click_drag needs start_coordinate [x, y] where the drag starts as well as "
                                 "coordinate where it ends: guiforge does not track the cursor")
            (x, y), (x2, y2) = point_pair(args, "start_coordinate", action), point_pair(args, "coordinate", action)
            return {"type": "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if action in ("scroll", "hscroll"):
            take(args, action, {"action", "coordinate", "pixels", "direction"}, ("pixels",))
            x, y = point_pair(args, "coordinate", action) if args.get("coordinate") is not None else (None, None)
            pixels = whole_number(args["pixels"], f"{action}'s pixels")
            if args.get("direction") is not None and args["direction"] not in ("left", "right"):
                raise ParseError(f"{action}'s direction is left or right (vertical scrolls use the sign of pixels)")
            if action == "hscroll" or args.get("direction") is not None:
                # hscroll: positive pixels scroll right (pyautogui.hscroll, which Qwen's runners call)
                direction = args.get("direction") or ("right" if pixels > 0 else "left")
            else:
                direction = "up" if pixels > 0 else "down"
            return {"type": "scroll", "x": x, "y": y, "direction": direction, "amount": abs(pixels)}
        if action in ("type", "answer", "goto"):
            take(args, action, {"action", "text"}, ("text",))
            return {"type": action, ("answer" if action == "answer" else "text"): args["text"]}
        if action == "key":
            take(args, action, {"action", "keys", "text"})
            keys = args.get("keys", args.get("text"))
            if keys is None:
                raise ParseError("key needs keys, e.g. [\"ctrl\", \"s\"]")
            keys = keys if isinstance(keys, list) else [keys]
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        if action == "bash":
            take(args, action, {"action", "command"}, ("command",))
            return {"type": "bash", "text": args["command"]}
        return self._common(action, args, "left_click, double_click, right_click, middle_click, left_click_drag, "
                                          "scroll, hscroll, type, key, wait, answer, terminate")

    def _mobile(self, action: Any, args: dict[str, Any]) -> dict[str, Any]:
        if action in ("click", "long_press"):
            # long_press's time is not kept: a long press here lasts the phone's own long-press time
            take(args, action, {"action", "coordinate"} | ({"time"} if action == "long_press" else set()),
                 ("coordinate",))
            x, y = point_pair(args, "coordinate", action)
            return {"type": "tap" if action == "click" else "long_press", "x": x, "y": y}
        if action == "swipe":
            take(args, action, {"action", "coordinate", "coordinate2"}, ("coordinate", "coordinate2"))
            (x, y), (x2, y2) = point_pair(args, "coordinate", action), point_pair(args, "coordinate2", action)
            return {"type": "swipe", "x": x, "y": y, "x2": x2, "y2": y2}
        if action in ("type", "answer", "open"):
            take(args, action, {"action", "text"}, ("text",))
            field = {"type": "text", "answer": "answer", "open": "app"}[action]
            return {"type": "open_app" if action == "open" else action, field: args["text"]}
        if action in ("system_button", "key"):  # key: adb keyevent names; the phone has Back, Home, Enter
            name = "button" if action == "system_button" else "text"
            take(args, action, {"action", name}, (name,))
            pressed = str(args[name]).lower().removeprefix("keycode_")
            kind = {"back": "back", "home": "home", "enter": "enter"}.get(pressed)
            if kind is None:
                raise ParseError(f"{action} {args[name]!r} is not a button of this phone: use system_button with "
                                 "button Back, Home or Enter")
            return {"type": kind}
        return self._common(action, args, "click, long_press, swipe, type, system_button, open, wait, answer, "
                                          "terminate")

    def _common(self, action: Any, args: dict[str, Any], known: str) -> dict[str, Any]:
        if action == "wait":
            take(args, action, {"action", "time"})
            return {"type": "wait", "amount": wait_seconds(args.get("time"))}
        if action == "terminate":
            take(args, action, {"action", "status"}, ("status",))
            return {"type": "terminate", "status": args["status"]}
        if action == "back":
            take(args, action, {"action"})
            return {"type": "back"}
        raise ParseError(f"action {action!r} is not one of: {known}")

    def from_canonical(self, action: Action, coords: CoordSystem, domain: str | None) -> tuple[str, dict[str, Any]]:
        # Without a domain, mobile-only types say it is a phone; the rest are computer_use.
        f = model_fields(action, coords)
        kind = f.pop("type")
        if kind == "call_tool":
            return function_arguments(action, coords)
        if kind in ("tap", "long_press", "swipe", "home", "enter", "open_app") or is_touch(domain):
            return "mobile_use", self._mobile_args(kind, f)
        args: dict[str, Any] = {"action": _COMPUTER[kind]}
        if kind in ("click", "double_click", "right_click"):
            args["coordinate"] = [f["x"], f["y"]]
        elif kind == "drag":
            args |= {"start_coordinate": [f["x"], f["y"]], "coordinate": [f["x2"], f["y2"]]}
        elif kind == "scroll":
            if "x" in f:
                args["coordinate"] = [f["x"], f["y"]]
            amount = f.get("amount", 3)  # Qwen's scroll always has an amount
            if f["direction"] in ("left", "right"):
                args |= {"direction": f["direction"], "pixels": amount}
            else:
                args["pixels"] = amount if f["direction"] == "up" else -amount
        elif kind in ("type", "goto"):
            args["text"] = f["text"]
        elif kind == "answer":
            args["text"] = f["answer"]
        elif kind in ("key", "hotkey"):
            args["keys"] = f["keys"]
        elif kind == "bash":
            args["command"] = f["text"]
        elif kind == "wait" and "amount" in f:
            args["time"] = f["amount"]
        elif kind == "terminate":
            args["status"] = f["status"]
        return "computer_use", args

    def _mobile_args(self, kind: str, f: dict[str, Any]) -> dict[str, Any]:
        args: dict[str, Any] = {"action": _MOBILE[kind]}
        if kind in ("tap", "long_press"):
            args["coordinate"] = [f["x"], f["y"]]
        elif kind == "swipe":
            args |= {"coordinate": [f["x"], f["y"]], "coordinate2": [f["x2"], f["y2"]]}
        elif kind in _BUTTONS:
            args["button"] = _BUTTONS[kind]
        elif kind == "open_app":
            args["text"] = f["app"]
        elif kind == "type":
            args["text"] = f["text"]
        elif kind == "answer":
            args["text"] = f["answer"]
        elif kind == "wait" and "amount" in f:
            args["time"] = f["amount"]
        elif kind == "terminate":
            args["status"] = f["status"]
        return args

    def encode_action(self, thought: str, action: Action, coords: CoordSystem,
                      domain: str | None = None) -> str | dict[str, Any]:
        name, args = self.from_canonical(action, coords, domain)
        call = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
        return (f"{thought}\n" if thought else "") + f"<tool_call>\n{call}\n</tool_call>"


class QwenComputerUseTools(QwenComputerUse):
    name = "qwen_vl_tools"
    native_tools = True
    template = "tools.j2"
    description = "Qwen-VL computer_use / mobile_use as native tool calls"

    def encode_action(self, thought: str, action: Action, coords: CoordSystem,
                      domain: str | None = None) -> str | dict[str, Any]:
        name, args = self.from_canonical(action, coords, domain)
        return {"role": "assistant", "content": thought or None,
                "tool_calls": [{"id": "call_0", "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]}

    @staticmethod
    def as_reply(encoded: str | dict[str, Any]) -> ModelReply:
        return FunctionTools.as_reply(encoded)
