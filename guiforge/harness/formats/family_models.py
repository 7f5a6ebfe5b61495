"""Responders for :class:`~guiforge.testing.model_server.ModelServer` that answer the way
a model family does: the action an oracle picks for the turn, written in the family's
published format (not by guiforge's codecs), with its point where that family's model
sees it: in the image as the provider hands it to the model (Anthropic's API shrinks an
image over 1568 px or 1.15 MP; a Qwen2.5-VL / UI-TARS server's processor smart-resizes
it), in that image's pixels, or on Qwen3-VL's 0-1000 grid.

``oracle(instruction, step)`` gives the canonical action (0-999 grid) meant at a step of
the task whose instruction opens the conversation; the step is read from the prompt's
"Step N." line. Claude opens every task with a ``screenshot``, as it does.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable
from typing import Any

from guiforge.envs.actions import GRID, Action
from guiforge.models.images import fit_size, smart_resize

Oracle = Callable[[str, int], "Action | None"]
FAMILIES = ("claude", "qwen3-vl", "qwen2.5-vl", "ui-tars-1.5", "openai-tools", "openai-cua")
WIRE = {"claude": "anthropic", "qwen3-vl": "openai", "qwen2.5-vl": "openai", "ui-tars-1.5": "openai",
        "openai-tools": "openai", "openai-cua": "openai"}
_STEP = re.compile(r"^Step (\d+)\.", re.M)
_TASK = re.compile(r"^Task: (.*)", re.S)


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _image_size(message: dict[str, Any]) -> tuple[int, int] | None:
    from PIL import Image  # Pillow: only a test server reads images

    parts = _parts(message) + ([message["output"]] if isinstance(message.get("output"), dict) else [])
    for part in parts:
        data = None
        if part.get("type") == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
        elif part.get("type") == "image":
            data = part["source"]["data"]
        elif part.get("type") in ("input_image", "computer_screenshot"):  # the Responses API
            data = part["image_url"].split(",", 1)[1]
        if data:
            return Image.open(io.BytesIO(base64.b64decode(data))).size
    return None


def _text(message: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for p in _parts(message) if p.get("type") in ("text", "input_text"))


def _conversation(provider: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """(the turns, the system text) of a request in any of the three wires; a Responses
    request's last turn is its items since the last model output (screenshot and step)."""
    if provider != "responses":
        return body["messages"], body.get("system") or _text(body["messages"][0])
    items = body["input"]
    tail = len(items)
    while tail > 0 and items[tail - 1].get("type") not in ("computer_call", "function_call") \
            and items[tail - 1].get("role") != "assistant":
        tail -= 1
    last = {"role": "user", "content": [p for it in items[tail:] for p in
                                        (_parts(it) + ([it["output"]] if isinstance(it.get("output"), dict) else []))]}
    turns = [it for it in items[:tail] if it.get("role") == "user"] + [last]
    return turns, body.get("instructions", "")


def perceived(family: str, received: tuple[int, int]) -> tuple[int, int] | str:
    """The image the family's model looks at, given the image the server received: what
    the provider does to it before the model sees it."""
    w, h = received
    if family == "claude":
        return fit_size(w, h, 1568, 1_150_000)
    if family == "qwen2.5-vl":
        sh, sw = smart_resize(h, w, 28, 3136, 12_845_056)
        return sw, sh
    if family == "ui-tars-1.5":
        sh, sw = smart_resize(h, w, 28, 100 * 28 * 28, 16384 * 28 * 28)
        return sw, sh
    if family == "openai-cua":  # the display as declared: the screenshot as sent
        return w, h
    return {"qwen3-vl": "grid1000", "openai-tools": "grid999"}[family]


def model_xy(gx: int, gy: int, seen: tuple[int, int] | str) -> tuple[int, int]:
    """A grid point as the model writes it: the same place of the image it sees."""
    fx, fy = gx / GRID, gy / GRID
    if seen == "grid1000":
        return round(fx * 1000), round(fy * 1000)
    if seen == "grid999":
        return gx, gy
    return round(fx * (seen[0] - 1)), round(fy * (seen[1] - 1))


