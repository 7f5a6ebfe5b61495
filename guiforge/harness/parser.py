"""Parse a model's reply into (thought, canonical action): the guiforge JSON format's entry
points, kept for callers that know only that format. Every format, native tool calls and
coordinate conventions are in :mod:`guiforge.harness.formats`.

Accepted shapes, on the 0-999 grid: ``{"thought": "...", "action": {"type": "click", "x":
120, "y": 48}}`` (fenced or not), a bare action (the thought is the text before it),
``Thought: ...`` / ``Action: {...}``, a function-call object ``{"name": "click",
"arguments": {...}}``, a last-line ``click(x=120, y=48)``. The action is the reply's only
one outside thinking blocks. A reply that yields no single valid action raises
:class:`ParseError` with a message fit to feed back to the model.
"""

from __future__ import annotations

from guiforge.envs.actions import Action
from guiforge.harness.formats import ModelReply, ParseError, get_format

__all__ = ["ParseError", "format_reply", "parse_reply"]


def parse_reply(text: str | ModelReply, domain: str, variant: str | None = None) -> tuple[str, Action]:
    return get_format("guiforge").decode(text, domain, variant)


def format_reply(thought: str, action: Action) -> str:
    """The canonical reply text (what the scripted teacher writes, and the SFT target)."""
    return get_format("guiforge").encode(thought, action)  # type: ignore[return-value]
