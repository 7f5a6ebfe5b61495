"""Mail on a schedule: the newsletters everyone gets (the city's paper, a shop, a streaming
service, an airline, the library, a parcel service, the bank) and the senders the persona's
own life brings (their work's system, the children's school, the vet, their clubs). Every
issue is composed anew: an opening, a few of the sender's items, each filled with its own
facts (a street of the city, a fare to a real city, a book due on a date), a closing; so no
two worlds' newsletters read alike. Used by ``background.with_background``."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.background_mail import HISTORY_DAYS, email, slots
from guiforge.worlds.life_pools import Sender, SenderItem, everyone_senders, home_pools, work_pools
from guiforge.worlds.phrases import Piece, compose

if TYPE_CHECKING:
    from guiforge.worlds.life import Life


def sender_specs(life: Life) -> list[tuple[Sender, str, str]]:
    """(sender, its name, its club or "") for every sender this persona's life has."""
    prof, home = life.profile, home_pools()
    out = [(s, _name(s.name, life), "") for s in everyone_senders()]
    group = work_pools().groups[prof.group]
    if group.sender is not None and (life.employed or group.staff == "client"):
        out.append((group.sender, _name(group.sender.name, life), ""))
    if life.kids:
        out.extend((s, _name(s.name, life), "") for s in home.kids.senders)
    if prof.pet:
        out.extend((s, _name(s.name, life), "") for s in home.pet.senders)
    for hobby in prof.hobbies:
        h = home.hobbies[hobby]
        if h.sender is not None:
            club = _name(h.club, life)
            out.append((h.sender.model_copy(update={"name": club}), club, club))
    taken = {c.name for c in life.world.contacts}
    return [x for x in out if x[1] not in taken]


def _name(fmt: str, life: Life) -> str:
    w = life.world
    values = {"city": w.me.city, "bank": "Northstar", "home": w.me.city, "employer": w.me.employer,
              "school": life.school, "pet": (life.profile.pet or ("", ""))[1], "club": ""}  # fmt: skip
    if "{brand}" in fmt:
        values["brand"] = life.brand()
    return fmt.format(**values).strip()


def add_newsletters(life: Life) -> None:
    w, rng = life.world, life.rng
    specs = {name: (spec, club) for spec, name, club in life.sender_specs}  # as the contacts were named
    first = w.base_date - timedelta(days=HISTORY_DAYS)
    for c in [c for c in life.contacts if c.relation == "newsletter"]:
        if c.name not in specs:
            continue
        spec, club = specs[c.name]
        day = w.base_date - timedelta(days=rng.randint(0, spec.every - 1))
        while day > first:
            at = life.moment(day, (5, 20))
            values = slots(life, day, c, club=club)
            subject, body = _issue(life, spec, values)
            email(life, c.email, w.me.email, at, subject, body, read=rng.random() < 0.5)
            day -= timedelta(days=spec.every + rng.randint(-1, 1))


def paragraphs(piece: Piece) -> list[Piece]:
    """A piece as paragraphs: a list of alternative-lists is one paragraph per list."""
    if isinstance(piece, list) and piece and all(isinstance(p, list) for p in piece):
        return piece
    return [piece]


def _issue(life: Life, spec: Sender, values) -> tuple[str, str]:
    """(subject, body): an opening, a few items each with values of its own (two offers are
    two products), a closing. An item with a subject leads: the e-mail is about it."""
    rng = life.rng
    lo, hi = spec.pick
    picked = rng.sample(spec.items, min(len(spec.items), rng.randint(lo, hi)))
    lead = next((i for i in picked if isinstance(i, SenderItem)), None)
    if lead is not None:
        picked = [lead, *(i for i in picked if i is not lead)]
    subject = compose(lead.subject if lead else spec.subjects, rng, values)
    items = []
    for item in picked:
        own = values if item is lead else values.fresh("me", "me_full", "name", "city", "employer", "club", "dates")
        items.append(compose(item.text if isinstance(item, SenderItem) else item, rng, own))
    block = "\n".join(f"- {i}" for i in items) if spec.bullets else " ".join(items)
    parts = [*(compose(p, rng, values) for p in paragraphs(spec.open)), block,
             *(compose(p, rng, values) for p in paragraphs(spec.close))]  # fmt: skip
    return subject, "\n\n".join(p for p in parts if p)
