"""Referring expressions for one element of a grounding scan, in the four ways grounding
data asks for a target:

- ``text``: its visible text or accessible name, quoted ("Click “Archive”");
- ``role_position``: its role and where it is, with no text ("the 2nd button from the top
  on the right of the screen"), unique on the screen by construction;
- ``functional``: what it does ("the button that archives this email");
- ``instruction``: what a user would say to get it pressed ("archive this email please").

Functional and user phrasings come from the element's accessible name when it starts with a
verb the table below knows, or from its role (a text field is "where you type the subject");
an element with neither gets only the first two kinds. A name shared by two elements on the
screen is a near miss: its text expression names the list row it sits in, or it is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The thing an app's "this" is (the email open in Mail, the product in Shop).
APP_OBJECTS = {"mail": "email", "calendar": "event", "contacts": "contact", "shop": "product", "notes": "note",
               "bank": "transfer", "travel": "booking", "chat": "conversation"}

# Verbs an accessible name starts with, and their third person (None: add s/es).
VERBS: dict[str, str | None] = {
    "add": None, "apply": "applies", "archive": None, "back": None, "book": None, "buy": None, "call": None,
    "cancel": None, "change": None, "checkout": None, "clear": None, "close": None, "compose": None, "confirm": None,
    "continue": None, "copy": None, "create": None, "decline": None, "delete": None, "discard": None,
    "dismiss": None, "download": None, "edit": None, "empty": None, "filter": None, "find": None, "forward": None,
    "go": "goes", "hide": None, "join": None, "mark": None, "message": None, "move": None, "new": None,
    "next": None, "open": None, "pay": None, "pin": None, "place": None, "previous": None, "print": None,
    "remove": None, "rename": None, "reply": "replies", "reset": None, "review": None, "save": None,
    "schedule": None, "search": "searches", "select": None, "send": None, "share": None, "show": None,
    "sign": None, "sort": None, "star": None, "start": None, "submit": None, "transfer": None, "undo": None,
    "unstar": None, "update": None, "upload": None, "view": None, "accept": None, "allow": None, "reject": None,
    "got": None, "today": None,
}
# Names that are verbs only in form: they become their own phrase.
SPECIAL = {
    "back": ("goes back to the previous view", "go back"),
    "next": ("moves to the next page", "go to the next one"),
    "previous": ("moves to the previous page", "go to the previous one"),
    "today": ("jumps to today", "jump to today"),
    "new": ("creates a new {obj}", "make a new {obj}"),
    "compose": ("starts a new email", "write a new email"),
    "got": ("dismisses this notice", "dismiss this notice"),
}
_PREPOSITIONS = ("as", "to", "from", "in", "into", "on", "for", "with", "by", "at")
# Verbs that act on the thing in view when the name says nothing more ("Archive": archives
# this email); the others need the rest of the name ("Sort by date").
OBJECT_VERBS = frozenset({
    "accept", "archive", "book", "buy", "call", "cancel", "close", "confirm", "copy", "decline", "delete", "discard",
    "download", "edit", "forward", "hide", "join", "mark", "message", "move", "open", "pay", "pin", "print",
    "reject", "remove", "rename", "reply", "review", "save", "schedule", "select", "send", "share", "show", "star",
    "submit", "unstar", "update", "view"})

ROLE_WORDS = {"a": "link", "button": "button", "textarea": "text box", "select": "dropdown", "summary": "toggle"}
_ARIA_ROLES = {"button": "button", "link": "link", "tab": "tab", "option": "option", "checkbox": "checkbox",
               "menuitem": "menu item", "switch": "switch",
               # the desktop scan's roles (guiforge.envs.desktop.grounding_scan)
               "menu": "menu", "gridcell": "cell", "status": "status bar field", "paragraph": "text"}
_TEXT_INPUTS = {None, "", "text", "search", "email", "tel", "url", "password", "number", "date", "time"}

USER_FORMS = ("{v}", "I want to {v}", "please {v}", "can you {v}?", "help me {v}")
TEXT_FORMS = ("Click “{t}”", "{t}", "Select “{t}”", "Press the “{t}” {r}")
TOUCH_TEXT_FORMS = ("Tap “{t}”", "{t}", "Select “{t}”", "Tap the “{t}” {r}")


def role_word(el: dict[str, Any]) -> str:
    """How a person names the element's kind: button, link, text field, checkbox, ..."""
    if el.get("role") in _ARIA_ROLES:
        return _ARIA_ROLES[el["role"]]
    tag = el.get("tag")
    if tag == "input":
        kind = (el.get("type") or "").lower()
        if kind in ("checkbox", "radio"):
            return "checkbox" if kind == "checkbox" else "radio button"
        if kind in ("button", "submit", "reset"):
            return "button"
        return "search box" if kind == "search" else "text field"
    if el.get("role") == "textbox" or tag == "div":
        return "text box"
    return ROLE_WORDS.get(tag or "", "control")


