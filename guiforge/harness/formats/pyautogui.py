"""pyautogui-style code actions (Aguvis, Smol2Operator): ``pyautogui.click(x=0.42, y=0.17)``,
points as fractions of the screen (``unit``) unless declared otherwise.

Read from a ```python fence, a ``<code>`` block, the lines after ``Action:`` or after
Aguvis's ``<|recipient|>os``, else the reply's call lines. Both vocabularies are read:
pyautogui's (``click``, ``doubleClick``, ``rightClick``, ``write``, ``press``, ``hotkey``,
``scroll``/``hscroll``) with Aguvis's ``mobile.*`` gestures, and Smol2Operator's
(``double_click``, ``type``, ``drag``/``swipe(from_coord, to_coord)``, ``navigate_back``,
``final_answer``, ...). Written: pyautogui's names, ``mobile.*`` on a phone.
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
    whole_number,
)
from guiforge.harness.formats.calls import Call, call_lines, write_call
from guiforge.harness.formats.coords import CoordSystem

_CODE = re.compile(r"```(?:python|py)?\s*\n?(.*?)```|<code>(.*?)</code>", re.S)
_RECIPIENT = re.compile(r"<\|recipient\|>\s*os\s*\n", re.S)
_ACTION = re.compile(r"^\s*action\s*:\s*", re.I | re.M)
_THOUGHT = re.compile(r"^\s*(?:thought|assistant)\s*:\s*", re.I | re.M)
_PREFIXES = ("pyautogui.", "mobile.", "computer.", "browser.", "answer.")
HINT = "reply with one pyautogui call in a ```python block, e.g. pyautogui.click(x=0.5, y=0.3)"

DOCS = {
    "click": "pyautogui.click(x=X, y=Y)", "double_click": "pyautogui.doubleClick(x=X, y=Y)",
    "right_click": "pyautogui.rightClick(x=X, y=Y)",
    "drag": "pyautogui.drag(from_coord=[X1, Y1], to_coord=[X2, Y2])",
    "scroll": "pyautogui.scroll(CLICKS, x=X, y=Y)  # positive up, negative down; pyautogui.hscroll: positive right",
    "type": "pyautogui.write(message='text')", "key": "pyautogui.press('enter')",
    "hotkey": "pyautogui.hotkey('ctrl', 's')", "goto": "browser.goto(url='mail')  # an app by name or path",
    "back": "browser.back()", "wait": "wait(seconds=1)", "answer": "answer(answer='...')  # ends the task",
    "terminate": "terminate(status='success')  # or 'failure', 'infeasible'",
    "tap": "pyautogui.click(x=X, y=Y)", "long_press": "mobile.long_press(x=X, y=Y)",
    "swipe": "mobile.swipe(from_coord=[X1, Y1], to_coord=[X2, Y2])", "home": "mobile.home()",
    "enter": "mobile.enter()", "open_app": "mobile.open_app(app_name='mail')",
    "bash": "bash(command='ls -la')", "call_tool": "call_tool(name='...', arguments={...})",
}


_NO_CURSOR = "to press something click at it, e.g. pyautogui.click(x=X, y=Y); no cursor is tracked"
REFUSED = {  # pyautogui calls with no canonical action: what to do instead
    "moveTo": "moveTo only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "move": "move only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "mouseMove": "mouseMove only moves the pointer, which changes nothing here; " + _NO_CURSOR,
    "tripleClick": "tripleClick is not an action here: to select a field's whole text, click it and then "
                   "pyautogui.hotkey('ctrl', 'a'); doubleClick selects one word",
    "mouseDown": "mouseDown is not an action here: drag with pyautogui.drag(from_coord=[X1, Y1], to_coord=[X2, Y2])",
    "mouseUp": "mouseUp is not an action here: drag with pyautogui.drag(from_coord=[X1, Y1], to_coord=[X2, Y2])",
    "keyUp": "releasing a held key is not an action here: press keys together with pyautogui.hotkey('ctrl', 's')",
}


def _xy(call: Call, names: tuple[str, str] = ("x", "y")) -> tuple[Any, Any]:
    kw, args = call.kwargs, call.args
    if names[0] in kw or names[1] in kw:
        if names[0] not in kw or names[1] not in kw:
            raise ParseError(f"{call.name} needs both {names[0]} and {names[1]}")
        return kw.pop(names[0]), kw.pop(names[1])
    if len(args) >= 2:
        x, y = args[0], args[1]
        del args[:2]
        return x, y
    raise ParseError(f"{call.name} needs a point: {names[0]}=..., {names[1]}=...")


def _pair(call: Call, key: str) -> tuple[Any, Any]:
    value = call.kwargs.pop(key, None)
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ParseError(f"{call.name} needs {key}=[x, y]")
    return value[0], value[1]


def _no_more(call: Call, allowed: frozenset[str] = frozenset()) -> None:
    if call.args:
        raise ParseError(f"{call.name} has extra positional arguments {call.args!r}")
    take(call.kwargs, call.name, allowed)


# calls that take one argument, by keyword or first in place: name -> (keyword, action type, field)
_ONE_ARGUMENT = {
    "open_app": ("app_name", "open_app", "app"), "goto": ("url", "goto", "text"),
    "wait": ("seconds", "wait", "amount"), "sleep": ("seconds", "wait", "amount"),
    "answer": ("answer", "answer", "answer"), "final_answer": ("answer", "answer", "answer"),
    "terminate": ("status", "terminate", "status"), "bash": ("command", "bash", "text"),
}


def _sole(call: Call, keyword: str):
    """The call's one argument: ``keyword=``, else its first positional one; nothing else may follow."""
    positional = call.args.pop(0) if call.args else None
    value = call.kwargs.pop(keyword, positional)
    _no_more(call)
    return value


