"""Turn a skill's reference solution (UI-level steps) into canonical actions, grounded on
the live observation one action at a time.

``ReferenceProgram`` is a generator driven with ``send(observation)``: each step may need
several actions (scroll until a target is visible, open a dropdown then pick the option),
and each action is grounded on the observation the previous one produced. The package gate
runs it as is; the scripted teacher runs it with noise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

from guiforge.envs.actions import Action, to_grid
from guiforge.envs.base import Observation
from guiforge.envs.kinds import facts_of
from guiforge.teacher.desktop_steps import DesktopSteps
from guiforge.teacher.distractors import PREFIX as DISTRACTOR_PREFIX
from guiforge.teacher.distractors import next_dismissal
from guiforge.teacher.grounding import GroundingError

__all__ = ["GroundingError", "Planned", "ReferenceProgram"]

REVEAL_TRIES = 6
# Verbs that act on the screen, so a distractor in the way is handled first.
SCREEN_VERBS = frozenset({"click", "double_click", "right_click", "type", "select", "read", "key", "hotkey", "scroll"})


@dataclass
class Planned:
    action: Action
    thought: str
    step_index: int
    step: dict[str, Any] | None = None  # the reference step this action carries out
    detour: bool = False  # an extra action the step needs first (a scroll to reveal, a clear)
    total: int = 0  # steps in the reference


def elements(obs: Observation) -> list[dict[str, Any]]:
    return obs.debug.get("elements", [])


def find(obs: Observation, id: str | None = None, label: str | None = None) -> dict[str, Any] | None:  # noqa: A002
    els = elements(obs)
    if id is None:  # a label never names a distractor's control (a cookie banner's "Accept all")
        els = [e for e in els if not (e.get("id") or "").startswith(DISTRACTOR_PREFIX)]
    if id is not None:
        return next((e for e in els if e.get("id") == id), None)
    if label is not None:
        want = label.casefold()
        exact = next((e for e in els if (e.get("label") or "").casefold() == want), None)
        return exact or next((e for e in els if want in (e.get("label") or "").casefold()), None)
    return None


def _describe(step: dict[str, Any]) -> str:
    target = step.get("label") or step.get("id") or ""
    return target.replace("-", " ") if target else ""


class ReferenceProgram(DesktopSteps):
    """Iterate with ``plan = program.send(obs)``; ``None`` means the program is done."""

    def __init__(self, steps: list[dict[str, Any]], domain: str, variant: str | None = None):
        self.steps = steps
        self.domain = domain
        self.variant = variant
        self.kind = facts_of(domain)  # its facts decide, never its name
        self.touch = self.kind.touch  # taps and swipes, not clicks and drags
        self.distractors = self.kind.distractors(variant)  # pop-ups to clear before screen verbs
        try:
            self.actions = self.kind.actions(variant)
        except ValueError:  # a label no kind serves: the common verbs only
            self.actions = frozenset()
        self.values: dict[str, str] = {}  # what `read` steps took off the screen, for ${name}
        self._gen = self._run()
        self._started = False

    def send(self, obs: Observation) -> Planned | None:
        try:
            if not self._started:
                self._started = True
                next(self._gen)
            return self._gen.send(obs)
        except StopIteration:
            return None

    # -- the program -------------------------------------------------------------------
    def _run(self) -> Generator[Planned | None, Observation, None]:
        self._obs = yield None
        for index, step in enumerate(self.steps):
            for action, thought, *detour in self._translate(step, index):
                self._obs = yield Planned(action, thought, index, step, bool(detour and detour[0]), len(self.steps))

    def _translate(self, step: dict[str, Any], index: int) -> Iterator[tuple[Action, str]]:
        step = {k: self._fill(v) if isinstance(v, str) else v for k, v in step.items()}
        verb = step["do"]
        # desktop verbs (keyboard recipes, no element geometry) come first on the desktop
        # the kind's own verbs (the desktop's keyboard recipes, no element geometry) come first
        dialect = self.kind.reference_dialect
        handler = (getattr(self, f"_{dialect}_{verb}", None) if dialect else None) or getattr(self, f"_do_{verb}", None)
        if handler is None:
            raise GroundingError(f"step {index}: {verb!r} is not supported in the {self.domain} domain")
        if self.distractors and verb in SCREEN_VERBS:
            yield from self._clear_way(step)
        yield from handler(step)

    def _clear_way(self, step, dismissed: list | None = None) -> Iterator[tuple[Action, str]]:
        """Close a pop-up before anything else; a banner or a toast only when the step's
        target is not on screen (it may be under it). See guiforge.teacher.distractors."""
        focus = self.obs.debug.get("focus") or {}
        pressed = 0
        refocus = focus.get("id") if focus.get("editable") else None
        for _ in range(3):
            # once a press took the focus from a field, that field is the target: a toast that
            # came up over it must go too, or the tap back into it finds nothing to tap
            wanted_id, wanted_label = step.get("id"), step.get("label")
            if pressed and not (wanted_id or wanted_label):
                wanted_id = refocus
            visible = not (wanted_id or wanted_label) or find(self.obs, wanted_id, wanted_label) is not None
            plan = next_dismissal(self.obs, visible)
            if plan is None:
                break
            el, thought = plan
            gx, gy = el["grid"]
            pressed += 1
            if dismissed is not None:
                dismissed.append(el.get("id"))
            yield Action(type="tap" if self.touch else "click", x=gx, y=gy), thought
        # Pressing the distractor took the focus from the field being typed in: go back to it.
        field = find(self.obs, focus["id"]) if pressed and focus.get("editable") and focus.get("id") else None
        if field is not None:
            # low in a tall field, so the caret lands after its text, where the typing was going
            x, y, w, h = field["box"]
            gx, gy = to_grid(x + w / 2, y + (h * 0.9 if h > 60 else h / 2), self.obs.width, self.obs.height)
            label = " ".join((focus.get("label") or "the field").split())[:60]
            yield Action(type="tap" if self.touch else "click", x=gx, y=gy), \
                f"The pop-up is gone; back to \u201c{label}\u201d, where I was typing."

    def _fill(self, text: str) -> str:
        """``${name}`` -> the value an earlier ``read`` step took off the screen. Names no step
        read stay as they are (a shell command's ``${HOME}`` is not ours to fill)."""
        if not self.values:
            return text
        return re.sub(r"\$\{([A-Za-z_]\w*)\}", lambda m: self.values.get(m.group(1), m.group(0)), text)

    @property
    def obs(self) -> Observation:
        return self._obs

    # Each _do_<verb> yields (action, thought) pairs; self.obs is the latest observation.
    def _do_open(self, step):
        app = step["app"]
        if self.touch:
            yield Action(type="open_app", app=app), f"I'll open the {app} app."
            return
        # inside a browser with the app open in a tab: a click on the tab, as a person switches
        tab = next((e for e in elements(self.obs) if e.get("role") == "tab"
                    and (e.get("label") or "").casefold() == str(app).casefold()), None)
        if tab is not None:
            gx, gy = tab["grid"]
            yield Action(type="click", x=gx, y=gy), f"{tab['label']} is already open in a tab; I'll switch to it."
        else:
            yield Action(type="goto", text=app), f"I'll switch to the {app} app."

    def _do_goto(self, step):
        yield Action(type="goto", text=step["text"]), f"I'll go to {step['text']}."

    def _reveal(self, step) -> Iterator[tuple[Action, str]]:
        for _ in range(REVEAL_TRIES):
            if find(self.obs, step.get("id"), step.get("label")) is not None:
                return
            if self.distractors:
                # a notification that came up mid-step (after the click that focused a field)
                # may sit on the target: dismiss it and look again before scrolling away
                dismissed = False
                for action in self._clear_way(step):
                    dismissed = True
                    yield action
                if dismissed:
                    continue
            if self.touch:
                yield Action(type="swipe", x=500, y=750, x2=500, y2=350), "I need to scroll to find it.", True
            else:
                yield Action(type="scroll", x=500, y=600, direction="down", amount=3), "I need to scroll to find it.", True
        raise GroundingError(f"nothing on screen matches id={step.get('id')!r} label={step.get('label')!r} "
                             f"(path {self.obs.debug.get('path')})")

    def _point(self, step, kind: str, verb: str):
        yield from self._reveal(step)
        el = find(self.obs, step.get("id"), step.get("label"))
        gx, gy = el["grid"]
        # Name the target as a person sees it (its visible label), never by its element id.
        label = " ".join((el.get("label") or _describe(step)).split())[:80]
        yield Action(type=kind, x=gx, y=gy), step.get("thought") or f"I'll {verb} \u201c{label}\u201d."

    def _do_click(self, step):
        yield from self._point(step, "tap" if self.touch else "click", "tap" if self.touch else "click")

    def _do_double_click(self, step):
        yield from self._point(step, "double_click", "double-click")

    def _do_right_click(self, step):
        yield from self._point(step, "long_press" if self.touch else "right_click", "open the menu of")

    def _do_type(self, step):
        if step.get("id") or step.get("label"):
            yield from self._do_click(step)
            yield from self._clear_way({})  # a pop-up the click brought up; the focus comes back
            if step.get("clear") and self.touch:
                # the apps select a field's text on a long press; typing then replaces it
                for action, *_ in self._point(step, "long_press", "long-press"):
                    yield action, "First I select what is there, so typing replaces it.", True
            elif step.get("clear"):
                yield Action(type="hotkey", keys=["ctrl", "a"]), "First I select what is there.", True
                yield Action(type="key", keys=["backspace"]), "First I clear what is there.", True
        text = str(step["text"])
        yield Action(type="type", text=text), f"I'll type {text[:60]!r}."

    def _do_select(self, step):
        """An in-page dropdown: open it, then click the option (scrolling its menu)."""
        yield from self._do_click({"id": step["id"]})
        yield from self._clear_way({})  # a pop-up the click brought up covers the menu
        option = str(step["option"])
        for _ in range(REVEAL_TRIES):
            options = [e for e in elements(self.obs) if (e.get("id") or "").startswith(f"{step['id']}-option-")]
            # the exact label, else one that starts with it ("Savings" -> "Savings (•••• 1234)")
            hit = next((e for e in options if (e.get("label") or "").casefold() == option.casefold()), None) or \
                next((e for e in options if (e.get("label") or "").casefold().startswith(option.casefold())), None)
            if hit is not None:
                gx, gy = hit["grid"]
                yield Action(type="tap" if self.touch else "click", x=gx, y=gy), f"I'll choose {option!r}."
                return
            if not options:
                break
            gx, gy = options[-1]["grid"]
            if self.touch:
                yield Action(type="swipe", x=gx, y=gy, x2=gx, y2=max(gy - 200, 0)), "I'll scroll the list.", True
            else:
                yield Action(type="scroll", x=gx, y=gy, direction="down", amount=2), "I'll scroll the list.", True
        raise GroundingError(f"dropdown {step['id']!r} has no option {option!r}")

    def _do_read(self, step):
        """Take a value off the screen for later steps (``${as}``): the label of the element
        with this id or label, or ``pattern``'s first group in it. It costs no action: an
        agent reads the screenshot it already has."""
        yield from self._reveal(step)
        el = find(self.obs, step.get("id"), step.get("label"))
        text = el.get("label") or el.get("value") or ""
        pattern = step.get("pattern")
        if pattern:
            m = re.search(pattern, text)
            if m is None:
                raise GroundingError(f"read: {pattern!r} does not match {text!r}")
            text = m.group(1) if m.groups() else m.group(0)
        self.values[str(step["as"])] = text.strip()

    def _do_key(self, step):
        keys = [str(k).lower() for k in step["keys"]]
        if self.touch:
            if keys == ["enter"]:
                yield Action(type="enter"), "I'll press enter."
            elif keys == ["back"]:
                yield Action(type="back"), "I'll go back."
            else:
                raise GroundingError(f"keys {keys} cannot be pressed on a phone")
            return
        if keys == ["back"] and "back" in self.actions:  # a browser's own back
            yield Action(type="back"), "I'll go back."
            return
        kind = "hotkey" if len(keys) > 1 else "key"
        yield Action(type=kind, keys=keys), f"I'll press {'+'.join(keys)}."

    _do_hotkey = _do_key

    def _do_scroll(self, step):
        direction = step.get("direction", "down")
        if self.touch:
            y1, y2 = (750, 350) if direction == "down" else (350, 750)
            yield Action(type="swipe", x=500, y=y1, x2=500, y2=y2), f"I'll scroll {direction}."
        else:
            yield Action(type="scroll", x=500, y=500, direction=direction, amount=int(step.get("amount", 3))), \
                f"I'll scroll {direction}."

    def _do_wait(self, step):
        yield Action(type="wait"), "I'll wait for the screen to update."

    def _do_answer(self, step):
        text = str(step["text"])
        yield Action(type="answer", answer=text, text=text), f"The answer is {text[:80]}."

    def _do_terminate(self, step):
        status = step.get("status", "success")
        yield Action(type="terminate", status=status), (
            "This cannot be done here, so I'll report it as infeasible." if status == "infeasible"
            else "The task is done.")

    def _do_bash(self, step):
        command = str(step["command"])
        yield Action(type="bash", text=command), f"I'll run `{command[:80]}` in the terminal."

    def _do_call_tool(self, step):
        payload = {"name": step["name"], "arguments": step.get("arguments", {})}
        yield Action(type="call_tool", text=json.dumps(payload)), f"I'll call the {step['name']} tool."
