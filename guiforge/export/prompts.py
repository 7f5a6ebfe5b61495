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
from guiforge.export.coords import PROMPT_LINES, encode_action
from guiforge.harness.context import ContextPolicy, Observed, Turn, build_messages
from guiforge.harness.episode import _summary
from guiforge.harness.parser import ParseError, parse_reply
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
                            _summary(action, s.get("feedback") or "", s.get("error")), _feedback(s)))
    current = Observed(_MARK + str(index).encode(), "image/png", None, _feedback(steps[index - 1] if index else None))
    messages = build_messages(policy, "", "", history, current)
    out: Prompt = []
    for n, m in enumerate(messages):
        if n < 2:  # the system prompt and the task, as the step recorded them
            out.append(prompts[index][n])
            continue
        marks = [p.data for p in m.parts() if isinstance(p, ImagePart) and p.data.startswith(_MARK)]
        if marks:  # an observation: as the step that saw it recorded it
            seen = int(marks[0][len(_MARK):])
            message = prompts[seen][-1]
            if seen < index:  # in the history, its header carries the feedback of its own action
                header = m.parts()[0]
                message = {"role": message["role"], "parts": [header, *message["parts"][1:]]}
            out.append(message)
        else:
            out.append(m.key())
    return out


def encode_reply(thought: str, action: dict[str, Any], width: int | None, height: int | None,
                 coords: str) -> str:
    """The harness's reply format (``format_reply``) with the action's points in ``coords``."""
    body = encode_action(action, width, height, coords)
    return json.dumps({"thought": thought, "action": body}, ensure_ascii=False)


_POINT = re.compile(r"\b(x2|y2|x|y)=(\d+)")
_STEP_LINE = re.compile(r"^Step (\d+): ", re.M)


def _convert_summary(text: str, sizes: dict[int, tuple[int, int]], coords: str) -> str:
    """'Earlier steps' lines name points as x=.. y=..: each in its own step's frame."""
    out = []
    for line in text.split("\n"):
        m = _STEP_LINE.match(line)
        size = sizes.get(int(m.group(1))) if m else None
        if size and size[0]:
            w, h = size

            def sub(mm: re.Match, w: int = w, h: int = h) -> str:
                axis = mm.group(1)
                point = {"x": 0, "y": 0, axis[0]: int(mm.group(2))}
                value = encode_action(point, w, h, coords)[axis[0]]
                return f"{axis}={value}"

            line = _POINT.sub(sub, line)
        out.append(line)
    return "\n".join(out)


def convert(prompt: Prompt, steps: list[dict[str, Any]], domain: str, variant: str | None, coords: str) -> Prompt:
    """``prompt`` in the export's coordinate convention: the system prompt's grid sentence,
    past replies re-encoded in the harness's format, and 'earlier steps' summaries."""
    if coords == "grid999":
        return prompt
    sizes = {s["step_index"]: (s.get("image_width") or 0, s.get("image_height") or 0) for s in steps}
    replies = {s["raw_output"]: s for s in steps if s.get("raw_output")}
    out: Prompt = []
    for m in prompt:
        parts = list(m["parts"])
        if m["role"] == "system":
            parts = [p.replace(PROMPT_LINES["grid999"], PROMPT_LINES[coords]) if isinstance(p, str) else p
                     for p in parts]
        elif m["role"] == "assistant" and parts and isinstance(parts[0], str) and parts[0] in replies:
            step = replies[parts[0]]
            try:
                thought, action = parse_reply(parts[0], domain, variant)
                parts = [encode_reply(thought, action.model_dump(), step.get("image_width"),
                                      step.get("image_height"), coords)]
            except ParseError:
                pass  # a reply the harness could not read was shown as it was
        elif m["role"] == "user" and parts and isinstance(parts[0], str) and parts[0].startswith("Earlier steps:"):
            parts = [_convert_summary(parts[0], sizes, coords), *parts[1:]]
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
