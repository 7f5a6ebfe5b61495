"""Prompts for exported rows: what the policy saw at a step, rebuilt from the step's
``prompt_json`` (messages by reference: text parts and ``{"image": sha256}``), or rebuilt
under another context policy from the recorded observations; then written in the export's
coordinate convention and as trainer messages.

A recorded prompt is exact. A rebuild under another policy runs the harness's own context
builder (``guiforge.harness.context.build_messages``) over the trajectory, with each past
observation's text and image taken from the prompt of the step that saw it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from guiforge.envs.actions import Action
from guiforge.export.target import Target, reencode
from guiforge.harness.context import ContextPolicy, Observed, Turn, build_messages
from guiforge.harness.episode import _summary
from guiforge.models.base import ImagePart

Prompt = list[dict[str, Any]]  # [{"role", "parts": [str | {"image": sha}]}]
_MARK = b"guiforge-step:"


def recorded(step: dict[str, Any]) -> Prompt:
    return json.loads(step["prompt_json"] or "[]")


def _feedback(prev: dict[str, Any] | None) -> str:
    return "" if prev is None else (prev.get("error") or prev.get("feedback") or "")


def rebuild(steps: list[dict[str, Any]], index: int, policy: ContextPolicy | None) -> Prompt:
    """The prompt of ``steps[index]``: as recorded, or rebuilt under ``policy``."""
    if policy is None:
        return recorded(steps[index])
    prompts = [recorded(s) for s in steps[: index + 1]]
    history = []
    for i, s in enumerate(steps[:index]):
        action = Action.model_validate(s["action"]) if s.get("action") else None
        history.append(Turn(_MARK + str(i).encode(), "image/png", None, s["raw_output"] or "",
                            _summary(action, s.get("feedback") or "", s.get("error")),
                            _feedback(steps[i - 1] if i else None)))
    current = Observed(_MARK + str(index).encode(), "image/png", None, _feedback(steps[index - 1] if index else None))
    messages = build_messages(policy, "", "", history, current)
    out: Prompt = []
    for n, m in enumerate(messages):
        if n < 2:  # the system prompt and the task, as the step recorded them
            out.append(prompts[index][n])
            continue
        marks = [p.data for p in m.parts() if isinstance(p, ImagePart) and p.data.startswith(_MARK)]
        if marks:  # an observation, with the feedback that came with it, as its step recorded it
            out.append(prompts[int(marks[0][len(_MARK):])][-1])
        else:
            out.append(m.key())
    return out


_POINT = re.compile(r"\b(x2|y2|x|y)=(\d+)")
_STEP_LINE = re.compile(r"^Step (\d+): ", re.M)


def _convert_summary(text: str, sizes: dict[int, tuple[int, int]], target: Target) -> str:
    """'Earlier steps' lines name points as x=.. y=..: each in its own step's frame."""
    out = []
    for line in text.split("\n"):
        m = _STEP_LINE.match(line)
        size = sizes.get(int(m.group(1))) if m else None
        if size and size[0]:

            def sub(mm: re.Match, size: tuple[int, int] = size) -> str:
                axis = mm.group(1)
                return f"{axis}={target.point(int(mm.group(2)), 0 if axis[0] == 'x' else 1, size)}"

            line = _POINT.sub(sub, line)
        out.append(line)
    return "\n".join(out)


def convert(prompt: Prompt, steps: list[dict[str, Any]], domain: str, variant: str | None, target: Target,
            source: Target | None = None) -> Prompt:
    """``prompt`` (recorded in the teacher's ``source`` format) in the export's ``target``:
    the system prompt re-rendered in the target's template and convention, past replies
    re-encoded, and 'earlier steps' summaries with the target's points."""
    source = source or Target()
    if target == source:
        return prompt
    sizes = {s["step_index"]: (s.get("image_width") or 0, s.get("image_height") or 0) for s in steps}
    replies = {s["raw_output"]: s for s in steps if s.get("raw_output")}
    frame = sizes.get(steps[-1]["step_index"]) if steps else None
    out: Prompt = []
    for m in prompt:
        parts = list(m["parts"])
        if m["role"] == "system":
            parts = [target.system(domain, variant, frame)]
        elif m["role"] == "assistant" and parts and isinstance(parts[0], str) and parts[0] in replies:
            step = replies[parts[0]]
            seen = (step.get("image_width") or 0, step.get("image_height") or 0)
            parts = [reencode(parts[0], source, target, domain, variant, seen)]
        elif m["role"] == "user" and parts and isinstance(parts[0], str) and parts[0].startswith("Earlier steps:"):
            parts = [_convert_summary(parts[0], sizes, target), *parts[1:]]
        out.append({"role": m["role"], "parts": parts})
    return out


def trainer_messages(prompt: Prompt) -> tuple[list[dict[str, Any]], list[str]]:
    """TRL conversational messages (content blocks, ``{"type": "image"}`` placeholders in
    order) and the image hashes the placeholders stand for."""
    messages, images = [], []
    for m in prompt:
        content = []
        for p in m["parts"]:
            if isinstance(p, dict):
                content.append({"type": "image", "text": None})
                images.append(p["image"])
            else:
                content.append({"type": "text", "text": p})
        messages.append({"role": m["role"], "content": content})
    return messages, images


def text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}
