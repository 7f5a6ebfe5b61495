"""An environment kind: the object that owns every fact guiforge needs about one kind of
environment, so no code outside it branches on a domain's name.

A kind says
- its **domain**, the training label its tasks carry (``tasks.domain``: web, mobile,
  desktop, tools, or a new one);
- its **action set** per variant (the actions a policy may take; codecs render and decode
  them) and whether pointer actions are **touch** (taps and swipes) or take no point at all;
- its **prompt surface**: what the system prompt says the agent operates, and any notes
  it appends (what an action means here); what computer-use APIs call its screen;
- its **looks**: the screen sizes, themes and distractors its tasks' presentations are
  drawn from (none: nothing is drawn), and the reference program's own verbs for it;
- its **setup builder**: a task (as stored) -> the ``TaskSpec.setup`` its adapter resets to,
  from the task's world when it has one, from the task's own setup when it has none; keys the
  builder does not know are kept;
- its **pool key and capacity**: the :class:`EnvSpec` a task acquires (instances with the
  same ``pool_key`` are interchangeable) and the most instances it may run at once;
- its **adapter** (an :class:`~guiforge.envs.base.Environment`, imported on first use) and
  the adapter's **health check**;
- optionally, **evaluate(task, state)**: a graded reward in [0, 1] (or ``(value, reason)``)
  read from the final state, which takes precedence over the rubric's score. It runs in the
  verifier's worker process (guiforge.verify.worker), never in the caller's: there a fresh
  instance of the kind's class is made, so ``evaluate`` must not depend on state set on
  another instance, and the kind's module must be importable from site-packages (an
  installed package; the worker runs ``python -I``).

A package registers a kind under the ``guiforge.envs`` entry-point group; the entry point's
name is the domain it serves. A pipeline may give a domain another kind (``envs:`` in the
pipeline file, e.g. a remote pool): that kind serves the same tasks, so it should keep the
facts of the kind it stands in for (subclass it and change :meth:`make`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from guiforge.envs.base import Environment, EnvSpec, FinalState, TaskSpec
from guiforge.plugins import load_value
from guiforge.presentation import Looks, Presentation, harder_presentation, sample_presentation

if TYPE_CHECKING:
    from guiforge.worlds.model import World


class EnvKind:
    """The facts of one environment kind (see the module docstring). Subclass it, set the
    class attributes, and override what differs; every method has a working default."""

    domain: str = ""
    surface: str = "a computer"  # "You are a computer-use agent operating <surface>."
    notes: str = ""  # anything else the system prompt must say about this kind (appended to it)
    adapter: str | type[Environment] = ""  # module:Class (imported on first use) or the class
    action_sets: Mapping[str | None, frozenset[str]] = {}  # by variant; None: the default
    touch: bool = False  # pointer actions are taps, long presses and swipes
    capacity: int | None = None  # most instances at once (None: as the stage allows)
    success_at: float = 1.0  # a graded reward at least this counts as success (no rubric)
    default_variant: str | None = None  # the variant a task (or a reply to decode) that names none is
    computer: str | None = None  # the screen as computer-use APIs name it (OpenAI's `environment`; None: a browser)
    # the reference program's own verbs for this kind (the ``_<dialect>_<verb>`` handlers of
    # guiforge.teacher.reference, tried before the common ones; None: the common ones only)
    reference_dialect: str | None = None

    # -- actions and prompt ------------------------------------------------------------
    def variants(self) -> tuple[str | None, ...]:
        """The variants a task of this kind may name (None: no variant)."""
        return tuple(self.action_sets) or (None,)

    def actions(self, variant: str | None = None) -> frozenset[str]:
        found = self.action_sets.get(variant)
        if found is None:
            raise ValueError(f"no action set for domain {self.domain!r} variant {variant!r}; "
                             f"variants: {', '.join(str(v) for v in self.variants())}")
        return found

    def points(self, variant: str | None = None) -> bool:
        """Whether actions take a point on the screen (the prompt then explains coordinates)."""
        return bool(self.actions(variant) & {"click", "tap", "drag", "swipe", "long_press", "double_click"})

    def surface_for(self, variant: str | None = None) -> str:
        """What the system prompt says the agent operates, for ``variant``."""
        return self.surface

    def notes_for(self, variant: str | None = None) -> str:
        """What else the system prompt says about this kind, for ``variant`` ("" for nothing):
        where an action means something else here than on guiforge's apps."""
        return self.notes

    # -- presentation ------------------------------------------------------------------
    def looks_for(self, variant: str | None = None) -> Looks | None:
        """What a task's presentation (screen size, theme, distractors) is drawn from; None:
        nothing is drawn (the adapter's own look)."""
        return None

    def presentation(self, task_id: str, seed: int | str = 0, variant: str | None = None,
                     distractors: bool = True) -> Presentation:
        """The presentation of one task (drawn once, recorded on the task, applied on reset)."""
        return sample_presentation(self.looks_for(variant), task_id, seed, distractors)

    def harder_presentation(self, task_id: str, seed: int | str = 0, variant: str | None = None) -> Presentation:
        """A harder look of a task for resynthesis (guiforge.presentation.harder_presentation)."""
        return harder_presentation(self.looks_for(variant), task_id, seed)

    def distractors(self, variant: str | None = None) -> tuple[str, ...]:
        """The distractor kinds its screens may show (the reference clears them first)."""
        looks = self.looks_for(variant)
        return looks.distractors if looks is not None else ()

    # -- tasks -------------------------------------------------------------------------
    def setup(self, task: Mapping[str, Any], world: World | None) -> dict[str, Any]:
        """The setup an adapter resets to. The default takes the task's own setup as it is
        (a task without a world carries everything it needs)."""
        return dict(stored_setup(task))

    def spec(self, variant: str | None = None, presentation: Mapping[str, Any] | None = None,
             **options: Any) -> EnvSpec:
        """What a task acquires: instances with the same ``pool_key`` are interchangeable.
        ``options`` are a stage's settings a kind may use (``phone_screenshots``)."""
        return EnvSpec(domain=self.domain, variant=variant)

    def make(self, spec: EnvSpec) -> Environment:
        """A new (not yet started) adapter instance for ``spec``."""
        cls = self.adapter if isinstance(self.adapter, type) else \
            load_value(self.adapter, f"the adapter of environment kind {self.domain!r}")
        if not (isinstance(cls, type) and issubclass(cls, Environment)):
            raise TypeError(f"environment kind {self.domain!r}: adapter {self.adapter!r} is not an Environment subclass")
        return cls(spec)

    def healthy(self, env: Environment) -> bool:
        """The adapter's health check (a dead process, a page that left the site)."""
        return env.healthy()

    # -- reward ------------------------------------------------------------------------
    def evaluate(self, task: TaskSpec, state: FinalState) -> float | tuple[float, str] | None:
        """A graded reward in [0, 1] for ``state`` (None: the rubric decides). Runs in the
        verifier's worker process."""
        return None

    @property
    def graded(self) -> bool:
        """Whether this kind has its own reward (overrides :meth:`evaluate`)."""
        return type(self).evaluate is not EnvKind.evaluate

    def evaluator(self) -> str | None:
        """``module:Class`` the verifier worker imports to call :meth:`evaluate`, or None."""
        cls = type(self)
        return f"{cls.__module__}:{cls.__qualname__}" if self.graded else None

    def __repr__(self) -> str:
        return f"<environment kind {self.domain!r} ({type(self).__module__}.{type(self).__qualname__})>"


def stored_setup(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task's setup as stored (``setup`` as a value, or ``setup_json``)."""
    if "setup" in task:
        return dict(task["setup"] or {})
    raw = task.get("setup_json")
    return dict(json.loads(raw)) if raw else {}


def kept(setup: Mapping[str, Any], known: set[str] | frozenset[str], built: dict[str, Any]) -> dict[str, Any]:
    """``built`` plus every key of the stored ``setup`` its builder does not know: a key a
    plugin's check or kind reads is never dropped on the way."""
    return {**{k: v for k, v in setup.items() if k not in known and k not in built}, **built}