class PyAutoGUI(ActionFormat):
    name = "pyautogui"
    default_coords = "unit"
    template = "pyautogui.j2"
    description = "pyautogui-style calls (Aguvis, Smol2Operator), points as fractions of the screen"

    def render(self, domain: str, variant: str | None, coords: CoordSystem) -> Rendered:
        kinds = sorted(action_set(domain, variant), key=list(DOCS).index)
        return Rendered("\n".join(dict.fromkeys(DOCS[k] for k in kinds)))

    def _canonical(self, call: Call, domain: str) -> dict[str, Any]:
        name = call.name
        for prefix in _PREFIXES:
            name = name.removeprefix(prefix)
        call = Call(name, list(call.args), dict(call.kwargs))
        mobile = is_touch(domain)
        if name in REFUSED:
            raise ParseError(REFUSED[name])
        if name in ("dragTo", "drag") and "from_coord" not in call.kwargs:
            raise ParseError(f"{name} from the cursor is not an action here: give both ends, "
                             "pyautogui.drag(from_coord=[X1, Y1], to_coord=[X2, Y2]); no cursor is tracked")
        if name == "middleClick":
            name, call = "click", Call("click", call.args, {**call.kwargs, "button": "middle"})
        clicks = call.kwargs.pop("clicks", None) if name == "click" else None
        if clicks not in (None, 1, 2):
            raise ParseError(f"click with clicks={clicks!r} is not an action here: clicks=1 clicks, clicks=2 double-clicks")
        if clicks == 2:
            name = "doubleClick"
        if name in ("click", "tap", "doubleClick", "double_click", "rightClick", "right_click", "long_press"):
            x, y = _xy(call)
            button = call.kwargs.pop("button", None)
            if call.args or call.kwargs:
                raise ParseError(f"{name} takes x, y" + (" and button" if name == "click" else ""))
            kind = {"doubleClick": "double_click", "double_click": "double_click", "rightClick": "right_click",
                    "right_click": "right_click", "long_press": "long_press"}.get(name, "tap" if mobile else "click")
            if button is not None and kind != "click":
                raise ParseError(f"{name} does not take a button")
            if button == "right":
                kind, button = "right_click", None
            return {"type": kind, "x": x, "y": y, "button": None if button == "left" else button}
        if name in ("drag", "dragTo", "swipe"):
            (x, y), (x2, y2) = _pair(call, "from_coord"), _pair(call, "to_coord")
            _no_more(call)
            return {"type": "swipe" if mobile else "drag", "x": x, "y": y, "x2": x2, "y2": y2}
        if name in ("scroll", "hscroll"):
            if "direction" in call.kwargs:  # Smol2Operator: scroll(direction='down', amount=3)
                direction, amount = call.kwargs.pop("direction"), call.kwargs.pop("amount", None)
            else:
                clicks = call.kwargs.pop("clicks", call.args.pop(0) if call.args else None)
                clicks = whole_number(clicks, f"{name}'s clicks (e.g. pyautogui.{name}(-3))")
                up, down = ("right", "left") if name == "hscroll" else ("up", "down")
                direction, amount = (up if clicks > 0 else down), abs(clicks)
            x, y = _xy(call) if ("x" in call.kwargs or len(call.args) >= 2) else (None, None)
            _no_more(call)
            return {"type": "scroll", "x": x, "y": y, "direction": direction, "amount": amount}
        if name in ("write", "typewrite", "type"):
            text = call.kwargs.pop("message", call.kwargs.pop("text", call.args.pop(0) if call.args else None))
            _no_more(call)
            return {"type": "type", "text": text}
        if name in ("press", "hotkey", "keyDown"):
            keys = call.kwargs.pop("keys", call.kwargs.pop("key", None))
            if keys is None:
                keys, call.args = list(call.args), []
            keys = [keys] if isinstance(keys, str) else list(keys) if isinstance(keys, list | tuple) else keys
            _no_more(call)
            if not keys or not all(isinstance(k, str) for k in keys):
                raise ParseError(f"{name} needs key names, e.g. pyautogui.hotkey('ctrl', 's')")
            if mobile and keys == ["enter"]:
                return {"type": "enter"}
            return {"type": "hotkey" if len(keys) > 1 else "key", "keys": keys}
        simple = {"back": "back", "navigate_back": "back", "home": "home", "navigate_home": "home", "enter": "enter"}
        if name in simple:
            _no_more(call)
            return {"type": simple[name]}
        if name in _ONE_ARGUMENT:
            keyword, kind, field = _ONE_ARGUMENT[name]
            value = _sole(call, keyword)
            if kind == "wait" and value is not None:
                value = whole_number(value, "wait's seconds")
            return {"type": kind, field: value}
        if name == "call_tool":
            tool = call.kwargs.pop("name", None)
            args = call.kwargs.pop("arguments", {})
            _no_more(call)
            if not isinstance(args, dict):
                raise ParseError("call_tool's arguments must be a dict")
            return {"type": "call_tool", "text": json.dumps({"name": tool, "arguments": args})}
        raise ParseError(f"unknown action {call.name}(...); use: " + ", ".join(d.split("(")[0] for d in DOCS.values()))

    def _code(self, text: str) -> tuple[str, str]:
        """(prose, code): where the reply's action lines are."""
        blocks = [a or b for a, b in _CODE.findall(text)]
        if blocks:
            return _CODE.sub("", text), "\n".join(blocks)
        m = _RECIPIENT.search(text)
        if m:
            return text[:m.start()].replace("<|im_start|>assistant", ""), text[m.end():]
        marks = list(_ACTION.finditer(text))
        if marks:
            return text[:marks[-1].start()], text[marks[-1].end():]
        lines = call_lines(text)
        return "\n".join(t for t, c in lines if c is None), "\n".join(t for t, c in lines if c is not None)

    def decode_reply(self, reply: ModelReply, domain: str, variant: str | None,
                     coords: CoordSystem) -> tuple[str, Action]:
        thinking, text = split_thinking(reply.text, reply.reasoning)
        prose, code = self._code(text)
        calls = []
        for line, call in call_lines(code):
            if call is None and line.strip() and not line.strip().startswith("#"):
                raise ParseError(f"could not read the line {line.strip()[:100]!r}: {HINT}")
            if call is not None:
                calls.append(call)
        raw = one_action([self._canonical(c, domain) for c in calls], HINT)
        prose = _THOUGHT.sub("", prose.strip()).strip()
        return join_thought(thinking, prose), finish(raw, domain, variant, coords)

    def encode_action(self, thought: str, action: Action, coords: CoordSystem, domain: str | None = None) -> str:
        return (f"{thought}\n" if thought else "") + f"```python\n{self.action_text(action, coords, domain)}\n```"

    def action_text(self, action: Action, coords: CoordSystem, domain: str | None = None) -> str:
        f = model_fields(action, coords)
        kind = f["type"]
        if kind in ("click", "tap"):
            extra = {"button": f["button"]} if f.get("button") not in (None, "left") else {}
            return write_call("pyautogui.click", x=f["x"], y=f["y"], **extra)
        names = {"double_click": "pyautogui.doubleClick", "right_click": "pyautogui.rightClick",
                 "long_press": "mobile.long_press"}
        if kind in names:
            return write_call(names[kind], x=f["x"], y=f["y"])
        if kind in ("drag", "swipe"):
            return write_call("pyautogui.drag" if kind == "drag" else "mobile.swipe",
                              from_coord=[f["x"], f["y"]], to_coord=[f["x2"], f["y2"]])
        if kind == "scroll":
            amount = f.get("amount", 3)
            clicks = amount if f["direction"] in ("up", "right") else -amount
            point = {"x": f["x"], "y": f["y"]} if "x" in f else {}
            name = "pyautogui.hscroll" if f["direction"] in ("left", "right") else "pyautogui.scroll"
            return write_call(name, clicks, **point)
        if kind == "type":
            return write_call("pyautogui.write", message=f["text"])
        if kind == "key":
            return write_call("pyautogui.press", *f["keys"])
        if kind == "hotkey":
            return write_call("pyautogui.hotkey", *f["keys"])
        if kind in ("back", "home", "enter"):
            return write_call(("browser." if kind == "back" and not is_touch(domain) else "mobile.") + kind)
        if kind == "open_app":
            return write_call("mobile.open_app", app_name=f["app"])
        if kind == "goto":
            return write_call("browser.goto", url=f["text"])
        if kind == "wait":
            return write_call("wait", **({"seconds": f["amount"]} if "amount" in f else {}))
        if kind == "bash":
            return write_call("bash", command=f["text"])
        if kind == "call_tool":
            payload = json.loads(f["text"])
            return write_call("call_tool", name=payload.get("name"), arguments=payload.get("arguments") or {})
        if kind == "answer":
            return write_call("answer", answer=f["answer"])
        return write_call("terminate", status=f["status"])
