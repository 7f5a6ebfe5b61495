"""The environment contract: one interface for web, mobile, desktop and tools.

An adapter translates ``reset / observe / step / final_state`` into its native API
(Playwright, xdotool, bwrap, Python tools) and holds no pipeline logic. The policy sees
only :class:`Observation` (screenshot bytes + pixel size, text, feedback); ``debug`` carries
element geometry for the scripted teacher and for humans, never for the policy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from guiforge.failures import ENV_FAILURE, Fault
from guiforge.verify.contract import Criterion, FinalState, VerifierResult  # noqa: F401 - part of the environment contract

if TYPE_CHECKING:  # actions.py looks action sets up through the kinds, which build on this module
    from guiforge.envs.actions import Action

# The training label of a task: web, mobile, desktop, tools, or one an environment kind
# declares (guiforge.envs.kind); never branched on.
Domain = str


class EnvFailure(Fault):
    """The environment (not the agent) failed: a crash, a hang past its deadline, a lost
    browser. Recorded as ``env_failure``, never as reward 0."""

    kind = ENV_FAILURE


class EnvSpec(BaseModel):
    """What to acquire. Instances with the same ``pool_key`` are interchangeable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: Domain
    apps: tuple[str, ...] = ()
    viewport: tuple[int, int] | None = None
    variant: Literal["gui", "terminal", "hybrid"] | None = None  # desktop action sets
    device: str | None = None  # mobile emulation profile, e.g. "Pixel 7"
    # phone screenshots in device pixels (1082x2202 on a Pixel 7; ~0.27 s a frame here) or
    # CSS pixels (412x839; ~0.04 s); None: the adapter's default (device)
    screenshot_scale: Literal["device", "css"] | None = None
    # desktop: the LibreOffice look (guiforge.presentation theme name), fixed per instance
    theme: str | None = None

    @property
    def pool_key(self) -> tuple:
        # Apps are loaded per task, so instances differ only by domain/viewport/variant;
        # the viewport (second) and theme (last) are the look: see EnvManager's families.
        return (self.domain, self.viewport, self.variant, self.device, self.screenshot_scale, self.theme)


class TaskSpec(BaseModel):
    """The runtime view of a task x = (E, s0, g, V)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    domain: Domain
    apps: list[str] = Field(default_factory=list)
    instruction: str
    setup: dict[str, Any] = Field(default_factory=dict)  # s0: app state seeds, files
    rubric: list[Criterion] = Field(default_factory=list)
    feasible: bool = True
    max_steps: int = Field(default=15, gt=0)
    world_id: str | None = None
    # theme, viewport, distractors (guiforge.presentation): pixels only, never verifier state
    presentation: dict[str, Any] = Field(default_factory=dict)


@dataclass
class Observation:
    screenshot: bytes | None = None
    width: int = 0
    height: int = 0
    format: str = "png"
    text: str | None = None  # terminal output, tool results
    feedback: str = ""  # what the last action did, or its error
    debug: dict[str, Any] = field(default_factory=dict)  # never shown to the policy
    # Which of the instance's operations (resets and steps, counted from 1) the frame was
    # taken after, once the screen had settled: the observation a step returns carries the
    # number after the reset's or previous step's, so a stale frame cannot pass for a new one
    # (guiforge.harness.episode checks it). None: the adapter does not count (tools).
    seq: int | None = None


@dataclass
class StepResult:
    observation: Observation
    feedback: str = ""
    error: str | None = None  # the action failed (bad target, command error): not an env fault
    done: bool = False  # answer/terminate was taken
    answer: str | None = None
    status: str | None = None


class Environment(ABC):
    """An adapter. ``start`` does the heavy, reusable initialisation (a browser, an X
    server); ``reset`` puts a task's initial state in place and must be fast."""

    domain: Domain

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.answer: str | None = None
        self.status: str | None = None
        # Off for runs that need no pixels (the package gate): observations then carry the
        # adapter's geometry and text but no screenshot, which saves the encoding.
        self.capture_screenshots = True

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def reset(self, task: TaskSpec) -> Observation: ...

    @abstractmethod
    def observe(self) -> Observation: ...

    @abstractmethod
    def step(self, action: Action) -> StepResult: ...

    @abstractmethod
    def final_state(self) -> FinalState: ...

    @abstractmethod
    def close(self) -> None: ...

    def state_stamp(self) -> str | None:
        """A cheap token that changes whenever :meth:`final_state` would read something
        else (per-step progress reads the whole state only then); None: no such token, the
        whole state is read every time."""
        return None

    def healthy(self) -> bool:
        return True

    def idle(self) -> None:
        """The instance went back to the warm pool: let go of what it need not hold while
        idle (a remote instance gives its host's slot back; guiforge.envs.service)."""
        return None

    def processes(self) -> list[int]:
        """The pids of the processes this instance's operations wait on (a browser, an X
        server, LibreOffice): the manager counts their wait for a CPU out of its deadlines
        (guiforge.worktime), with every process below them. Called from other threads."""
        return []

    def finish(self, action: Action) -> StepResult:
        """Shared handling of ``answer`` / ``terminate``: they end the episode."""
        if action.type == "answer":
            self.answer = action.answer if action.answer is not None else action.text
        self.status = action.status or ("success" if action.type == "answer" else None)
        obs = self.observe()
        return StepResult(obs, feedback=f"episode ended ({action.type})", done=True,
                          answer=self.answer, status=self.status)
