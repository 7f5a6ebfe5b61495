"""The skill card: a reusable, declarative task-generation workflow.

One card (``skills/<app>/<skill>.yaml``) serves many task instances: its parameters bind
to entities of a world, its Jinja phrasings render the instruction, its setup tells the
preparers what initial state to build, its rubric says how the verifier scores the final
state, and its reference solution (UI-level steps naming elements the apps expose) drives
the scripted teacher and the package gate.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Domain = Literal["web", "mobile", "desktop", "tools"]
Variant = Literal["gui", "terminal", "hybrid"]

# Reference steps: `do` is a UI-level verb; targets are element ids or labels the apps expose
# (web/mobile), keys and cells (desktop GUI), commands (terminal) or tool calls (tools).
STEP_VERBS = frozenset({
    "open", "click", "double_click", "right_click", "type", "key", "hotkey", "scroll", "select",
    "wait", "answer", "bash", "call_tool", "terminate", "goto", "cell", "save", "read",
    "sort", "find", "replace_all", "close", "outline", "sheet", "slide",  # desktop: see guiforge/teacher/desktop_steps.py
})


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Param(Strict):
    """One parameter. ``each`` iterates candidates (a Jinja expression giving a list),
    ``value`` computes from earlier parameters; ``where`` keeps a binding only if true."""

    each: str | None = None
    value: str | None = None
    where: str | None = None
    description: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> Param:
        if (self.each is None) == (self.value is None):
            raise ValueError("give exactly one of 'each' or 'value'")
        return self


class Criterion(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = ""
    weight: float = Field(default=1.0, gt=0)
    required: bool = True
    check: dict[str, Any]

    @model_validator(mode="after")
    def _names_a_check(self) -> Criterion:
        if not isinstance(self.check.get("fn"), str):
            raise ValueError("check needs 'fn': the name of a check in guiforge/verify/checks.py")
        return self


class Step(BaseModel):
    """A reference step; fields beyond ``do`` depend on the verb (id, label, text, keys, ...)."""

    model_config = ConfigDict(extra="allow")
    do: str

    @model_validator(mode="after")
    def _known_verb(self) -> Step:
        if self.do not in STEP_VERBS:
            raise ValueError(f"unknown step {self.do!r}; steps are {', '.join(sorted(STEP_VERBS))}")
        return self


class SkillCard(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$", description="<app>.<skill>")
    version: str = "1"
    domains: list[Domain] = Field(min_length=1)
    variants: list[Variant] = Field(default_factory=list, description="desktop action sets this card supports")
    apps: list[str] = Field(min_length=1)
    description: str = Field(min_length=10)
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    max_steps: int = Field(default=15, ge=1, le=100)
    feasible: bool = True
    max_per_world: int = Field(default=2, ge=1, le=20, description="instances per world at most")
    params: dict[str, Param] = Field(default_factory=dict)
    instructions: list[str] = Field(min_length=2, description="Jinja phrasings; one is chosen per instance")
    voice: bool = Field(default=True, description="say the phrasing in a user's register (polite, terse, with "
                                                  "context, a rare typo; guiforge.skills.voice); false keeps it verbatim")
    context: list[str] = Field(default_factory=list, description="Jinja: why a user would ask for this task (its "
                                                                 "own reasons), said with it now and then")
    localized: dict[str, list[str]] = Field(default_factory=dict, description="ISO 639-1 language -> Jinja phrasings "
                                                                              "in it, for personas who speak it")
    setup: dict[str, Any] = Field(default_factory=dict)
    rubric: list[Criterion] = Field(min_length=1)
    changes: list[str | dict[str, Any]] = Field(
        default_factory=list,
        description="Jinja: what the task may change beyond what the rubric's checks name (app state paths "
                    "like 'bank.accounts' or {path, where, fields}; files as {file, cells, sheets, slides, text}); "
                    "every other change fails the automatic no_side_damage criterion (guiforge.verify.side_effects)")
    reference: list[Step] | dict[str, list[Step]] = Field(
        description="steps; or per domain/variant, e.g. {web: [...], terminal: [...]}")
    answer: str | None = Field(default=None, description="Jinja: the expected answer, for information tasks")
    leak_check: list[str] = Field(default_factory=list,
                                  description="Jinja: values the instruction must not reveal")
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> SkillCard:
        if "desktop" in self.domains and not self.variants:
            raise ValueError("a desktop card must list its variants (gui, terminal, hybrid)")
        if self.variants and "desktop" not in self.domains:
            raise ValueError("variants apply to desktop cards only")
        bad = [k for k, v in self.localized.items() if not re.fullmatch(r"[a-z]{2}", k) or not v]
        if bad:
            raise ValueError(f"localized: {bad[0]!r} must be a two-letter language code with a list of phrasings")
        ids = [c.id for c in self.rubric]
        if len(set(ids)) != len(ids):
            raise ValueError("rubric criterion ids must be unique")
        if "no_side_damage" in ids:
            raise ValueError("no_side_damage is added to every rubric automatically; declare what may change "
                             "in 'changes:' instead")
        if isinstance(self.reference, dict):
            keys = set(self.domains) | set(self.variants)
            unknown = set(self.reference) - keys
            if unknown:
                raise ValueError(f"reference keys {sorted(unknown)} are not among this card's domains/variants")
        return self

    @property
    def app(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def cross_app(self) -> bool:
        return len(set(self.apps)) > 1

    def phrasing(self, index: int) -> tuple[str, str]:
        """(language, Jinja phrasing) of a phrasing index: the English ones first, then each
        language's in order of its code."""
        if index < len(self.instructions):
            return "en", self.instructions[index]
        index -= len(self.instructions)
        for lang in sorted(self.localized):
            if index < len(self.localized[lang]):
                return lang, self.localized[lang][index]
            index -= len(self.localized[lang])
        raise IndexError(f"skill {self.id} has no phrasing {index}")

    def phrasing_index(self, language: str, k: int) -> int:
        """The index of the ``k``-th phrasing in ``language`` (see ``phrasing``)."""
        if language == "en":
            return k
        return len(self.instructions) + sum(len(self.localized[x]) for x in sorted(self.localized) if x < language) + k

    def reference_for(self, domain: str, variant: str | None = None) -> list[Step]:
        if isinstance(self.reference, list):
            return self.reference
        for key in (variant, domain):
            if key and key in self.reference:
                return self.reference[key]
        raise KeyError(f"skill {self.id} has no reference for {domain}/{variant}")
