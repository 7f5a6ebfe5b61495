"""New task candidates aimed at diagnosed weaknesses.

Knowledge-level standouts get most of a round's budget: the same skills on other worlds and
bindings (a weak skill, small targets, long tasks, non-ASCII text: then only instances that
type non-ASCII text), or sibling cards that exercise the weak app, domain or action type.
The rest goes to task-level diagnoses: the failed task's skill elsewhere. Every candidate
names its parent task, its round and the diagnosis it answers.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from guiforge.lake.fingerprint import fingerprint
from guiforge.skills.card import SkillCard
from guiforge.skills.instantiate import BindingError, TaskCandidate, bindings, render, targets

# reference verbs an action type is written with in the cards
ACTION_VERBS = {"click": {"click", "select", "open"}, "tap": {"click", "select", "open"}, "type": {"type"},
                "scroll": {"scroll"}, "swipe": {"scroll"}, "key": {"key"}, "hotkey": {"key"}, "bash": {"bash"},
                "call_tool": {"call_tool"}, "answer": {"answer"}, "double_click": {"double_click"},
                "right_click": {"right_click"}}


NOT_WEAKNESSES = ("rates", "never_solved")  # knowledge rows that name no weakness to aim at


@dataclass
class Aim:
    """One diagnosis turned into a request: which cards, which filter, whose child."""

    diagnosis_id: str
    parent_task_id: str | None
    cards: list[str]
    budget: int
    weakness: str
    parents: tuple[str, ...] = ()  # the failed tasks behind a standout, to pick a parent of the same skill

    def parent_for(self, skill_id: str, tasks: dict[str, dict]) -> str | None:
        same = [t for t in self.parents if tasks.get(t, {}).get("skill_id") == skill_id]
        return (same or list(self.parents) or [self.parent_task_id])[0]


def _verbs(card: SkillCard) -> set[str]:
    steps = card.reference if isinstance(card.reference, list) else [s for v in card.reference.values() for s in v]
    return {s.do for s in steps}


def cards_for(proposal: dict, cards: dict[str, SkillCard]) -> list[str]:
    if proposal.get("strategy") == "same_skill":
        wanted = proposal.get("skills") or [proposal.get("skill_id")]
        return [c for c in wanted if c in cards]
    if "app" in proposal:
        return sorted(c for c, card in cards.items() if proposal["app"] in card.apps)
    if "domain" in proposal:
        return sorted(c for c, card in cards.items() if proposal["domain"] in card.domains)
    if "action_type" in proposal:
        verbs = ACTION_VERBS.get(proposal["action_type"], {proposal["action_type"]})
        return sorted(c for c, card in cards.items() if _verbs(card) & verbs)
    return []


def types_non_ascii(c: TaskCandidate) -> bool:
    return any(s.get("do") == "type" and not str(s.get("text") or "").isascii() for s in c.reference)


def fits(c: TaskCandidate, weakness: str, domain: str | None) -> bool:
    if weakness == "text:non_ascii" and not types_non_ascii(c):
        return False
    return domain is None or c.domain == domain


def pool(card: SkillCard, worlds: dict, seed: int, limit: int = 16) -> list[TaskCandidate]:
    """Every instance of ``card`` over the worlds (up to ``limit`` bindings per world), in
    every domain/variant it runs in."""
    out = []
    where = targets(card)
    for world_id in sorted(worlds):
        try:
            contexts = bindings(card, worlds[world_id])[:limit]
            for i, ctx in enumerate(contexts):
                out.append(render(card, worlds[world_id], ctx, *where[i % len(where)], seed))
        except BindingError:
            continue
    return out


def aims(diagnoses: list[dict], cards: dict[str, SkillCard], tasks: dict[str, dict], budget: int,
         task_share: float) -> list[Aim]:
    """Split a round's budget: standouts by their excess failures, then failed tasks."""
    standouts = [d for d in diagnoses if d["level"] == "knowledge" and d["failure_mode"] not in NOT_WEAKNESSES]
    per_task = [d for d in diagnoses if d["level"] in ("action", "trajectory") and d["task_id"] in tasks]
    task_budget = round(budget * task_share) if standouts else budget
    knowledge_budget = budget - task_budget if per_task else budget
    out: list[Aim] = []
    if standouts:
        weights = []
        for d in standouts:
            e = json.loads(d["evidence_json"])
            weights.append(max(e["failures"] - e["rest_rate"] * e["n"], 1.0))
        total = sum(weights)
        for d, w in zip(standouts, weights, strict=True):
            proposal = json.loads(d["proposal_json"])
            evidence = json.loads(d["evidence_json"])
            parents = [t for t in evidence.get("tasks", []) if t in tasks]
            out.append(Aim(d["diagnosis_id"], parents[0] if parents else None, cards_for(proposal, cards),
                           max(1, round(knowledge_budget * w / total)), d["failure_mode"], tuple(parents)))
    seen: set[str] = set()
    for d in per_task:
        if len(seen) >= task_budget:
            break
        if d["task_id"] in seen:
            continue
        seen.add(d["task_id"])
        task = tasks[d["task_id"]]
        out.append(Aim(d["diagnosis_id"], d["task_id"], [task["skill_id"]] if task["skill_id"] in cards else [], 1,
                       f"skill:{task['skill_id']}"))
    return out


