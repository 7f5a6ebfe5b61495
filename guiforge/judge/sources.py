"""Where a typed value may have come from, beyond the key frames: the screen a copied value
was read on, and the field a moved time was typed over. The offline judge reads these
frames only for typed numbers that nothing else it saw backs."""

from __future__ import annotations

from guiforge.judge.evidence import JudgeView
from guiforge.judge.shifts import shifts


def typed_over(view: JudgeView, numbers: list[str]) -> list[str]:
    """Frames of the steps that typed one of ``numbers`` where the instruction moves a time:
    the screen the agent typed over, whose field still shows the value it had."""
    if not numbers or not shifts(view.instruction):
        return []
    return [s.image_sha256 for s in view.steps if s.image_sha256 and s.action and s.action["type"] == "type"
            and any(n in str(s.action.get("text") or "") for n in numbers)]


def left_for(view: JudgeView, numbers: list[str]) -> list[str]:
    """Frames of the app switches before the steps that typed one of ``numbers``: the screen
    the agent left to go and type them (a note's text, then Mail to send it)."""
    if not numbers:
        return []
    frames, last = [], None
    for s in view.steps:
        a = s.action or {}
        if a.get("type") in ("open_app", "goto") or (s.target or "").startswith("tab "):
            last = s.image_sha256
        elif a.get("type") == "type" and last and any(n in str(a.get("text") or "") for n in numbers):
            frames.append(last)
    return list(dict.fromkeys(frames))
