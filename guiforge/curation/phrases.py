"""The sentences of an offline thought (curation/thoughts.py): what is seen, what the task
still needs, and the act with its reason. Each comes in several wordings (seeded per step)
and names only what the step recorded; quoted text is screen text that passed
:func:`guiforge.envs.screen_facts.readable`, or the text typed.

The screen and goal sentences never use a first-person action verb ("I'll click"): the
reason-then-act check reads the first one as the thought's action.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from guiforge.envs.screen_facts import readable
from guiforge.teacher.desktop_thoughts import PURPOSES as DESKTOP_PURPOSES
from guiforge.teacher.desktop_thoughts import SHORTCUTS
from guiforge.teacher.thoughts import APP_NAMES, app_place, purpose

_LIST_ROLES = {"listitem", "row", "option", "link", "li", "article", "gridcell"}
_NOTICE_ROLES = {"alert", "status"}
_NUMBER = re.compile(r"\d[\d,.\s]*\d|\d")
_CELL = re.compile(r"^\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?$")


def element_name(target: dict[str, Any] | None) -> tuple[str | None, str]:
    """(label, kind) of the element under the point: 'Send', 'button'. The label is None
    when it is missing or not readable (noise is never quoted)."""
    if not target:
        return None, "spot"
    label = readable(target.get("label"))
    if label and len(label) > 60:
        label = label[:57].rstrip() + "..."
    kind = target.get("role") or target.get("type") or target.get("tag") or "element"
    kind = _KINDS.get(kind, kind)
    return label, kind if kind in _KINDS.values() else "control"


_KINDS = {"a": "link", "input": "field", "textbox": "field", "textarea": "text box", "div": "area",
          "span": "item", "li": "list item", "listitem": "list item", "td": "cell", "img": "image",
          "svg": "icon", "searchbox": "search box", "combobox": "dropdown", "menuitem": "menu item",
          "select": "dropdown", "option": "option", "tab": "tab", "checkbox": "checkbox", "switch": "switch",
          "radio": "radio button", "button": "button", "link": "link", "row": "row", "text": "field",
          "search": "search box", "email": "field", "tel": "field", "number": "field", "submit": "button",
          "article": "item", "gridcell": "cell", "heading": "heading", "spot": "spot"}


def direction(a: dict[str, Any]) -> str:
    """Which way a scroll or swipe goes (a swipe's finger direction)."""
    if a.get("direction"):
        return a["direction"]
    dx, dy = (a.get("x2") or 0) - (a.get("x") or 0), (a.get("y2") or 0) - (a.get("y") or 0)
    if abs(dx) > abs(dy):
        return "left" if dx < 0 else "right"
    return "up" if dy < 0 else "down"


def tool_call(action: dict[str, Any]) -> dict[str, Any]:
    try:
        call = json.loads(action.get("text") or "{}")
    except json.JSONDecodeError:
        call = {}
    return call if isinstance(call, dict) else {}


def words(text: str) -> int:
    return len(text.split())


def q(text: str) -> str:
    return f"\u201c{text}\u201d"


def soft(text: str, n: int = 40) -> str:
    """Text named inside a sentence without double quotes (only screen text and typed text
    are double-quoted, so the reason-then-act check can hold them to the action)."""
    s = " ".join(str(text).split()).replace('"', "'").replace("\u201c", "'").replace("\u201d", "'")
    return f"\u2018{s[:n]}{'…' if len(s) > n else ''}\u2019"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


# -- what is on screen -----------------------------------------------------------------
def place(facts: dict[str, Any], domain: str | None) -> str | None:
    if facts.get("document"):
        doc = facts["document"]
        return f"{doc} open in LibreOffice" + (f" with the {q(facts['dialog'])} dialog in front"
                                               if facts.get("dialog") else "")
    if "tools" in facts:
        n = facts["tools"]
        return "the tool console" + (f" after {n} call{'s' if n != 1 else ''}" if n else " with no calls made yet")
    if facts.get("output") is not None and not facts.get("elements"):
        return "the terminal"
    path = [p for p in facts.get("path") or [] if readable(p)]
    if not path:
        return ("the phone's home screen" if domain == "mobile" else "the start page") if facts.get("elements") else None
    return app_place(path)


def _extras(facts: dict[str, Any], may_quote: bool, rng: random.Random) -> list[str]:
    out = []
    els = facts.get("elements") or []
    notice = next((e for e in els if e.get("role") in _NOTICE_ROLES), None)
    if notice is not None and may_quote:
        out.append(rng.choice([f"a notice reads {q(notice['label'])}", f"there is a notice saying {q(notice['label'])}"]))
    rows = [e for e in els if e.get("role") in _LIST_ROLES]
    if len(rows) >= 3:
        n = "dozens of" if len(rows) >= 30 else str(len(rows))
        out.append(rng.choice([f"{n} entries are listed", f"there are {n} items in view", f"{n} rows show"]))
    if facts.get("focus"):
        focused = next((e for e in els if e.get("focused")), None)
        holds = (focused or {}).get("value")
        if holds and may_quote:
            out.append(f"the cursor is in {q(facts['focus'])}, which holds {q(holds)}")
        elif may_quote:
            out.append(rng.choice([f"the cursor is in {q(facts['focus'])}", f"{q(facts['focus'])} has the focus"]))
        else:
            out.append("a field has the cursor")
    if facts.get("texts") and may_quote and not facts.get("pointed"):
        out.append(f"I can read {q(rng.choice(facts['texts']))} on it")
    if facts.get("output"):
        lines = [readable(x) for x in facts["output"].splitlines()]
        last = next((x for x in reversed(lines) if x), None)
        if last:
            out.append(f"the last output line is `{last[:70]}`")
    elif "tools" in facts and facts.get("feedback"):
        result = readable(facts["feedback"])
        if result:
            out.append(f"the last result was {soft(result, 60)}")
    rng.shuffle(out)
    return out[:2]


def seen_sentence(ctx, rng: random.Random) -> str:
    facts = ctx.screen or {}
    where = place(facts, ctx.domain)
    label_ok = ctx.target is None or bool(readable((ctx.target or {}).get("label")))
    may_quote = label_ok or ctx.action.get("type") in ("type", "answer", "terminate")
    extras = _extras(facts, may_quote, rng)
    extra = " and ".join(extras)
    if where is None:
        if ctx.step_index == 0:
            return rng.choice(["Nothing has been done yet.", "This is the very start of the task."])
        return _cap(extra) + "." if extra else ""
    first = ctx.step_index == 0
    forms = [f"{_cap(where)} is on screen" + (f", and {extra}" if extra else ""),
             f"I'm looking at {where}" + (f"; {extra}" if extra else ""),
             f"The screen shows {where}" + (f", and {extra}" if extra else ""),
             f"Right now {where} is open" + (f": {extra}" if extra else ""),
             f"{_cap(where)} is in front of me" + (f" and {extra}" if extra else "")]
    if first:
        forms.append(f"At the start I see {where}" + (f", and {extra}" if extra else ""))
    return rng.choice(forms) + "."


# -- what the task still needs ---------------------------------------------------------
def _ref_label(step: dict[str, Any]) -> str | None:
    """What a reference step's target is called: its label, else its id in words ("the
    drafts folder"; an id with a record number in it names only its kind: "the right message")."""
    label = readable(step.get("label"))
    if label:
        return label.rstrip(", ")
    ident = str(step.get("id") or "")
    tokens = [{"msg": "message", "btn": "button"}.get(t, t) for t in ident.split("-") if t and t != "open"]
    if not tokens:
        return None
    if any(c.isdigit() or c == "_" for c in ident):
        return f"the right {tokens[0]}" if tokens[0].isalpha() else None
    if tokens[0] in ("folder", "tab", "view") and len(tokens) > 1:
        return f"the {' '.join(tokens[1:])} {tokens[0]}"
    return " ".join(tokens)


def step_phrase(step: dict[str, Any] | None) -> str | None:
    """A reference step as a short verb phrase: 'open the mail app', 'save the file'."""
    if not step:
        return None
    verb = step.get("do")
    label = _ref_label(step)
    if verb == "open" and step.get("app"):
        return f"open the {APP_NAMES.get(step['app'], step['app'])} app"
    if verb == "open" and step.get("file"):
        return f"open {step['file']}"
    if verb in ("click", "double_click", "right_click"):
        if label and label.startswith("the "):  # an id in words: "the drafts folder"
            return f"open {label}"
        why = purpose(label or "")
        if why:
            return why
        return f"open {soft(label)}" if label else "pick the right item"
    if verb == "type":
        text = str(step.get("text", ""))
        if "${" in text:
            return "type in the value read earlier"
        return f"enter {soft(text)}" if text and words(text) <= 8 else "write the text"
    if verb == "select":
        return f"choose {soft(step.get('option', ''))}"
    if verb == "read":
        return f"read the {str(step.get('as', 'value')).replace('_', ' ')} off the screen"
    if verb == "answer":
        return "give the answer"
    if verb == "terminate":
        return "report that it cannot be done" if step.get("status") == "infeasible" else "finish up"
    if verb in ("key", "hotkey"):
        keys = "+".join(str(k) for k in step.get("keys") or [])
        return {"enter": "confirm with Enter", "back": "go back"}.get(keys.lower(), f"press {keys}")
    if verb == "scroll":
        return f"scroll {step.get('direction', 'down')}"
    if verb == "bash":
        return "run the next command"
    if verb == "call_tool":
        return f"ask the {step.get('name', 'right')} tool"
    if verb == "cell":
        value = step.get("value")
        return f"put {soft(value)} into cell {step.get('ref')}" if value not in (None, "") else f"go to {step.get('ref')}"
    if verb == "sheet":
        return f"switch to the {step.get('name') or 'right'} sheet"
    if verb == "slide":
        return f"go to the slide {soft(step['title'])}" if step.get("title") else "go to the right slide"
    if verb == "find":
        return f"find {soft(step.get('text', ''))}"
    if verb == "replace_all":
        return f"replace {soft(step.get('find', ''))} with {soft(step.get('replace', ''))}"
    return DESKTOP_PURPOSES.get(str(verb))


def _series(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", then ".join(items[:-1]) + (", and finally " if len(items) > 2 else ", then ") + items[-1]


def _task(instruction: str) -> str | None:
    """The instruction's first sentence with some content (not a bare "Hi!")."""
    sentences = re.split(r"(?<=[.!?])\s", " ".join(instruction.split()))
    first = next((s for s in sentences if words(s) >= 4), sentences[0] if sentences else "")
    return soft(first, 110) if first else None


def task_sentence(ctx, rng: random.Random, always: bool = False) -> str:
    """The request in its own words (first steps, and now and then later)."""
    task = _task(ctx.instruction)
    if not task or not (always or ctx.step_index == 0 or rng.random() < 0.3):
        return ""
    return rng.choice([f"The request was {task}.", f"The task: {task}.", f"I was asked: {task}."])


def goal_sentence(ctx, rng: random.Random) -> str:
    """What the task still needs after this step (the reference steps ahead)."""
    ahead = [p for p in (step_phrase(s) for s in ctx.ahead[:3]) if p]
    if ahead:
        series = _series(ahead)
        return rng.choice([f"After this, the task still needs me to {series}.",
                           f"What remains after this: {series}.", f"Still ahead: {series}.",
                           f"Once this is done, the next bits are to {series}.",
                           f"This gets me closer; after it I still have to {series}."])
    if ctx.action.get("type") in ("answer", "terminate"):
        return ""
    return rng.choice(["This should be the last thing the task needs before the end.",
                       "After this, nothing is left but to check the result and finish.",
                       "It is the last piece of the task."])


# -- the act, and why ------------------------------------------------------------------
def _region(box, width, height) -> str:
    if not box or not width or not height:
        return ""
    cx, cy = (box[0] + box[2] / 2) / width, (box[1] + box[3] / 2) / height
    row = "top" if cy < 0.33 else "bottom" if cy > 0.66 else "middle"
    col = "left" if cx < 0.33 else "right" if cx > 0.66 else ""
    where = f"{row} {col}".strip()
    return "in the middle of the screen" if where == "middle" else f"near the {where}"


def _on_step(cur: dict[str, Any], target: dict[str, Any] | None) -> bool:
    """Whether the element under the point is the one the reference step names."""
    if not target or not cur:
        return False
    if cur.get("id") and (target.get("id") == cur["id"] or str(target.get("id") or "").startswith(f"{cur['id']}-")):
        return True
    return bool(cur.get("label")) and str(cur["label"]).casefold() in str(target.get("label") or "").casefold()


def _pointer_reason(ctx, label: str | None, kind: str, rng: random.Random) -> str:
    cur = ctx.current or {}
    why = purpose(label or "")
    if ctx.target is not None and not _on_step(cur, ctx.target) and why == "get it out of the way":
        return rng.choice(["to get it out of the way first", "since it is covering what I need"])
    if cur.get("do") == "type" and ctx.action.get("type") != "type":
        return rng.choice(["so the cursor is there for what I type next", "so that my typing lands in it"])
    if cur.get("do") == "select":
        option = str(cur.get("option") or "").casefold()
        if label and option and option in label.casefold():
            return "since that is the option the task calls for"
        return "to see the options it offers"
    if why:
        return f"to {why}"
    if kind in ("tab",):
        return "to switch to that view"
    if kind in ("checkbox", "switch", "radio button"):
        return "to change its setting as the task wants"
    if kind in ("field", "search box", "text box"):
        return "to put the cursor there"
    if kind in ("dropdown",):
        return "to see its options"
    want = _ref_label(cur) if cur.get("do") in ("click", "double_click", "right_click") else None
    if label and want and want.casefold() in label.casefold():
        return rng.choice(["because it is the one the task is about", "since it matches what the task names"])
    nxt = step_phrase(ctx.ahead[0]) if ctx.ahead else None
    if kind in ("link", "list item", "row", "item", "option"):
        return rng.choice(["to open it and see what it holds", "to open it"]) + (f", so I can {nxt} next" if nxt else "")
    if nxt:
        return rng.choice([f"since the next part is to {nxt}", f"which sets up the next part: {nxt}"])
    return "to carry on with the task"


def _pointer(ctx, rng: random.Random) -> str:
    t = ctx.action["type"]
    verb = {"tap": "tap", "double_click": "double-click", "right_click": "right-click",
            "long_press": "long-press"}.get(t, "click")
    label, kind = element_name(ctx.target)
    facts = ctx.screen or {}
    if ctx.target is None and facts.get("pointed"):  # the desktop: the text OCR read under the point
        label, kind = facts["pointed"], "item"
    where = _region((ctx.target or {}).get("box"), ctx.width, ctx.height)
    if label:
        thing = rng.choice([f"the {q(label)} {kind}", q(label), f"the {kind} {q(label)}"])
    elif facts.get("document"):
        thing = "the document window" if (ctx.action.get("y") or 999) < 30 else "that spot in the window"
    else:
        thing = f"the {kind} {where}".strip() if where else f"the {kind}"
    reason = _pointer_reason(ctx, label, kind, rng)
    spot = f" {where}" if where and label and rng.random() < 0.5 else ""
    return rng.choice([f"I'll {verb} {thing}{spot} {reason}.",
                       f"The next move is clear: I'll {verb} {thing}{spot} {reason}.",
                       f"So I'll {verb} {thing}{spot}, {reason}.",
                       f"I'm going to {verb} {thing}{spot} {reason}."])


def _typed(ctx, rng: random.Random) -> str:
    text = ctx.action.get("text") or ""
    shown, enter = text.rstrip("\n"), text.endswith("\n")
    facts = ctx.screen or {}
    field = facts.get("focus") or readable((ctx.target or {}).get("label")) or facts.get("dialog")
    into = f" into {q(field)}" if field and field != shown else ""
    cur = ctx.current or {}
    if _CELL.match(shown.strip()):
        why = rng.choice(["to jump to that cell", "so the cell cursor moves there"])
    elif shown.startswith("/") or cur.get("do") == "open":
        why = "to name the file to open"
    elif "${" in str(cur.get("text", "")):
        why = rng.choice(["the value I read off the screen earlier", "using the figure I noted before"])
    elif shown and shown.casefold() in ctx.instruction.casefold():
        why = rng.choice(["exactly as the task gives it", "word for word from the request"])
    else:
        why = rng.choice(["since that is what this step needs", "to fill it in for the task"])
    press = " and press Enter" if enter else ""
    return rng.choice([f"I'll type {q(shown)}{into}{press}, {why}.",
                       f"I'll enter {q(shown)}{into}{press} \u2014 {why}.",
                       f"Now I type {q(shown)}{into}{press}, {why}."])


def _keys(ctx, rng: random.Random) -> str:
    a = ctx.action
    keys = ["enter"] if a["type"] == "enter" else [str(k).lower() for k in a.get("keys") or []]
    combo = "+".join(keys)
    shown = "+".join(k.capitalize() if len(k) > 1 else k.upper() for k in keys)
    does = SHORTCUTS.get(combo) or {"enter": "confirms what is there and moves on", "escape": "closes what is open",
                                    "backspace": "clears the selected text", "pagedown": "moves to the next page",
                                    "ctrl+end": "jumps to the very end"}.get(combo)
    verb = DESKTOP_PURPOSES.get(str((ctx.current or {}).get("do")))
    why = f", and that helps {verb}" if verb and rng.random() < 0.6 else ""
    if does:
        return rng.choice([f"I'll press {shown}: it {does}{why}.", f"I'll press {shown}, which {does}{why}."])
    return f"I'll press {shown} for this step{why}."


def _answer(ctx, rng: random.Random) -> str:
    answer = str(ctx.action.get("answer") or ctx.action.get("text") or "")
    facts = ctx.screen or {}
    numbers = [n.strip() for n in _NUMBER.findall(answer) if len(n.strip()) > 1 or answer.strip().isdigit()]
    shown = [e["label"] for e in facts.get("elements") or []] + list(facts.get("texts") or [])
    seen = next((s for s in shown if numbers and any(n in s for n in numbers)), None)
    if seen:
        check = rng.choice([f"{q(seen)} is on screen, and it holds the figure asked for.",
                            f"Checking the screen once more: {q(seen)} gives the value."])
    elif facts.get("output") or facts.get("feedback"):
        check = "The output in front of me holds the value I need."
    else:
        check = "I have read the value I need."
    return f"{check} I'll answer {q(answer)}."


def _finish(ctx, rng: random.Random) -> str:
    facts = ctx.screen or {}
    if ctx.action.get("status") == "infeasible":
        return rng.choice(["What the task asks for does not exist here, so it cannot be done; I'll stop and report it.",
                           "I looked where it would be and it is not there; I'll report the task as infeasible."])
    if ctx.action.get("status") == "failure":
        return "I cannot get this to work from here, so I'll stop and say it failed."
    els = facts.get("elements") or []
    notice = next((e for e in els if e.get("role") in _NOTICE_ROLES), None)
    if notice is not None:
        check = f"The notice {q(notice['label'])} confirms the last step went through"
    elif facts.get("document") and not facts.get("dialog"):
        check = f"{facts['document']} is back in front with no dialog left open, so the save went through"
    elif facts.get("output"):
        check = "The output shows the command did what was needed"
    elif place(facts, ctx.domain):
        check = f"I checked {place(facts, ctx.domain)} and the change is there"
    else:
        check = "The last step went through"
    return rng.choice([f"{check}; I'll finish here.", f"{check}, so the task is done and I'll stop."])


def act_sentence(ctx, rng: random.Random) -> str:
    a = ctx.action
    t = a.get("type")
    if t in ("click", "tap", "double_click", "right_click", "long_press"):
        return _pointer(ctx, rng)
    if t == "type":
        return _typed(ctx, rng)
    if t in ("scroll", "swipe"):
        d = direction(a)
        sought = _ref_label(ctx.current or {}) or (ctx.current or {}).get("option")
        want = soft(sought) if sought else "what I need"
        verb = "swipe" if t == "swipe" else "scroll"
        return rng.choice([f"{_cap(want)} is not in view yet, so I'll {verb} {d} to look for it.",
                           f"I'll {verb} {d} to bring more into view; {want} should be further along."])
    if t in ("key", "hotkey", "enter"):
        return _keys(ctx, rng)
    if t in ("goto", "open_app"):
        app = a.get("app") or a.get("text") or "the"
        return rng.choice([f"I'll open the {APP_NAMES.get(app, app)} app, since that is where this task starts.",
                           f"I'll go to the {APP_NAMES.get(app, app)} app first; what the task is about lives there."])
    if t == "back":
        return rng.choice(["I'll go back to the previous screen, since this one is not where I need to be.",
                           "I'll go back one screen to return to the list."])
    if t == "home":
        return "I'll go to the home screen to start from the list of apps."
    if t == "wait":
        return rng.choice(["I'll wait a moment: the screen is still changing.",
                           "I'll wait for the window to finish updating before the next step."])
    if t == "drag":
        return "I'll drag it to where the task wants it."
    if t == "bash":
        cmd = (a.get("text") or "").strip()
        nxt = step_phrase(ctx.ahead[0]) if ctx.ahead else None
        why = f", and then {nxt}" if nxt else ""
        return f"I'll run `{cmd[:160]}` in the terminal to see what it gives{why}."
    if t == "call_tool":
        call = tool_call(a)
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("arguments") or {}).items())
        return rng.choice([f"I'll call {call.get('name', 'the tool')} with {args or 'no arguments'} rather than "
                           "work it out by hand.",
                           f"I'll use {call.get('name', 'the tool')} ({args or 'no arguments'}): it gives the exact "
                           "figure the task needs."])
    if t == "answer":
        return _answer(ctx, rng)
    if t == "terminate":
        return _finish(ctx, rng)
    return f"I'll {t.replace('_', ' ')} now."
