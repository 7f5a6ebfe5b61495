"""An offline teacher behind the model-provider interface: it reads the instruction from the
prompt, knows the converter page's layout, and answers in guiforge's JSON action format,
one action a turn. Sample k misreads the conversion by k x 8%, so the k samples of a task get
graded rewards 1.0, 0.6, 0.2, ... (the environment kind's evaluate())."""

from __future__ import annotations

import json
import re
from typing import Any

from guiforge.models.base import Completion, Message, ModelClient
from guiforge_htmlbench import convert

# The page's layout at its 1280x720 viewport, on guiforge's 0-999 grid.
ANSWER_BOX, SUBMIT = (182, 310), (383, 310)
_ASK = re.compile(r"Convert (\d+) (\w+) to (\w+)")


class OracleTeacher(ModelClient):
    needs_api_key = False

    async def _send(self, messages: list[Message], fault: str | None = None, **params: Any) -> Completion:
        text = " ".join(p for m in messages if m.role == "user" for p in m.parts() if isinstance(p, str))
        found = _ASK.search(text)
        step = sum(1 for m in messages if m.role == "assistant")
        if found is None:
            action: dict[str, Any] = {"type": "terminate", "status": "infeasible"}
        else:
            amount, source, target = int(found.group(1)), found.group(2), found.group(3)
            guess = round(convert(amount, source, target) * (1 + 0.08 * int(params.get("sample") or 0)), 2)
            plan = [{"type": "click", "x": ANSWER_BOX[0], "y": ANSWER_BOX[1]}, {"type": "type", "text": str(guess)},
                    {"type": "click", "x": SUBMIT[0], "y": SUBMIT[1]}, {"type": "terminate", "status": "success"}]
            action = plan[min(step, len(plan) - 1)]
        reply = json.dumps({"thought": f"step {step} of the converter form", "action": action})
        return Completion(text=reply, model=self.config.model or "oracle", input_tokens=len(text) // 4,
                          output_tokens=len(reply) // 4)
