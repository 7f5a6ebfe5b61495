"""More of the errors people and agents make, beyond the list slips of
:mod:`guiforge.teacher.mistakes`, each with the screen that shows it and (where it can be
taken back) the way back:

- ``wrong_tab``: the tab beside the one wanted (same row, same size); the next screen shows
  the other view, and the right tab is clicked.
- ``stale_value``: a value typed earlier in the task typed again where a new one belongs;
  the field shows it, and it is selected and retyped.
- ``wrong_cell`` (Calc): the neighbouring cell's address in the Name Box; the cell cursor
  sits on the wrong cell, and the address is typed again.
- ``wrong_cell_value`` (Calc): a figure with a slipped digit entered in a cell; the cell
  shows it, and the cell is visited again and overwritten.
- ``wrong_menu`` (LibreOffice by mouse): the menu title beside the one wanted; the open
  menu lacks the item, so Escape, then the right title.
- ``wrong_command`` (terminal): a command with a slipped column number or file name; its
  output is wrong or an error, and the right command is run.
- ``premature_answer``: answering from what the current screen shows (the first slide,
  the row in view) before the step that finds the value; nothing undoes an answer.
- ``skipped_confirmation``: stopping before the last confirming step (Send, Save, the
  format dialog's OK), believing it done; the last frame still shows the form or dialog.

Each picker returns what to do instead, or None where the slip does not fit the screen.
"""

from __future__ import annotations

import random
import re
from typing import Any

from guiforge.envs.actions import Action, to_grid
from guiforge.envs.base import Observation
from guiforge.teacher.mistakes import _centre, _elements, _safe

_REF = re.compile(r"^([A-Z]{1,3})(\d+)\n$")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
# Commands that change files: never run with a slip (a wrong one could do damage nothing undoes).
_WRITES = re.compile(r">|\btee\b|\bmv\b|\brm\b|\bcp\b|\bmkdir\b|\btouch\b|\bchmod\b|\bsed\b[^|]*\s-i|"
                     r"\bpython3?\b|\bln\b|\bunzip\b|\btar\b|\bgzip\b")
_CONFIRM = re.compile(r"\b(send|save|confirm|ok|done|apply|submit|place order|pay|book|transfer|post|"
                      r"keep|create|add|update)\b", re.I)
MENU_BAR_H = 24  # px, as guiforge.teacher.desktop_mouse


def tab_neighbour(obs: Observation, target: dict[str, Any]) -> dict[str, Any] | None:
    """A tab (or a button in a tab row) just left or right of the target, the same size."""
    if not _safe(target) or not target.get("box"):
        return None
    tx, ty = _centre(target)
    _, _, tw, th = target["box"]
    tabs = target.get("role") == "tab"
    row = [e for e in _elements(obs) if e is not target and e.get("box") and _safe(e)
           and (e.get("role") == "tab") == tabs and abs(_centre(e)[1] - ty) < th / 3
           and abs(e["box"][3] - th) < th / 3 and 0 < abs(_centre(e)[0] - tx) < 2.5 * tw
           and e.get("label") != target.get("label")]
    if not tabs and len(row) < 2:  # two buttons side by side are not a tab row
        return None
    return min(row, key=lambda e: abs(_centre(e)[0] - tx), default=None)


def stale_value(typed_before: list[str], text: str, rng: random.Random) -> str | None:
    """A value this task typed earlier, of the same shape (a number for a number)."""
    number = bool(_NUMBER.fullmatch(text.strip()))
    pool = [t for t in typed_before if t != text and "\n" not in t and bool(_NUMBER.fullmatch(t.strip())) == number
            and 0 < len(t) <= max(40, 2 * len(text))]
    return rng.choice(sorted(set(pool))) if pool else None


def neighbour_cell(action: Action, rng: random.Random) -> str | None:
    """The address of a cell beside the one typed into the Name Box ('B9\\n' -> 'B10\\n')."""
    m = _REF.match(action.text or "")
    if action.type != "type" or m is None:
        return None
    col, row = m.group(1), int(m.group(2))
    if rng.random() < 0.6 or len(col) > 1:
        row = row + 1 if row == 1 or rng.random() < 0.5 else row - 1
    else:
        col = chr(ord(col) + 1) if col == "A" or rng.random() < 0.5 else chr(ord(col) - 1)
    return f"{col}{row}\n"