def _third_person(verb: str) -> str:
    known = VERBS.get(verb)
    if known:
        return known
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    return verb + "s"


def region(cx: float, cy: float, width: int, height: int) -> tuple[str, str]:
    """(column, band) of a point: left/middle/right, top/centre/bottom thirds."""
    col = ("left", "middle", "right")[min(int(3 * cx / max(width, 1)), 2)]
    band = ("top", "centre", "bottom")[min(int(3 * cy / max(height, 1)), 2)]
    return col, band


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


@dataclass(frozen=True)
class Expression:
    kind: str  # text | role_position | functional | instruction | refusal
    text: str
    near_miss: bool = False


def actions_of(name: str, role: str, obj: str) -> tuple[str, str] | None:
    """(functional clause, user imperative) for an element named ``name``: "archives this
    email" / "archive this email"; None when the name says no action."""
    words = name.split()
    if not words:
        return None
    verb = words[0].casefold().strip(",.:")
    rest = " ".join(words[1:])
    this = f"this {obj}"
    if verb in SPECIAL and (not rest or verb in ("new", "got")):
        clause, user = SPECIAL[verb]
        return clause.format(obj=obj), user.format(obj=obj)
    if verb not in VERBS:
        return None
    lead = rest.split()[0].casefold() if rest else None
    if lead in _PREPOSITIONS and len(rest.split()) == 1:
        return None  # "Sort by": the rest of the sentence is the control's value
    if verb not in OBJECT_VERBS:
        return (f"{_third_person(verb)} {rest}", f"{verb} {rest}") if rest and lead not in _PREPOSITIONS else None
    if not rest:
        return f"{_third_person(verb)} {this}", f"{verb} {this}"
    if lead in _PREPOSITIONS:
        return f"{_third_person(verb)} {this} {rest}", f"{verb} {this} {rest}"
    return f"{_third_person(verb)} {rest}", f"{verb} {rest}"


def functional(el: dict[str, Any], app: str | None) -> tuple[str, str] | None:
    """(the functional description, the user's imperative) of ``el``, or None. An element
    that says what it does (``does``: the desktop's menus) is taken at its word."""
    if "does" in el:
        return el["does"]
    role = role_word(el)
    name = el.get("name") or ""
    obj = APP_OBJECTS.get(app or "", "item")
    if role in ("text field", "text box", "search box"):
        what = (name or el.get("placeholder") or "").strip()
        if not what:
            return None
        if role == "search box" or what.casefold().startswith("search"):
            return f"the {role} where you search {app or 'this app'}", f"search {app or 'here'}"
        return f"the {role} where you type the {what.casefold()}", f"enter the {what.casefold()}"
    if role in ("checkbox", "switch", "radio button") and name:
        return f"the {role} that turns “{name}” on or off", f"toggle “{name}”"
    if role == "tab" and name:
        return f"the tab that shows {name}", f"show {name}"
    acts = actions_of(name, role, obj)
    if acts is not None:
        return f"the {role} that {acts[0]}", acts[1]
    if role == "link" and name and len(name) <= 40:
        return f"the link that opens {name}", f"open {name}"
    return None