def resynthesize(aim_list: list[Aim], cards: dict[str, SkillCard], worlds: dict, tasks: dict[str, dict],
                 seed: int, round_: int) -> tuple[list[tuple[TaskCandidate, Aim]], list[tuple[Aim, str]]]:
    """(candidate, aim) pairs, new task ids, each base instance used once; and the aims
    that found nothing, with why."""
    taken = {t["task_id"] for t in tasks.values()} | {_base(t) for t in tasks.values()}
    pools: dict[str, list[TaskCandidate]] = {}
    chosen: list[tuple[TaskCandidate, Aim]] = []
    unmet: list[tuple[Aim, str]] = []
    for aim in aim_list:
        if not aim.cards:
            unmet.append((aim, "no skill card exercises this weakness"))
            continue
        domain = aim.weakness.split(":", 1)[1] if aim.weakness.startswith("domain:") else None
        options = []
        for card_id in aim.cards:
            if card_id not in pools:
                pools[card_id] = pool(cards[card_id], worlds, seed)
            options.extend(c for c in pools[card_id] if c.task_id not in taken and fits(c, aim.weakness, domain))
        rng = random.Random(fingerprint([seed, round_, aim.diagnosis_id]))
        rng.shuffle(options)
        # spread over skills and worlds first: round-robin by (skill, world)
        options = _spread(options)
        picked = 0
        for c in options:
            if picked >= aim.budget:
                break
            if c.task_id in taken:
                continue
            taken.add(c.task_id)
            chosen.append((c, aim))
            picked += 1
        if picked == 0:
            unmet.append((aim, "every instance of its cards is already a task"))
    return chosen, unmet


def _spread(options: list[TaskCandidate]) -> list[TaskCandidate]:
    """Round-robin over skills: each skill's first instance, then each one's second, ..."""
    seen: dict[str, int] = {}
    ranked = []
    for c in options:
        ranked.append((seen.get(c.skill_id, 0), len(ranked), c))
        seen[c.skill_id] = seen.get(c.skill_id, 0) + 1
    return [c for _, _, c in sorted(ranked, key=lambda r: r[:2])]


def _base(task: dict[str, Any]) -> str:
    """The base instance id a resynthesized task was made from (its own id otherwise)."""
    gate = json.loads(task.get("binding_json") or "{}")
    return gate.get("base_task_id") or task["task_id"]


def new_task_id(base_id: str, round_: int) -> str:
    return "tsk_" + fingerprint([base_id, "round", round_], 12)
