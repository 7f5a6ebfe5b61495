"""Drive a lease the way a scripted teacher does: find elements in the observation's debug
geometry, act through canonical actions on the 0-999 grid, keep the latest observation."""

from __future__ import annotations

from typing import Any

from guiforge.envs import Action, Criterion, Lease, Observation, StepResult, TaskSpec
from guiforge.envs.web.grounding import pointer


def crit(cid: str, fn: str, **args: Any) -> Criterion:
    return Criterion(id=cid, check={"fn": fn, **args})


def task(task_id: str, domain: str, apps: list[str], setup: dict, rubric: list[Criterion]) -> TaskSpec:
    return TaskSpec(task_id=task_id, domain=domain, apps=apps, instruction="test", setup=setup, rubric=rubric)


class Driver:
    def __init__(self, lease: Lease, obs: Observation):
        self.lease = lease
        self.obs = obs
        self.last: StepResult | None = None

    def act(self, action: Action, ok: bool = True) -> StepResult:
        result = self.lease.step(action)
        if ok:
            assert result.error is None, f"{action.type} failed: {result.error}"
        self.obs = result.observation
        self.last = result
        return result

    def click(self, id: str | None = None, label: str | None = None, kind: str = "click") -> StepResult:  # noqa: A002
        if id is not None:
            self.reveal(id, touch=kind != "click")
        return self.act(pointer(self.obs, kind, id=id, label=label))

    def choose(self, id: str, label: str) -> StepResult:  # noqa: A002
        """Open an in-page dropdown and pick an option, scrolling its menu if needed."""
        self.click(id=id)
        for _ in range(6):
            options = [e for e in self.obs.debug["elements"] if (e["id"] or "").startswith(f"{id}-option-")]
            hit = next((e for e in options if e["label"] == label), None)
            if hit:
                return self.click(id=hit["id"])
            gx, gy = options[-1]["grid"]
            self.act(Action(type="scroll", x=gx, y=gy, direction="down", amount=2))
        raise AssertionError(f"option {label!r} not found in dropdown {id}")

    def reveal(self, id: str, touch: bool = False, tries: int = 6) -> None:  # noqa: A002
        """Scroll (wheel, or swipe up on a phone) until the element is on screen."""
        for _ in range(tries):
            if id in self.ids():
                return
            if touch:
                self.act(Action(type="swipe", x=500, y=750, x2=500, y2=350))
            else:
                self.act(Action(type="scroll", x=600, y=600, direction="down", amount=3))

    def tap(self, id: str | None = None, label: str | None = None) -> StepResult:  # noqa: A002
        return self.click(id=id, label=label, kind="tap")

    def type(self, text: str) -> StepResult:
        return self.act(Action(type="type", text=text))

    def fill(self, id: str, text: str, clear: bool = False, kind: str = "click") -> StepResult:  # noqa: A002
        """Focus a field and type, clearing it first (ctrl+a, backspace) when asked."""
        self.click(id=id, kind=kind)
        if clear:
            self.act(Action(type="hotkey", keys=["ctrl", "a"]))
            self.act(Action(type="key", keys=["backspace"]))
        return self.type(text)

    def ids(self) -> set[str]:
        return {e["id"] for e in self.obs.debug["elements"] if e.get("id")}

    @property
    def path(self) -> str:
        return self.obs.debug["path"]
