"""Does a world's mail read as if it came from templates, and do people write what fits who
they are? For ``guiforge stats --realism`` and the realism tests.

``body_template`` masks what a world fills in (its people's and organisations' names, the
city, numbers, dates, addresses, quoted text, any capitalised word inside a sentence); two
e-mails with one template differ only in such values. ``body_reuse`` counts, per template,
the share of worlds that hold it: a body in more than 5% of worlds is visibly a template.
``relationship_violations`` lists messages and calendar entries whose person does not fit the
pools' rules: a thread started by a relation the thread does not allow (a team lunch moved
by a non-colleague), an entry with someone of the wrong relation (a 1:1 with a friend)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import Any

from guiforge.worlds.life_pools import home_pools, work_pools
from guiforge.worlds.model import World
from guiforge.worlds.phrases import Piece

MAX_WORLD_SHARE = 0.05  # a body text in more worlds than this reads as a template
_QUOTED = re.compile(r"[\"“”«»'‘’][^\"“”«»'‘’\n]{1,80}[\"“”«»'‘’]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"[$€£¥₹]?\d[\d.,:/]*\d?%?")
_INNER_CAPS = re.compile(r"(?<=[^.?!:\n\s]) +[A-ZÀ-Ý][\w'’&-]*(?: +[A-ZÀ-Ý][\w'’&-]*)*")
_LITERAL = re.compile(r"\{[a-z_0-9]+\}|[^\w]")  # what a subject has besides its words
_RE_PREFIX = re.compile(r"^(re|fwd?|aw|wg|tr|sv):\s*", re.IGNORECASE)


def _names(w: World) -> re.Pattern | None:
    words = {w.me.city, w.me.employer, *w.me.name.split()}
    for c in w.contacts:
        words |= {c.name, c.organization, *c.name.split()}
    words = {x for x in words if x and len(x) > 1}
    if not words:
        return None
    return re.compile("|".join(re.escape(x) for x in sorted(words, key=len, reverse=True)))


def body_template(text: str, names: re.Pattern | None = None) -> str:
    """The body with the world's values masked (see the module docstring)."""
    if names is not None:
        text = names.sub("<name>", text)
    text = _QUOTED.sub("<q>", text)
    text = _EMAIL.sub("<e>", text)
    text = _NUMBER.sub("<n>", text)
    text = _INNER_CAPS.sub(" <name>", text)
    return " ".join(text.split())


def body_reuse(worlds: Iterable[World], top: int = 5) -> dict[str, Any]:
    """Over the worlds' e-mails: templates, the largest share of worlds one template is in,
    how many templates (and e-mails) are in more than 5% of worlds, and the most shared."""
    in_worlds: dict[str, set[str]] = defaultdict(set)
    per_world: list[tuple[str, list[str]]] = []
    for w in worlds:
        names = _names(w)
        templates = [body_template(e.body, names) for e in w.emails]
        per_world.append((w.world_id, templates))
        for t in templates:
            in_worlds[t].add(w.world_id)
    n = len(per_world)
    if not n:
        return {}
    emails = sum(len(ts) for _, ts in per_world)
    share = {t: len(ws) / n for t, ws in in_worlds.items()}
    over = {t for t, s in share.items() if s > MAX_WORLD_SHARE}
    ranked = sorted(share.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {"worlds": n, "emails": emails, "templates": len(share),
            "max_world_share": round(max(share.values(), default=0.0), 3),
            "templates_over_5pct": len(over),
            "emails_in_shared_templates": round(sum(t in over for _, ts in per_world for t in ts) / emails, 3)
            if emails else 0.0,
            "most_shared": [{"world_share": round(s, 3), "template": t[:160]} for t, s in ranked]}  # fmt: skip


# -- who may write what -------------------------------------------------------------------
def _pattern(text: str) -> re.Pattern:
    """A subject or title with placeholders as a regex that matches any filling."""
    parts = re.split(r"\{[a-z_0-9]+\}", text)
    return re.compile("^" + ".+?".join(re.escape(p) for p in parts) + "$", re.IGNORECASE)


def _alternatives(piece: Piece) -> list[str]:
    if isinstance(piece, str):
        return [piece]
    return [s for p in piece for s in _alternatives(p)]


@cache
def _rules() -> tuple[list[tuple[re.Pattern, frozenset[str], frozenset[str]]], list[tuple[re.Pattern, str]]]:
    """(subject pattern, relations, roles) for every pool thread; (event title pattern, the
    relation or role its attendee must have) for every pool entry with a person."""
    w, h = work_pools(), home_pools()
    threads = [*w.shared, *(t for g in w.groups.values() for t in g.threads), *h.family, *h.friends,
               *h.neighbours, *(t for p in (h.partner, h.kids, h.flatmates, h.parents_home, h.pet) for t in p.threads),
               *(t for x in h.hobbies.values() for t in x.threads)]  # fmt: skip
    subjects = [(_pattern(s), frozenset(t.from_), frozenset(t.roles)) for t in threads
                for s in _alternatives(t.subject) if len(_LITERAL.sub("", s)) >= 5]  # fmt: skip
    events = [*(e for g in w.groups.values() for e in g.events), *h.events,
              *(e for p in (h.partner, h.kids, h.flatmates, h.parents_home, h.pet) for e in p.events),
              *(e for x in h.hobbies.values() for e in x.events)]  # fmt: skip
    return subjects, [(_pattern(e.title), e.with_) for e in events if e.with_]


def relationship_violations(w: World) -> list[str]:
    """Background messages and entries whose person does not fit (one line each)."""
    subjects, events = _rules()
    by_mail = {c.email.lower(): c for c in w.contacts}
    by_id = {c.contact_id: c for c in w.contacts}
    out = []
    for e in w.emails:
        if not e.email_id.startswith("bg_"):
            continue  # the scenario's people were cast for their parts
        other = e.to[0] if e.folder == "sent" else e.sender
        c = by_mail.get(other.lower())
        subject = _RE_PREFIX.sub("", e.subject)
        rules = [(rel, roles) for p, rel, roles in subjects if p.match(subject)]
        if c is None or c.relation == "newsletter" or not rules:
            continue  # organisations' mail is not a thread
        if not any(c.relation in rel and (not roles or c.role in roles) for rel, roles in rules):
            out.append(f"e-mail {e.email_id} {subject!r} with {c.name} ({c.relation}, {c.role})")
    for ev in w.events:
        if not ev.event_id.startswith("bg_"):
            continue
        wanted = [who for p, who in events if p.match(ev.title)]
        people = [by_id[a] for a in ev.attendees if a in by_id]
        if wanted and people and not any(c.relation == x or c.role == x for c in people for x in wanted):
            out.append(f"event {ev.event_id} {ev.title!r} with {people[0].name} ({people[0].relation})")
    return out
