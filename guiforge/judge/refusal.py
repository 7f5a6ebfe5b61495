"""Refusals judged as refusals: when "this cannot be done" is the right answer.

A judge sees no feasibility flag; it sees the instruction and what the agent saw. A refusal is
well grounded when the instruction asks for something no app of this kind can do (recall an
email once sent, unsend a message), or when the screens or the tools' answers state the
obstacle (no flights, out of stock, not found, no such sheet). Without grounds, a refusal
while the asked-for things are in plain view is the agent giving up (the offline judge's
``infeasible_but_seen``)."""

from __future__ import annotations

import re

# Requests no mail, chat or office app can carry out, whatever the screens show.
_IMPOSSIBLE = (
    (re.compile(r"\b(recall|unsend|un-send|retract|pull\w* (?:it |this |that )?back|take\w* (?:it )?back|"
                r"delete\w* (?:it )?from (?:\w+'s|their|his|her) (?:inbox|phone|mailbox))\b", re.I),
     "a message that was sent cannot be recalled"),
)
# What a screen or a tool says when the thing asked for is not there.
_OBSTACLE = re.compile(
    r"\b(no (?:results?|flights?|matches|matching \w+|such \w+|items?|products?|records?|entries|data)\b"
    r"|not (?:found|available|in stock|listed)|out of stock|unavailable|sold out|"
    r"(?:does not|doesn't|do not|don't) exist|cannot be found|0 (?:results|flights|matches)|nothing (?:found|matches))",
    re.I)


def refusal_grounds(instruction: str, seen: str) -> str | None:
    """Why refusing is right, from the instruction and what the agent saw (screens' text and
    the environment's feedback), or None when nothing says so."""
    for pattern, why in _IMPOSSIBLE:
        if pattern.search(instruction):
            return why
    m = _OBSTACLE.search(seen)
    if m:
        return f"the screens or tools say {m.group(0)!r}"
    return None
