"""UI-TARS text actions: ``Thought: ...`` then ``Action: click(start_box='(x,y)')``.

Points are read in every form UI-TARS writes them: ``'(x,y)'``, ``'<|box_start|>(x,y)<|box_end|>'``,
``'<point>x y</point>'``, a box ``'(x1,y1,x2,y2)'`` / ``'<bbox>x1 y1 x2 y2</bbox>'`` (its centre),
under ``start_box`` / ``end_box`` or ``point`` / ``start_point`` / ``end_point``. Coordinates:
UI-TARS 1.5 answers in pixels of the smart-resized image (``resized``), 1.0 in ``grid1000``.

Read as UI-TARS's own parser reads it: an empty argument is no argument
(``long_press(start_box=..., time='')``), ``long_press``'s time is not kept, a phone's
``scroll(point, direction)`` is the swipe that scrolls that way and 1.0's phone
``scroll(start_box, end_box)`` a swipe between the points; key names are normalised
(``arrowdown`` is ``down``). ``hover`` and held keys are refused with what to do instead.

Our vocabulary where UI-TARS has no word: ``finished(status='failure')`` / ``'infeasible'``
(plain ``finished()`` is success, ``finished(content=...)`` an answer), ``press_enter()``,
``goto(target=...)``, ``bash(command=...)``, ``call_tool(name=..., arguments='{json}')``, and
``scroll``'s optional ``amount`` and ``wait``'s optional ``seconds``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from guiforge.envs.actions import Action, action_set
from guiforge.envs.kinds import is_touch
from guiforge.harness.formats.base import (
    ActionFormat,
    ModelReply,
    ParseError,
    Rendered,
    finish,
    join_thought,
    model_fields,
    one_action,
    split_thinking,
    take,
)
from guiforge.harness.formats.calls import Call, call_lines, write_call
from guiforge.harness.formats.coords import CoordSystem

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ACTION = re.compile(r"^\s*action\s*:\s*", re.I | re.M)
_THOUGHT = re.compile(r"^\s*(?:thought|reflection)\s*:\s*", re.I | re.M)
HINT = "reply with Thought: ... then Action: one action, e.g. click(start_box='(x,y)')"
_NO_CURSOR = "to press something use click(start_box='(x,y)') at it; to drag use drag(start_box=..., end_box=...)"
REFUSED = {  # actions of UI-TARS's wider action space with no canonical action: what to do instead
    "hover": "hover only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "mouse_move": "mouse_move only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "keydown": "holding a key is not an action here: press keys together with hotkey(key='ctrl c')",
    "keyup": "releasing a held key is not an action here: press keys together with hotkey(key='ctrl c')",
    "release": "releasing a held key is not an action here: press keys together with hotkey(key='ctrl c')",
}

DOCS = {  # the action space lines of UI-TARS's prompt, in our vocabulary
    "click": "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "double_click": "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "right_click": "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "drag": "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')",
    "scroll": "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left', amount=3)",
    "type": "type(content='xxx') # Use escape characters \\', \\\", and \\n in content part.",
    "key": "press(key='enter') # One key.",
    "hotkey": "hotkey(key='ctrl c') # Split keys with a space and use lowercase.",
    "goto": "goto(target='mail') # Open an app by name (or one of its paths).",
    "back": "press_back()",
    "home": "press_home()",
    "enter": "press_enter()",
    "open_app": "open_app(app_name='')",
    "tap": "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "long_press": "long_press(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "swipe": "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')",
    "wait": "wait() # Sleep for 5s and take a screenshot to check for any changes.",
    "bash": "bash(command='ls -la') # Run a command in the terminal.",
    "call_tool": "call_tool(name='...', arguments='{\"key\": \"value\"}') # Call a tool with JSON arguments.",
    "answer": "finished(content='xxx') # Give the answer and end the task.",
    "terminate": "finished() # The task is done; finished(status='infeasible') if it cannot be done.",
}


def read_point(value: Any, name: str, integral: bool) -> tuple[float, float]:
    """A point or a box's centre from any of UI-TARS's spellings."""
    if isinstance(value, list | tuple):
        numbers = [float(v) for v in value]
    elif isinstance(value, str):
        numbers = [float(n) for n in _NUMBER.findall(value)]
    else:
        raise ParseError(f"{name} must be a point such as '(x,y)', got {value!r}")
    if len(numbers) == 4:
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
        if integral:
            numbers = [float(round(n)) for n in numbers]
    if len(numbers) != 2:
        raise ParseError(f"{name} must be a point '(x,y)' or a box '(x1,y1,x2,y2)', got {value!r}")
    return tuple(int(n) if n.is_integer() else n for n in numbers)  # type: ignore[return-value]


def _point_arg(kw: dict[str, Any], names: tuple[str, ...], action: str, integral: bool) -> tuple[float, float]:
    present = [n for n in names if n in kw]
    if len(present) != 1:
        raise ParseError(f"{action} needs one of {', '.join(names)}")
    return read_point(kw[present[0]], present[0], integral)


class UITars(ActionFormat):
    name = "uitars"
    default_coords = "resized"
    template = "uitars.j2"
    description = "UI-TARS text actions: Thought: ... Action: click(start_box='(x,y)')"

    def render(self, domain: str, variant: str | None, coords: CoordSystem) -> Rendered:
        kinds = action_set(domain, variant)
        lines = list(dict.fromkeys(DOCS[k] for k in sorted(kinds, key=list(DOCS).index)))
        return Rendered("\n".join(lines))

    def _canonical(self, call: Call, domain: str, integral: bool) -> dict[str, Any]:
        # An empty argument is an argument not given, as UI-TARS's own parser reads it
        # (the mobile prompt's long_press(start_box='...', time='')).
        name, kw = call.name, {k: v for k, v in call.kwargs.items() if v != ""}
        if name in REFUSED:
            raise ParseError(REFUSED[name])
        if call.args:
            raise ParseError(f"{name}(...) takes keyword arguments only, e.g. {DOCS.get('click')}")
        start = ("start_box", "point", "start_point")
        end = ("end_box", "end_point")
        mobile = is_touch(domain)
        if name in ("click", "left_single", "left_double", "right_single", "long_press"):
            # long_press's time is not kept: a long press here lasts the phone's own long-press time
            take(kw, name, set(start) | ({"time"} if name == "long_press" else set()))
            x, y = _point_arg(kw, start, name, integral)
            kind = {"click": "tap" if mobile else "click", "left_single": "tap" if mobile else "click",
                    "left_double": "double_click", "right_single": "right_click", "long_press": "long_press"}[name]
            return {"type": kind, "x": x, "y": y}
        if name in ("drag", "swipe", "select"):
            take(kw, name, set(start) | set(end))
            (x, y), (x2, y2) = _point_arg(kw, start, name, integral), _point_arg(kw, end, name, integral)
            return {"type": "swipe" if mobile else "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if name == "scroll" and any(n in kw for n in end):  # UI-TARS 1.0's phone: scroll from one point to another
            take(kw, name, set(start) | set(end))
            (x, y), (x2, y2) = _point_arg(kw, start, name, integral), _point_arg(kw, end, name, integral)
            return {"type": "swipe" if mobile else "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if name == "scroll":
            take(kw, name, set(start) | {"direction", "amount"}, ("direction",))
            point = _point_arg(kw, start, name, integral) if any(n in kw for n in start) else (None, None)
            return {"type": "scroll", "x": point[0], "y": point[1], "direction": str(kw["direction"]).lower(),
                    "amount": kw.get("amount")}
        if name == "type":
            take(kw, name, {"content"}, ("content",))
            return {"type": "type", "text": kw["content"]}
        if name in ("hotkey", "press"):
            take(kw, name, {"key"}, ("key",))
            keys = str(kw["key"]).split()
            if mobile and keys == ["enter"]:
                return {"type": "enter"}
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        if name in ("press_back", "press_home", "press_enter"):
            take(kw, name, set())
            return {"type": name.removeprefix("press_")}
        if name == "open_app":
            take(kw, name, {"app_name"}, ("app_name",))
            return {"type": "open_app", "app": kw["app_name"]}
        if name == "goto":
            take(kw, name, {"target"}, ("target",))
            return {"type": "goto", "text": kw["target"]}
        if name == "wait":
            take(kw, name, {"seconds"})
            return {"type": "wait", "amount": kw.get("seconds")}
        if name == "bash":
            take(kw, name, {"command"}, ("command",))
            return {"type": "bash", "text": kw["command"]}
        if name == "call_tool":
            take(kw, name, {"name", "arguments"}, ("name",))
            args = kw.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError as exc:
                    raise ParseError(f"call_tool's arguments are not valid JSON ({exc.msg}): {kw['arguments'][:80]!r}") from None
            return {"type": "call_tool", "text": json.dumps({"name": kw["name"], "arguments": args})}
        if name == "finished":
            take(kw, name, {"content", "status"})
            if kw.get("content") and kw.get("status") not in (None, "success"):
                raise ParseError("finished takes content (an answer) or status, not both")
            if kw.get("content"):
                return {"type": "answer", "answer": kw["content"]}
            return {"type": "terminate", "status": kw.get("status") or "success"}
        if name == "call_user":
            take(kw, name, set())
            return {"type": "terminate", "status": "infeasible"}
        raise ParseError(f"unknown action {name}(...); use one of: "
                         + ", ".join(sorted({d.split('(')[0] for d in DOCS.values()})))

    def decode_reply(self, reply: ModelReply, domain: str, variant: str | None,
                     coords: CoordSystem) -> tuple[str, Action]:
        thinking, text = split_thinking(reply.text, reply.reasoning)
        marks = list(_ACTION.finditer(text))
        if marks:
            head, body = text[:marks[-1].start()], text[marks[-1].end():]
        else:  # no "Action:": only a reply whose last line is a call
            lines = text.strip().splitlines()
            head, body = "\n".join(lines[:-1]), (lines[-1] if lines else "")
        calls = [c for _, c in call_lines(body) if c is not None]
        if not calls and body.strip():
            raise ParseError(f"could not read the action {body.strip()[:120]!r}: {HINT}")
        raw = one_action([self._canonical(c, domain, coords.integral) for c in calls], HINT)
        m = _THOUGHT.search(head)
        thought = head[m.end():] if m else head
        return join_thought(thinking, thought), finish(raw, domain, variant, coords)

    def encode_action(self, thought: str, action: Action, coords: CoordSystem, domain: str | None = None) -> str:
        return f"Thought: {thought}\nAction: {self.action_text(action, coords)}"

    def action_text(self, action: Action, coords: CoordSystem) -> str:
        f = model_fields(action, coords)
        kind = f["type"]

        def box(x: Any, y: Any) -> str:
            return f"<|box_start|>({x},{y})<|box_end|>"

        if kind in ("click", "tap", "double_click", "right_click", "long_press"):
            name = {"double_click": "left_double", "right_click": "right_single", "long_press": "long_press"}.get(kind, "click")
            return write_call(name, start_box=box(f["x"], f["y"]))
        if kind in ("drag", "swipe"):
            return write_call("drag", start_box=box(f["x"], f["y"]), end_box=box(f["x2"], f["y2"]))
        if kind == "scroll":
            kw: dict[str, Any] = {"start_box": box(f["x"], f["y"])} if "x" in f else {}
            kw["direction"] = f["direction"]
            if "amount" in f:
                kw["amount"] = f["amount"]
            return write_call("scroll", **kw)
        if kind == "type":
            return write_call("type", content=f["text"])
        if kind in ("key", "hotkey"):
            return write_call("press" if kind == "key" else "hotkey", key=" ".join(f["keys"]))
        if kind in ("back", "home", "enter"):
            return write_call(f"press_{kind}")
        if kind == "open_app":
            return write_call("open_app", app_name=f["app"])
        if kind == "goto":
            return write_call("goto", target=f["text"])
        if kind == "wait":
            return write_call("wait", **({"seconds": f["amount"]} if "amount" in f else {}))
        if kind == "bash":
            return write_call("bash", command=f["text"])
        if kind == "call_tool":
            payload = json.loads(f["text"])
            return write_call("call_tool", name=payload.get("name"), arguments=json.dumps(payload.get("arguments") or {}))
        if kind == "answer":
            return write_call("finished", content=f["answer"])
        status = f.get("status", "success")
        return write_call("finished", **({} if status == "success" else {"status": status}))
