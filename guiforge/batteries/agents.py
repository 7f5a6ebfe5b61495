"""Responders for :class:`~guiforge.testing.model_server.ModelServer` that play a teacher and
a judge well enough for a whole pipeline to run through the providers' wire formats: the
fault battery sends every model call of a run through the official SDKs this way.

:class:`AnswerTeacher` looks the task up in the run's lake by its instruction. On even
samples it plays the task's reference where every step can be written without looking at
the screen (tool calls, shell commands, the answer); otherwise it looks around for two steps
(a scroll, a swipe, ``ls``, a tool call) and answers something wrong, or ends. Tool and
terminal tasks thus come out with mixed outcomes. :class:`VerdictJudge` calls a trajectory a
success when it ended with an answer other than the wrong one.
"""

from __future__ import annotations

import json
import threading
from typing import Any

WRONG = "I could not find it"
_LOOK = {
    "web": {"type": "scroll", "x": 500, "y": 500, "direction": "down", "amount": 1},
    "mobile": {"type": "swipe", "x": 500, "y": 700, "x2": 500, "y2": 450},
    "desktop": {"type": "scroll", "x": 500, "y": 500, "direction": "down", "amount": 1},
    "terminal": {"type": "bash", "text": "ls"},
    "tools": {"type": "call_tool", "text": json.dumps({"name": "today", "arguments": {}})},
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


class AnswerTeacher:
    """A teacher endpoint's replies (guiforge JSON), from the tasks of ``lake``'s run."""

    def __init__(self, lake_uri: str, looks: int = 2):
        self.lake_uri = lake_uri
        self.looks = looks
        self._tasks: dict[str, dict] | None = None
        self._lock = threading.Lock()

    def _task(self, instruction: str) -> dict:
        with self._lock:
            if self._tasks is None:
                from guiforge.lake.store import Lake

                rows = Lake(self.lake_uri).read_table("tasks", columns=["instruction", "domain", "variant",
                                                                         "reference_json"]).to_pylist()
                self._tasks = {r["instruction"]: r for r in rows}
        task = self._tasks.get(instruction)
        if task is None:
            raise KeyError(f"no task with the instruction {instruction[:80]!r} in {self.lake_uri}")
        return task

    def __call__(self, provider: str, body: dict) -> str:
        messages = body["messages"]
        task_line = next(_text(m["content"]) for m in messages if m["role"] == "user")
        task = self._task(task_line.removeprefix("Task: ").strip())
        turns = sum(m["role"] == "assistant" for m in messages)
        script = blind_script(json.loads(task["reference_json"] or "[]"))
        if script and (body.get("seed") or 0) % 2 == 0:  # sample k is sent seed + k
            action = script[min(turns, len(script) - 1)]
            return json.dumps({"thought": "I follow the steps that solve it.", "action": action})
        if turns < self.looks:
            kind = "terminal" if task["variant"] == "terminal" else task["domain"]
            return json.dumps({"thought": "I look around first.", "action": _LOOK[kind]})
        if script:
            return json.dumps({"thought": "I think I have it.", "action": {"type": "answer", "answer": WRONG}})
        return json.dumps({"thought": "I am done.", "action": {"type": "terminate", "status": "success"}})


def blind_script(reference: list[dict]) -> list[dict] | None:
    """The reference as canonical actions, where none needs the screen (else None)."""
    out = []
    for step in reference:
        if step.get("do") == "call_tool":
            out.append({"type": "call_tool", "text": json.dumps({"name": step["name"],
                                                                 "arguments": step.get("arguments") or {}})})
        elif step.get("do") == "bash":
            out.append({"type": "bash", "text": step["command"]})
        elif step.get("do") == "answer":
            out.append({"type": "answer", "answer": step["text"]})
        elif step.get("do") == "terminate":
            out.append({"type": "terminate", "status": step.get("status") or "success"})
        else:
            return None
    if out and out[-1]["type"] not in ("answer", "terminate"):
        out.append({"type": "terminate", "status": "success"})
    return out or None


class VerdictJudge:
    """A judge endpoint's JSON verdicts: success when the trajectory ended with an answer
    that is not :data:`WRONG`."""

    def __call__(self, provider: str, body: dict) -> str:
        history = " ".join(_text(m["content"]) for m in body["messages"] if m["role"] == "user")
        answered = "answer answer=" in history and WRONG not in history
        return json.dumps({"success": answered, "score": 1.0 if answered else 0.0,
                           "rationale": "it answered" if answered else "it did not answer", "evidence_steps": []})
