"""The RL prompts' system prompt, in the protocol the trainer drives the policy with.

- ``tools`` (TRL's multi-turn GRPO with ``environment_factory=GuiforgeEnv``): the policy calls
  the environment's one tool, ``act``, once a turn with one action written in the export's
  action format; the tool answers with the feedback and the next screenshot.
- ``completion`` (single-turn GRPO with ``reward_funcs=[TaskReward()]``): the policy sees s0
  only, so it writes every action in one reply, one JSON object a line, which the reward
  replays in order (the harness's own JSON format only: other formats read one action a reply).

The collection prompt says "reply with exactly one action as JSON"; for either protocol that
sentence is replaced, so the prompt never contradicts how the trainer reads the reply.
"""

from __future__ import annotations

import json

from guiforge.envs.actions import action_set
from guiforge.errors import GuiforgeError
from guiforge.export.target import Frame, Target

_ONE_ACTION = ('Each turn, look at the latest observation, think briefly, then reply with exactly one action as '
               'JSON:\n{"thought": "<one or two sentences>", "action": <action>}')
# an example action per kind a domain may have, the first of these its action set holds
_EXAMPLES = ({"type": "click", "x": 500, "y": 300}, {"type": "tap", "x": 500, "y": 300},
             {"type": "bash", "text": "ls"}, {"type": "answer", "answer": "42"})


def _example(target: Target, frame: Frame, domain: str, variant: str | None) -> str:
    kinds = action_set(domain, variant)
    action = next((a for a in _EXAMPLES if a["type"] in kinds), _EXAMPLES[-1])
    if target.action_format == "guiforge":
        return json.dumps(action)
    # the action without a thought (an empty "Thought:" line goes), on one line; a tool-call
    # format's tags stay: its codec reads them
    lines = [line.strip() for line in target.encode("", action, frame, domain).splitlines()]
    return " ".join(line for line in lines if line and not line.endswith(":"))


def rl_system(target: Target, protocol: str, domain: str, variant: str | None, frame: Frame) -> str:
    """The system prompt of an RL prompt row under ``protocol`` (module docstring)."""
    system = target.system(domain, variant, frame)
    if protocol == "completion":
        if target.action_format != "guiforge":
            raise GuiforgeError(f"--rl-protocol: completion (every action in one reply) reads the harness's JSON "
                                f"only; with --action-format {target.action_format} use --rl-protocol tools")
        how = ("You see the screen once, now: reply once with every action the task needs, in order, one JSON "
               'object a line:\n{"thought": "<one or two sentences>", "action": <action>}')
        return system.replace(_ONE_ACTION, how) if _ONE_ACTION in system else f"{system}\n\n{how}"
    how = (f"Each turn, look at the latest observation, think briefly, then call the `act` tool with exactly one "
           f"action as its `action` argument, e.g. act(action='{_example(target, frame, domain, variant)}'); it answers with "
           "the feedback and the next screenshot. Keep calling act until you end the task with an answer or "
           "terminate action.")
    if _ONE_ACTION in system:
        return system.replace(_ONE_ACTION, how)
    return f"{system}\n\nHow your actions reach the screen: {how[0].lower()}{how[1:]}"