class FamilyModel:
    """A responder that plays a model of ``family`` (see the module docstring)."""

    def __init__(self, family: str, oracle: Oracle):
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}; use one of {', '.join(FAMILIES)}")
        self.family, self.oracle = family, oracle
        self.perceived: list[tuple[tuple[int, int], Any]] = []  # (received, seen) per answer

    def __call__(self, provider: str, body: dict[str, Any]) -> str | dict[str, Any]:
        messages, system = _conversation(provider, body)
        texts = [p.get("text", "") for m in messages if m["role"] == "user" for p in _parts(m)]
        task = next((_TASK.match(t) for t in texts if _TASK.match(t)), None)
        instruction = task.group(1).strip() if task else ""
        last = messages[-1]
        steps = _STEP.findall(_text(last))
        mobile = "phone" in system
        received = _image_size(last) or (0, 0)
        seen = perceived(self.family, received) if received != (0, 0) else "grid999"
        self.perceived.append((received, seen))
        if not steps:  # a retry after a refused reply: nothing meant here, so give up
            return self.write(Action(type="terminate", status="failure"), seen, mobile, "I cannot go on.")
        step = int(steps[-1])
        if self.family == "claude":
            if step == 0:
                return self._claude_call({"action": "screenshot"}, "Let me take a screenshot first.")
            step -= 1
        action = self.oracle(instruction, step) or Action(type="terminate", status="failure")
        return self.write(action, seen, mobile, f"Step {step}: I'll do the next thing.")

    # -- the families' own words -------------------------------------------------------
    def write(self, action: Action, seen: Any, mobile: bool, thought: str) -> str | dict[str, Any]:
        f = action.model_dump(exclude_none=True)
        for xk, yk in (("x", "y"), ("x2", "y2")):
            if xk in f:
                f[xk], f[yk] = model_xy(f[xk], f[yk], seen)
        writer = {"claude": self._claude, "qwen3-vl": self._qwen, "qwen2.5-vl": self._qwen,
                  "ui-tars-1.5": self._uitars, "openai-tools": self._openai, "openai-cua": self._cua}[self.family]
        return writer(f, mobile, thought)

    def _claude_call(self, args: dict[str, Any], thought: str, name: str = "computer") -> dict[str, Any]:
        return {"content": [{"type": "text", "text": thought}, {"type": "tool_use", "name": name, "input": args}]}

    def _claude(self, f: dict[str, Any], mobile: bool, thought: str) -> dict[str, Any]:
        t = f["type"]
        if t in ("click", "tap", "double_click", "right_click"):
            name = {"double_click": "double_click", "right_click": "right_click"}.get(t, "left_click")
            return self._claude_call({"action": name, "coordinate": [f["x"], f["y"]]}, thought)
        if t in ("drag", "swipe"):
            return self._claude_call({"action": "left_click_drag", "start_coordinate": [f["x"], f["y"]],
                                      "coordinate": [f["x2"], f["y2"]]}, thought)
        if t == "scroll":
            args = {"action": "scroll", "scroll_direction": f["direction"], "scroll_amount": f.get("amount", 3)}
            if "x" in f:
                args["coordinate"] = [f["x"], f["y"]]
            return self._claude_call(args, thought)
        if t == "type":
            return self._claude_call({"action": "type", "text": f["text"]}, thought)
        if t in ("key", "hotkey"):
            xdotool = {"enter": "Return", "escape": "Escape", "backspace": "BackSpace", "tab": "Tab",
                       "pagedown": "Page_Down", "pageup": "Page_Up", "down": "Down", "up": "Up"}
            return self._claude_call({"action": "key", "text": "+".join(xdotool.get(k, k) for k in f["keys"])},
                                     thought)
        if t == "wait":
            return self._claude_call({"action": "wait", "duration": f.get("amount", 1)}, thought)
        args = {k: v for k, v in f.items() if k != "type"}  # answer, terminate, goto, open_app, back...
        return self._claude_call(args, thought, name=t)

    def _qwen(self, f: dict[str, Any], mobile: bool, thought: str) -> str:
        t = f["type"]
        if mobile:
            name = "mobile_use"
            args: dict[str, Any] = {
                "tap": lambda: {"action": "click", "coordinate": [f["x"], f["y"]]},
                "long_press": lambda: {"action": "long_press", "coordinate": [f["x"], f["y"]], "time": 1},
                "swipe": lambda: {"action": "swipe", "coordinate": [f["x"], f["y"]], "coordinate2": [f["x2"], f["y2"]]},
                "type": lambda: {"action": "type", "text": f.get("text")},
                "back": lambda: {"action": "system_button", "button": "Back"},
                "home": lambda: {"action": "system_button", "button": "Home"},
                "enter": lambda: {"action": "system_button", "button": "Enter"},
                "open_app": lambda: {"action": "open", "text": f.get("app")},
                "wait": lambda: {"action": "wait", "time": f.get("amount", 1)},
                "answer": lambda: {"action": "answer", "text": f.get("answer")},
                "terminate": lambda: {"action": "terminate", "status": f.get("status")},
            }[t]()
        else:
            name = "computer_use"
            args = {
                "click": lambda: {"action": "left_click", "coordinate": [f["x"], f["y"]]},
                "double_click": lambda: {"action": "double_click", "coordinate": [f["x"], f["y"]]},
                "right_click": lambda: {"action": "right_click", "coordinate": [f["x"], f["y"]]},
                "drag": lambda: {"action": "left_click_drag", "start_coordinate": [f["x"], f["y"]],
                                 "coordinate": [f["x2"], f["y2"]]},
                "scroll": lambda: {"action": "hscroll" if f["direction"] in ("left", "right") else "scroll",
                                   "pixels": f.get("amount", 3) * (1 if f["direction"] in ("up", "right") else -1),
                                   **({"coordinate": [f["x"], f["y"]]} if "x" in f else {})},
                "type": lambda: {"action": "type", "text": f.get("text")},
                "key": lambda: {"action": "key", "keys": f["keys"]},
                "hotkey": lambda: {"action": "key", "keys": f["keys"]},
                "goto": lambda: {"action": "goto", "text": f.get("text")},
                "back": lambda: {"action": "back"},
                "wait": lambda: {"action": "wait", "time": f.get("amount", 1)},
                "answer": lambda: {"action": "answer", "text": f.get("answer")},
                "terminate": lambda: {"action": "terminate", "status": f.get("status")},
            }[t]()
        call = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
        return f"{thought}\n<tool_call>\n{call}\n</tool_call>"

    def _uitars(self, f: dict[str, Any], mobile: bool, thought: str) -> str:
        t = f["type"]

        def point(x: int, y: int) -> str:
            return f"<point>{x} {y}</point>"

        def quoted(text: str) -> str:
            return text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")

        if t in ("click", "tap"):
            action = f"click(point='{point(f['x'], f['y'])}')"
        elif t in ("double_click", "right_click", "long_press"):
            name = {"double_click": "left_double", "right_click": "right_single", "long_press": "long_press"}[t]
            action = f"{name}(point='{point(f['x'], f['y'])}')"
        elif t in ("drag", "swipe"):
            action = f"drag(start_point='{point(f['x'], f['y'])}', end_point='{point(f['x2'], f['y2'])}')"
        elif t == "scroll":
            where = f"point='{point(f['x'], f['y'])}', " if "x" in f else ""
            action = f"scroll({where}direction='{f['direction']}')"
        elif t == "type":
            action = f"type(content='{quoted(f['text'])}')"
        elif t in ("key", "hotkey"):
            action = f"hotkey(key='{' '.join(f['keys'])}')"
        elif t in ("back", "home"):
            action = f"press_{t}()"
        elif t == "enter":
            action = "hotkey(key='enter')"
        elif t == "open_app":
            action = f"open_app(app_name='{f['app']}')"
        elif t == "goto":
            action = f"goto(target='{f['text']}')"
        elif t == "wait":
            action = "wait()"
        elif t == "answer":
            action = f"finished(content='{quoted(f['answer'])}')"
        else:
            action = "finished()" if f.get("status") == "success" else "call_user()"
        return f"Thought: {thought}\nAction: {action}"

    def _openai(self, f: dict[str, Any], mobile: bool, thought: str) -> dict[str, Any]:
        name = f.pop("type")
        return {"content": None, "reasoning_content": thought,
                "tool_calls": [{"function": {"name": name, "arguments": json.dumps(f, ensure_ascii=False)}}]}

    def _cua(self, f: dict[str, Any], mobile: bool, thought: str) -> dict[str, Any]:
        t = f["type"]
        action: dict[str, Any] | None = None
        if t in ("click", "tap", "right_click"):
            action = {"type": "click", "button": "right" if t == "right_click" else "left", "x": f["x"], "y": f["y"]}
        elif t == "double_click":
            action = {"type": "double_click", "x": f["x"], "y": f["y"]}
        elif t in ("drag", "swipe"):
            action = {"type": "drag", "path": [{"x": f["x"], "y": f["y"]}, {"x": f["x2"], "y": f["y2"]}]}
        elif t == "scroll":
            px = f.get("amount", 3) * 100 * (1 if f["direction"] in ("down", "right") else -1)
            side = f["direction"] in ("left", "right")
            action = {"type": "scroll", "x": f.get("x", 0), "y": f.get("y", 0), "scroll_x": px if side else 0,
                      "scroll_y": 0 if side else px}
        elif t == "type":
            action = {"type": "type", "text": f["text"]}
        elif t in ("key", "hotkey"):
            action = {"type": "keypress", "keys": [k.upper() for k in f["keys"]]}
        elif t == "wait":
            action = {"type": "wait"}
        elif t == "back" and not mobile:
            action = {"type": "click", "button": "back", "x": 0, "y": 0}
        summary = {"type": "reasoning", "summary": [{"type": "summary_text", "text": thought}]}
        if action is not None:
            return {"output": [summary, {"type": "computer_call", "action": action}]}
        args = {k: v for k, v in f.items() if k != "type"}  # answer, terminate, goto, open_app, ...
        return {"output": [summary, {"type": "function_call", "name": t, "arguments": json.dumps(args)}]}
