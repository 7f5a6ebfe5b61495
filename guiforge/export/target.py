"""What a student model is trained to write: an action format (the harness's codecs in
``guiforge/harness/formats``: guiforge JSON, Qwen-VL, UI-TARS, pyautogui, ...) and a
coordinate convention (grid999, grid1000, unit, pixels, resized).

The lake stores canonical actions on the 0-999 grid and the prompts the teacher saw; an
export in another target re-renders the system prompt in the target's own template,
re-encodes every assistant turn (past replies and the SFT target) in the target's words,
and writes points the way that model does. The RL reward reads completions back with the
same codec, so a policy trained on these rows is scored in the words it learned.

Text formats only: a native tool-call format's target is a tool call, not text, and the
exported message schema has no tool calls yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guiforge.envs.actions import Action
from guiforge.errors import GuiforgeError
from guiforge.harness.episode import system_prompt
from guiforge.harness.formats import (
    ACTION_FORMATS,
    COORD_KINDS,
    ActionFormat,
    CoordSystem,
    ParseError,
    coord_system,
    get_format,
)

Frame = tuple[int, int] | None


def text_formats() -> list[str]:
    return [name for name, cls in ACTION_FORMATS.load_all().items() if isinstance(cls, type) and not cls.native_tools]


@dataclass(frozen=True)
class Target:
    action_format: str = "guiforge"
    coords: str = "grid999"

    @property
    def codec(self) -> ActionFormat:
        return get_format(self.action_format)

    @property
    def is_recorded(self) -> bool:
        """The harness's own reply format on the lake's grid: prompts need no rewriting."""
        return self.action_format == "guiforge" and self.coords == "grid999"

    def system(self, domain: str, variant: str | None, frame: Frame) -> str:
        return system_prompt(domain, variant, None, self.codec, self.coord_system(frame))

    def coord_system(self, frame: Frame) -> CoordSystem:
        return coord_system(self.coords, frame if frame and frame[0] and frame[1] else None)

    def encode(self, thought: str, action: dict[str, Any] | Action, frame: Frame, domain: str) -> str:
        """The assistant turn the student writes for ``action`` (canonical, on the grid)."""
        if not isinstance(action, Action):
            action = Action.model_validate(action)
        return self.codec.encode_action(thought, action, self.coord_system(frame), domain)  # type: ignore[return-value]

    def decode(self, reply: str, domain: str, variant: str | None, frame: Frame) -> tuple[str, Action]:
        """A student's reply as (thought, canonical action); ParseError says what is wrong."""
        return self.codec.decode(reply, domain, variant, coords=self.coord_system(frame))

    def point(self, value: int, axis: int, frame: Frame) -> float | int:
        """One grid coordinate as the student writes it (``axis`` 0: x, 1: y)."""
        point = self.coord_system(frame).to_model(value if axis == 0 else 0, value if axis == 1 else 0)
        return point[axis]


def check_target(action_format: str | None, coords: str | None) -> Target:
    """The export's target; a bad name is a one-line error naming the option. Without
    ``--coords`` the format's own convention is used (Qwen-VL: resized pixels)."""
    name = action_format or "guiforge"
    try:
        codec = get_format(name)
    except ValueError as exc:
        raise GuiforgeError(f"--action-format: {exc}") from None
    if codec.native_tools:
        raise GuiforgeError(f"--action-format: {name!r} answers with native tool calls, which the export does not "
                            f"write yet; use a text format: {', '.join(text_formats())}")
    kind = coords or codec.default_coords
    if kind not in COORD_KINDS:
        raise GuiforgeError(f"--coords: {kind!r} is not one of {', '.join(COORD_KINDS)}")
    return Target(name, kind)


def reencode(reply: str, source: Target, target: Target, domain: str, variant: str | None, frame: Frame) -> str:
    """A recorded assistant reply (in the teacher's format) in the target's words; a reply
    the teacher's codec could not read stays as it was (it was shown to the teacher so)."""
    try:
        thought, action = source.decode(reply, domain, variant, frame)
    except (ParseError, ValueError):
        return reply
    return target.encode(thought, action, frame, domain)


__all__ = ["Target", "check_target", "reencode", "text_formats"]