def expressions(el: dict[str, Any], screen: list[dict[str, Any]], size: tuple[int, int], app: str | None,
                touch: bool, pick: int) -> list[Expression]:
    """Every expression of ``el`` among the hit-tested elements ``screen`` (it is one of
    them) on a ``size`` frame; ``pick`` chooses among the phrasings (a seeded number)."""
    width, height = size
    role = role_word(el)
    name = (el.get("name") or "").strip()
    text = (el.get("text") or "").strip()
    out: list[Expression] = []
    shown = text if text and len(text) <= 60 else (name if len(name) <= 60 else "")
    # elements a reader could take for this one by its words: the same text or name
    same = [o for o in screen if o is not el and shown and shown.casefold() in _words(o)]
    named = [o for o in screen if o is not el and name and name.casefold() in _words(o)]
    if shown and not same:
        forms = TOUCH_TEXT_FORMS if touch else TEXT_FORMS
        out.append(Expression("text", forms[pick % len(forms)].format(t=shown, r=role)))
    elif shown and name and len(name) <= 80 and not named:
        out.append(Expression("text", f"the {role} labelled “{name}”", near_miss=True))
    elif shown:
        row = (el.get("row") or "").strip()
        if row and all((o.get("row") or "").strip() != row for o in same):
            out.append(Expression("text", f"the “{shown}” {role} in the row “{_clip(row)}”", near_miss=True))
    # an element may say where it is itself (the desktop's: "the menu right of “Edit”"), or
    # that it cannot be placed (None)
    where = el["position"] if "position" in el else role_position(el, screen, size)
    if where:
        out.append(Expression("role_position", where, near_miss=bool(same)))
    acts = functional(el, app)
    if acts is not None and not named:
        out.append(Expression("functional", acts[0]))
        out.append(Expression("instruction", _capital(USER_FORMS[pick % len(USER_FORMS)].format(v=acts[1]))))
    return out


def role_position(el: dict[str, Any], screen: list[dict[str, Any]], size: tuple[int, int]) -> str:
    """"the 2nd button from the top on the right of the screen": the ordinal among the
    elements of the same role in the same third of the screen's width, top to bottom."""
    width, height = size
    role = role_word(el)
    col, _ = region(*centre(el), width, height)
    peers = [o for o in screen if role_word(o) == role and region(*centre(o), width, height)[0] == col]
    peers.sort(key=lambda o: (centre(o)[1], centre(o)[0]))
    where = {"left": "on the left of the screen", "middle": "in the middle of the screen",
             "right": "on the right of the screen"}[col]
    if len(peers) == 1:
        return f"the only {role} {where}"
    n = next(i for i, o in enumerate(peers, 1) if o is el)
    if n == len(peers):
        return f"the last {role} {where}, counting from the top"
    return f"the {_ordinal(n)} {role} from the top {where}"


def _words(el: dict[str, Any]) -> tuple[str, str]:
    """What an element says, folded: its visible text and its accessible name."""
    return ((el.get("text") or "").strip().casefold(), (el.get("name") or "").strip().casefold())


def centre(el: dict[str, Any]) -> tuple[float, float]:
    x, y, w, h = el["box"]
    return x + w / 2, y + h / 2


def refusal_text(name: str, role: str, app: str | None, touch: bool, pick: int,
                 named_only: bool = False) -> Expression:
    """An expression naming an element (``name``, ``role``) that is not on the screen;
    ``named_only``: by its words, never as a request ("save this" can be served by an
    unnamed icon)."""
    acts = None if named_only else functional({"name": name, "tag": "button" if role == "button" else "a"}, app)
    if acts is not None and pick % 2:
        return Expression("refusal", _capital(USER_FORMS[pick % len(USER_FORMS)].format(v=acts[1])))
    forms = TOUCH_TEXT_FORMS if touch else TEXT_FORMS
    return Expression("refusal", forms[pick % len(forms)].format(t=name, r=role))


def similar(a: str, b: str) -> bool:
    """Two names a reader could mistake: one holds the other as a word ("Reply" and
    "Reply all"), or they differ in one trailing word."""
    a, b = a.casefold().strip(), b.casefold().strip()
    if not a or not b or a == b:
        return False
    if re.search(rf"\b{re.escape(a)}\b", b) or re.search(rf"\b{re.escape(b)}\b", a):
        return True
    wa, wb = a.split(), b.split()
    return len(wa) == len(wb) > 1 and wa[:-1] == wb[:-1]


def _clip(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
