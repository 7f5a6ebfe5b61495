"""Context builders: which past steps (and screenshots) go into the next prompt.

- ``full``: every step with its screenshot.
- ``last_k``: the last k steps with screenshots; older steps are dropped.
- ``summary``: the last 3 screenshots (``images``); older steps as one-line summaries.
- ``window``: overlapping windows of K steps that overlap by O; the steps before the window
  are summarised. The prompt's prefix changes only every K-O steps, so a server's KV cache
  for the prefix is reused by every step in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from guiforge.models.base import ImagePart, Message


class ContextPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["full", "last_k", "summary", "window"] = "window"
    k: int = Field(default=3, ge=1, le=50, description="last_k: steps kept")
    window: int = Field(default=10, ge=2, le=100, description="window: K")
    overlap: int = Field(default=2, ge=0, le=99, description="window: O")
    images: int | None = Field(default=None, ge=1, le=50,
                               description="summary: screenshots shown, the current one included (default 3)")

    @model_validator(mode="after")
    def _overlap_below_window(self) -> ContextPolicy:
        if self.overlap >= self.window:
            raise ValueError("overlap must be smaller than window")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler):
        data = handler(self)
        if data.get("images") is None:  # unset: dumps (and so fingerprints) as before the field existed
            data.pop("images", None)
        return data


@dataclass
class Turn:
    """One past step as the context sees it."""

    screenshot: bytes | None
    media_type: str
    text: str | None  # terminal / tool output shown with the observation
    reply: str  # what the policy answered
    summary: str  # one line: what it did and what happened
    feedback: str = ""  # shown with this step's screen: the result of the step before
    tool_calls: tuple[dict, ...] = ()  # the reply's native tool calls, replayed as such


@dataclass
class Observed:
    screenshot: bytes | None
    media_type: str
    text: str | None
    feedback: str = ""
    extra: list[str] = field(default_factory=list)


def window_start(step: int, window: int, overlap: int) -> int:
    """First step shown in full at ``step``: advances by window-overlap at a time."""
    stride = window - overlap
    return max(0, ((step - overlap) // stride) * stride) if step > overlap else 0


def _observation_message(index: int, obs: Observed | Turn, with_image: bool) -> Message:
    parts: list = [f"Step {index}." + (f" Feedback: {obs.feedback}" if obs.feedback else "")]
    if obs.text:
        parts.append(f"Output:\n{obs.text[-4000:]}")
    if with_image and obs.screenshot:
        parts.append(ImagePart(obs.screenshot, obs.media_type))
    return Message("user", tuple(parts) if len(parts) > 1 else parts[0])


def build_messages(policy: ContextPolicy, system: str, instruction: str, history: list[Turn],
                   current: Observed) -> list[Message]:
    step = len(history)
    if policy.kind == "full":
        first_full = 0
    elif policy.kind == "last_k":
        first_full = max(0, step - policy.k)
    elif policy.kind == "summary":
        first_full = max(0, step - ((policy.images or 3) - 1))  # past screenshots + the current one
    else:
        first_full = window_start(step, policy.window, policy.overlap)

    messages = [Message("system", system), Message("user", f"Task: {instruction}")]
    if first_full and policy.kind != "last_k":  # last_k drops older steps altogether
        lines = "\n".join(f"Step {i}: {t.summary}" for i, t in enumerate(history[:first_full]))
        messages.append(Message("user", f"Earlier steps:\n{lines}"))
    for i in range(first_full, step):
        turn = history[i]
        messages.append(_observation_message(i, turn, with_image=True))
        messages.append(Message("assistant", turn.reply, turn.tool_calls))
    messages.append(_observation_message(step, current, with_image=True))
    return messages


def shared_prefix(a: list[Message], b: list[Message]) -> int:
    """How many leading messages two prompts share (what a prefix cache can reuse)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x.key() != y.key():
            break
        n += 1
    return n