def cell_jump(ref: str, why: str) -> list[tuple[Action, str]]:
    """The Name Box route to a cell (guiforge.teacher.desktop_steps._desktop_cell)."""
    return [(Action(type="hotkey", keys=["ctrl", "shift", "f5"]), why),
            (Action(type="hotkey", keys=["ctrl", "a"]), "The Name Box has the cursor; I'll replace the address in it."),
            (Action(type="type", text=f"{ref}\n"), f"Now the right address, {ref}.")]


def menu_neighbour(obs: Observation, action: Action) -> tuple[Action, str, str] | None:
    """(click, wrong title, right title) for the menu-bar title beside the one a click aims at."""
    screen = obs.debug.get("screen")
    if screen is None or action.type != "click" or action.x is None or not obs.width:
        return None
    px, py = (action.x / 999) * obs.width, (action.y / 999) * obs.height
    if py >= MENU_BAR_H:
        return None
    bar = sorted((line for line in screen.seen if line.box[1] < MENU_BAR_H and line.text.strip()),
                 key=lambda line: line.box[0])
    aimed = next((line for line in bar if line.box[0] - 4 <= px <= line.box[0] + line.box[2] + 4), None)
    if aimed is None:
        return None
    others = [line for line in bar if line is not aimed and line.text.isalpha()
              and abs(line.box[0] - aimed.box[0]) < 160]
    if not others:
        return None
    wrong = min(others, key=lambda line: abs(line.box[0] - aimed.box[0]))
    gx, gy = to_grid(*wrong.centre, obs.width, obs.height)
    return Action(type="click", x=gx, y=gy), wrong.text, aimed.text


def wrong_command(command: str, rng: random.Random) -> str | None:
    """A read-only command with a slip: another column number, or a file name one letter off."""
    if _WRITES.search(command):
        return None
    columns = list(re.finditer(r"\$([2-9])\b|-f\s?([2-9])\b|-k\s?([2-9])\b", command))
    if columns:
        m = rng.choice(columns)
        i = next(g for g in range(1, 4) if m.group(g))
        digit = int(m.group(i))
        other = str(digit + 1 if digit < 9 and (digit == 2 or rng.random() < 0.5) else digit - 1)
        return command[:m.start(i)] + other + command[m.end(i):]
    files = list(re.finditer(r"[\w-]{3,}\.(?:csv|txt|tsv|log|json)\b", command))
    if files:
        m = rng.choice(files)
        name = m.group(0)
        k = rng.randrange(1, len(name.split(".")[0]))
        return command[:m.start()] + name[:k] + name[k + 1:] + command[m.end():]
    return None


def screen_numbers(obs: Observation, ocr_lines: list[str] | None = None) -> list[str]:
    """Figures the screen shows (element labels, or OCR lines of the desktop)."""
    texts = [e.get("label") or "" for e in _elements(obs)] + list(ocr_lines or [])
    found = [m.group(0) for t in texts for m in _NUMBER.finditer(t) if len(m.group(0).strip("-,.")) >= 2]
    return sorted(set(found))


def premature_answer(answer: str, obs: Observation, rng: random.Random,
                     ocr_lines: list[str] | None = None) -> str | None:
    """The answer with its figure taken from what is on screen now (a wrong one), else with
    a slipped digit: what answering before looking at the right place gives. None for an
    answer with no figure: answering it early would be answering it right."""
    numbers = list(_NUMBER.finditer(answer))
    if numbers:
        m = numbers[-1]
        pool = [n for n in screen_numbers(obs, ocr_lines) if n != m.group(0)]
        if pool:
            return answer[:m.start()] + rng.choice(pool) + answer[m.end():]
        digit = str((int(m.group(0)[-1]) + rng.randint(1, 9)) % 10)
        return answer[:m.end() - 1] + digit + answer[m.end():]
    return None


def confirms(step: dict[str, Any] | None, action: Action, obs: Observation) -> bool:
    """Whether ``action`` is the confirming press of a step: a Send/Save/OK button, or the
    Enter that answers LibreOffice's dialog in a save."""
    step = step or {}
    if step.get("do") == "save":
        windows = obs.debug.get("windows") or []
        dialog = len(windows) > 1 and "LibreOffice" not in (windows[-1].get("title") or "")
        return dialog and (action.type == "click" or (action.keys or []) == ["enter"])
    if step.get("do") == "click" and action.x is not None:
        label = str(step.get("label") or step.get("id") or "")
        return bool(_CONFIRM.search(label.replace("-", " ")))
    return False
