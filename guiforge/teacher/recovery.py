"""What the scripted teacher does on seeing its own mistake on the next screen: the actions
that undo it and redo the step, each with the thought that says what the screen shows and
why (guiforge.teacher.mistakes, guiforge.teacher.slips). Items are ``(action, thought)``,
or a function of the observation for an action grounded on the screen the undo brings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guiforge.envs.actions import Action
from guiforge.envs.base import Observation
from guiforge.envs.kinds import is_touch
from guiforge.teacher.mistakes import Mistake, focused_field, label, point_at
from guiforge.teacher.reference import Planned
from guiforge.teacher.slips import cell_jump

Item = tuple[Action, str] | Callable[[Observation], tuple[Action, str]]


def corrections(mistake: Mistake, obs: Observation, domain: str) -> list[Item]:
    """What a person does on seeing ``mistake`` in ``obs``: undo it, then do the step again."""
    planned: Planned = mistake.extra["planned"]
    kind = mistake.kind
    if kind in ("neighbour", "similar_name"):
        why = (f"This opened {label(mistake.wrong)}, not {label(mistake.intended)} — I picked the wrong "
               f"{'row' if kind == 'neighbour' else 'item with a similar name'}. I'll go back.")
        return [(Action(type="back"), why), lambda now: redo_pointer(planned, mistake, now)]
    if kind == "wrong_tab":
        return [lambda now: redo_pointer(planned, mistake, now,
                                         f"This is the {label(mistake.wrong)} view, not {label(mistake.intended)}: "
                                         "I hit the tab beside it. I'll switch to the right one.")]
    if kind in ("wrong_row_value", "stale_value"):
        field_el = focused_field(obs)
        if field_el is None:
            return []
        source = "an earlier value" if kind == "stale_value" else "the wrong value"
        fix = f"The field shows {mistake.typed!r}, but it should be {mistake.correct_text!r}; I typed {source}."
        if is_touch(domain):  # no ctrl+a on a touch screen: select by long press
            gx, gy = point_at(field_el)
            select = (Action(type="long_press", x=gx, y=gy), fix + " I'll select what I typed to replace it.")
        else:
            select = (Action(type="hotkey", keys=["ctrl", "a"]), fix + " I'll select it all to replace it.")
        return [select, (planned.action, f"Now I'll type the right value, {mistake.correct_text!r}.")]
    if kind == "wrong_scroll":
        d = "down" if planned.action.type == "swipe" or planned.action.direction == "down" else "up"
        return [(planned.action, f"That scrolled the wrong way and the list did not move toward what I "
                                 f"need; I'll scroll {d} instead.")]
    if kind == "wrong_tool_argument":
        return [(planned.action, "Checking the call I just made, one argument does not match the task; "
                                 "the result above is for the wrong input, so I'll call it again correctly.")]
    if kind == "wrong_command":
        return [(planned.action, f"That output is not what I expected: I mistyped the command ({mistake.typed!r}). "
                                 "I'll run the right one.")]
    if kind == "wrong_cell":
        right = (mistake.correct_text or "").strip()
        steps = cell_jump(right, f"The Name Box shows {(mistake.typed or '').strip()}, not {right}: the cell cursor "
                                 "is on the wrong cell. I'll go to the right one.")
        return list(steps)
    if kind == "wrong_cell_value":
        ref = str((planned.step or {}).get("ref") or "")
        if not ref:
            return []
        steps = cell_jump(ref, f"The cell shows {(mistake.typed or '').strip()!r}, not "
                               f"{(mistake.correct_text or '').strip()!r}: I slipped on a digit. I'll go back to {ref}.")
        return [*steps, (planned.action, f"Now the right value, {(mistake.correct_text or '').strip()!r}, over it.")]
    if kind == "wrong_menu":
        wrong, right = mistake.extra["wrong_menu"], mistake.extra["right_menu"]
        return [(Action(type="key", keys=["escape"]), f"The {wrong} menu opened, not {right}; what I need is not "
                                                      "in it. I'll close it."),
                (planned.action, f"Now the {right} menu, the one I meant.")]
    return []


def redo_pointer(planned: Planned, mistake: Mistake, obs: Observation, thought: str | None = None
                 ) -> tuple[Action, str]:
    """The step's pointer action again, grounded on ``obs`` (the intended element by id or label)."""
    intended: dict[str, Any] = mistake.intended or {}
    again = next((e for e in obs.debug.get("elements") or []
                  if (intended.get("id") and e.get("id") == intended.get("id"))
                  or (not intended.get("id") and e.get("label") == intended.get("label"))), None)
    action = planned.action
    if again is not None:
        x, y = point_at(again)
        action = action.model_copy(update={"x": x, "y": y})
    return action, thought or f"Back where I was. This time I'll pick {label(intended)}, the one I actually need."
