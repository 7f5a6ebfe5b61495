"""Bind a skill card to a world and render task instances.

Parameters bind in order: ``each`` fans out over candidates, ``value`` derives from earlier
parameters, ``where`` filters; a parameter that evaluates to nothing means the card does
not fit this world. Every rendering is a pure function of (card, world, seed).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from jinja2 import TemplateError

from guiforge.envs.kinds import kind_of
from guiforge.gates.text_gates import leaks
from guiforge.lake.fingerprint import fingerprint
from guiforge.presentation import Presentation
from guiforge.skills.card import SkillCard
from guiforge.skills.templating import evaluate, render_text, render_value
from guiforge.skills.voice import speak
from guiforge.verify.side_effects import derive_allowances, side_damage_criterion
from guiforge.worlds.model import World

MAX_BINDINGS = 256  # per card and world, before sampling
RECOVERY_STEPS = 2  # a slip noticed and undone: the wrong item pressed, then the right one
LOCAL_SHARE = 0.6  # of tasks in a world whose language a card speaks, said in that language


class BindingError(Exception):
    pass


@dataclass
class TaskCandidate:
    task_id: str
    world_id: str
    skill_id: str
    skill_version: str
    domain: str
    variant: str | None
    apps: list[str]
    instruction: str
    setup: dict[str, Any]
    rubric: list[dict[str, Any]]
    reference: list[dict[str, Any]]
    answer: str | None
    feasible: bool
    difficulty: str
    max_steps: int
    binding: dict[str, str]
    leaks: list[str] = field(default_factory=list)
    presentation: dict[str, Any] = field(default_factory=dict)  # guiforge.presentation
    phrasing: int = 0  # which of the card's instructions
    voice: str = "plain"  # the register guiforge.skills.voice said it in ("model": paraphrased)
    paraphrase: dict[str, Any] | None = None  # the task-author model's rewording, if one was asked for

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def world_context(world: World) -> dict[str, Any]:
    by_email = {c.email.lower(): c for c in world.contacts}
    facts = {f.key: f for f in world.facts}
    return {
        "world": world,
        "me": world.me,
        "facts": facts,
        "fact": lambda key: facts.get(key),
        "doc": lambda document_id: next((d for d in world.documents if d.document_id == document_id), None),
        "contact": lambda contact_id: next((c for c in world.contacts if c.contact_id == contact_id), None),
        "contact_by_email": lambda address: by_email.get(str(address).lower()),
        "docs_of_kind": lambda *kinds: [d for d in world.documents if d.kind in kinds],
        "attachment": lambda email, kind=None: next(
            (d for a in email.attachments for d in world.documents
             if d.document_id == a and (kind is None or d.kind == kind)), None),
        # what the preparers will write, per file: a dirty CSV's dirt, a script's bug and output
        "workspace_manifest": lambda spec: workspace_manifest(world, spec),
        "fx_rate": lambda src, dst: _fx_rate(world, src, dst),
        "round": round,
        "sum": sum,
        "len": len,
        "sorted": sorted,
    }


def workspace_manifest(world: World, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Path -> the preparers' ``FileInfo`` (as a dict) for a workspace spec, so a card can check
    exactly the dirt a CSV holds or what a fixed script prints."""
    # heavy: PIL, docx, lxml, openpyxl, pptx, reportlab, imported when this runs
    from guiforge.preparers.files import build_workspace

    return {name: info.model_dump() for name, info in build_workspace(world, spec).manifest.items()}


def _fx_rate(world: World, src: str, dst: str) -> float:
    # heavy: PIL, imported when this runs
    from guiforge.envs.tools.currency import world_rate
    from guiforge.envs.tools.registry import ToolError

    try:
        return world_rate(world, src, dst)
    except ToolError as exc:  # no rate for this pair in this world: the card does not bind
        raise ValueError(str(exc)) from None


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, list | tuple | dict) and not value)


def bindings(card: SkillCard, world: World) -> list[dict[str, Any]]:
    contexts = [world_context(world)]
    for name, param in card.params.items():
        out = []
        for ctx in contexts:
            try:
                if param.each is not None:
                    values = evaluate(param.each, ctx)
                    candidates = [] if _empty(values) else list(values)
                else:
                    value = evaluate(param.value, ctx)
                    candidates = [] if _empty(value) else [value]
                for value in candidates:
                    bound = {**ctx, name: value}
                    if param.where is None or evaluate(param.where, bound):
                        out.append(bound)
            except (TemplateError, TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as exc:
                raise BindingError(f"{card.id}: params.{name}: {type(exc).__name__}: {exc}") from exc
        contexts = out[:MAX_BINDINGS]
        if not contexts:
            return []
    return contexts


def _identity(value: Any) -> str:
    for attr in ("email_id", "document_id", "contact_id", "event_id", "chat_id", "note_id", "transaction_id", "key"):
        if hasattr(value, attr):
            return f"{attr}={getattr(value, attr)}"
    return str(value)[:200]


def binding_key(card: SkillCard, ctx: dict[str, Any]) -> dict[str, str]:
    return {name: _identity(ctx[name]) for name in card.params}


def targets(card: SkillCard) -> list[tuple[str, str | None]]:
    """Every (domain, variant) this card can run in."""
    out: list[tuple[str, str | None]] = []
    for domain in card.domains:
        kinds_variants = kind_of(domain).variants()  # a kind with variants (desktop's action sets)
        if None in kinds_variants:
            out.append((domain, None))
        else:
            out.extend((domain, v) for v in card.variants if v in kinds_variants)
    return out


def render(card: SkillCard, world: World, ctx: dict[str, Any], domain: str, variant: str | None,
           seed: int) -> TaskCandidate:
    key = binding_key(card, ctx)
    task_id = "tsk_" + fingerprint([world.world_id, card.id, card.version, key, domain, variant], 12)
    rng = random.Random(fingerprint([seed, task_id]))
    ctx = {**ctx, "domain": domain, "variant": variant}
    try:
        language, phrasing = pick_phrasing(card, world, rng)
        leaks = [str(render_value(t, ctx)) for t in card.leak_check]
        reasons = [render_text(t, ctx) for t in card.context] if language == "en" else []
        scenario = world.scenario if about_scenario(key) else ""
        instruction, voice = voiced(card, render_text(card.phrasing(phrasing)[1], ctx), leaks, rng, scenario,
                                    language, reasons)
        setup = _with_looks(render_value(card.setup, ctx), instruction, world, seed)
        rubric = [{**c.model_dump(), "check": render_value(c.check, ctx)} for c in card.rubric]
        rubric.append(side_damage_criterion(derive_allowances(rubric) + list(render_value(card.changes, ctx))))
        # a step whose ``when`` renders false is not needed by this instance (a 2nd attendee there is not)
        reference = [s for s in (render_value(s.model_dump(), ctx) for s in card.reference_for(domain, variant))
                     if s.pop("when", True)]
        answer = render_text(card.answer, ctx) if card.answer else None
    except (TemplateError, TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as exc:
        raise BindingError(f"{card.id}: rendering for {world.world_id}: {type(exc).__name__}: {exc}") from exc
    presentation = kind_of(domain).presentation(task_id, seed, variant)
    return TaskCandidate(
        task_id=task_id, world_id=world.world_id, skill_id=card.id, skill_version=card.version,
        domain=domain, variant=variant, apps=list(card.apps), instruction=instruction, setup=setup,
        rubric=rubric, reference=reference, answer=answer, feasible=card.feasible,
        difficulty=card.difficulty, max_steps=step_budget(card.max_steps, presentation), binding=key,
        leaks=leaks, presentation=presentation.as_dict(), phrasing=phrasing, voice=voice,
    )


def step_budget(card_steps: int, presentation: Presentation) -> int:
    """A task's step budget: the card's (what the work takes), the presentation's distractors,
    and room for one slip noticed and undone, which a person (and the scripted teacher) makes."""
    return card_steps + presentation.extra_steps() + RECOVERY_STEPS


def _with_looks(setup: Any, instruction: str, world: World, seed: int) -> Any:
    """The setup with each document image's look (clean, scan, photo) settled by what the
    instruction calls it, parameters included (guiforge.preparers.image_looks)."""
    if not isinstance(setup, dict):
        return setup
    # heavy: PIL, reportlab, imported when this runs
    from guiforge.preparers.image_looks import resolve_setup_looks

    return resolve_setup_looks(setup, instruction, world.world_id, seed)


def pick_phrasing(card: SkillCard, world: World, rng: random.Random) -> tuple[str, int]:
    """(language, phrasing index): in the persona's language where the card has phrasings in
    it (LOCAL_SHARE of the time: people also write to assistants in English), else English."""
    language = (world.me.language or world.me.locale.split("_")[0]).lower()
    local = card.localized.get(language) if language != "en" else None
    if local and rng.random() < LOCAL_SHARE:
        return language, card.phrasing_index(language, rng.randrange(len(local)))
    return "en", rng.randrange(len(card.instructions))


def about_scenario(binding: dict[str, str]) -> bool:
    """Whether the task is about something the world's scenario made (an id without the
    background's ``bg_`` prefix): only then is the scenario a reason the user would give."""
    return any(v.split("=", 1)[1][:3] != "bg_" for v in binding.values() if "=" in v)


def voiced(card: SkillCard, core: str, secrets: list[str], rng: random.Random, scenario: str,
           language: str = "en", reasons: list[str] | None = None) -> tuple[str, str]:  # fmt: skip
    """The phrasing in a user's voice (guiforge.skills.voice). The leak gate reads words
    loosely ("no" is in "know"), so a register that would make a clean phrasing look like it
    gives the answer away is drawn again, and after three tries the phrasing stays as it is."""
    if not card.voice:
        return core, "verbatim" if language == "en" else f"{language}:verbatim"

    clean = not leaks(core, secrets)
    reasons = [r for r in reasons or [] if r.strip() and not leaks(r, secrets)]
    for _ in range(3):
        text, voice = speak(core, rng, scenario, language, reasons)
        if not clean or not leaks(text, secrets):
            return text, voice
    return core, "plain" if language == "en" else f"{language}:plain"


def instantiate(card: SkillCard, world: World, seed: int) -> list[TaskCandidate]:
    """Up to ``card.max_per_world`` instances, each in one of the card's domains (rotating,
    so one binding does not become the same task in every domain)."""
    contexts = bindings(card, world)
    if not contexts:
        return []
    rng = random.Random(fingerprint([seed, world.world_id, card.id]))
    chosen = rng.sample(contexts, min(card.max_per_world, len(contexts)))
    where = targets(card)
    offset = rng.randrange(len(where))
    return [render(card, world, ctx, *where[(offset + i) % len(where)], seed) for i, ctx in enumerate(chosen)]


def select_balanced(candidates: list[TaskCandidate], per_world: int, seed: int | str) -> list[TaskCandidate]:
    """Pick ``per_world`` candidates, round-robin over domains, so a world's tasks spread
    across web, mobile, desktop and tools; within a domain, the action set (variant) used
    least so far comes first (desktop: GUI, terminal, hybrid), then unused skills. Give
    each world its own ``seed`` (e.g. "7:<world_id>"), or every world starts the
    round-robin at the same domain and that domain gets the odd task each time."""
    rng = random.Random(seed)
    by_domain: dict[str, list[TaskCandidate]] = {}
    for c in sorted(candidates, key=lambda c: c.task_id):
        by_domain.setdefault(c.domain, []).append(c)
    for group in by_domain.values():
        rng.shuffle(group)
    picked: list[TaskCandidate] = []
    used_skills: set[str] = set()
    used_variants: dict[tuple[str, str | None], int] = {}
    domains = sorted(by_domain)
    rng.shuffle(domains)
    while len(picked) < per_world and any(by_domain.values()):
        for domain in domains:
            group = by_domain[domain]
            if not group or len(picked) >= per_world:
                continue
            # min() keeps the first of equals, and the group is shuffled: ties break at random
            fresh = min(group, key=lambda c: (used_variants.get((domain, c.variant), 0),
                                              c.skill_id in used_skills))
            group.remove(fresh)
            picked.append(fresh)
            used_skills.add(fresh.skill_id)
            used_variants[(domain, fresh.variant)] = used_variants.get((domain, fresh.variant), 0) + 1
    return picked
