"""Months of calendar from the persona's life: their work's recurring entries (a teacher's
staff meeting, a nurse's shifts, a bakery owner's supplier delivery), the household's (the
children's swimming lesson, a flat meeting), their hobbies' (choir rehearsal, the Sunday long
run), and one-offs (dentist, haircut, a car service if they have a car), from two months back
to two months ahead, with titles the scenario does not use. Used by ``background.with_background``."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.background_mail import first_name, slots
from guiforge.worlds.life_pools import EventSpec, home_pools, work_pools
from guiforge.worlds.model import Contact, Event
from guiforge.worlds.phrases import compose

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

STEP = {"weekly": 7, "biweekly": 14, "monthly": 28}


def life_events(life: Life) -> list[tuple[EventSpec, str]]:
    """(spec, club name or "") for every calendar entry this persona's life has."""
    prof, home = life.profile, home_pools()
    out: list[tuple[EventSpec, str]] = []
    if life.employed or work_pools().groups[prof.group].staff == "client":
        out += [(e, "") for e in work_pools().groups[prof.group].events]
    parts = {"partner": prof.partner is not None, "kids": bool(life.kids), "flatmates": prof.household == "flatshare",
             "parents_home": prof.household == "with_parents", "pet": prof.pet is not None}  # fmt: skip
    for part, has in parts.items():
        if has:
            out += [(e, "") for e in getattr(home, part).events]
    for hobby in prof.hobbies:
        club = home.hobbies[hobby].club.format(city=life.world.me.city)
        out += [(e, club) for e in home.hobbies[hobby].events]
    return out + [(e, "") for e in home.events]


def _needs_met(life: Life, spec: EventSpec) -> bool:
    prof = life.profile
    return {"": True, "car": prof.car, "kids": bool(life.kids), "partner": prof.partner is not None,
            "pet": prof.pet is not None, "employed": life.employed}[spec.needs]  # fmt: skip


def _attendee(life: Life, spec: EventSpec) -> Contact | None:
    pool = [c for c in life.contacts if spec.with_ in (c.relation, c.role)]
    return life.rng.choice(pool) if pool else None


def add_appointments(life: Life) -> None:
    w, rng = life.world, life.rng
    used = {e.title.lower() for e in w.events} | {e.title.lower() for e in life.events}
    for spec, club in life_events(life):
        if not _needs_met(life, spec):
            continue
        who = _attendee(life, spec) if spec.with_ else None
        if spec.with_ and who is None:
            continue
        values = slots(life, w.base_date, who, club=club)
        if who is not None:
            values["first"] = first_name(who.name)
        title = compose(spec.title, rng, values)
        if title.lower() in used:
            continue
        used.add(title.lower())
        step = STEP.get(spec.repeat)
        start = w.base_date - timedelta(days=rng.randint(40, 50))
        days = ([start + timedelta(days=k * step) for k in range(0, 95 // step)] if step
                else [w.base_date + timedelta(days=rng.randint(-40, 50))])  # fmt: skip
        hour, minute = rng.randrange(*spec.hours), rng.choice([0, 15, 30, 45])
        where = compose(spec.where, rng, values) if spec.where else club or w.me.city
        if who is not None and who.organization and who.relation in ("colleague", "vendor", "client"):
            where = f"{who.organization}, {w.me.city}"
        for d in days:
            if spec.workday and d.weekday() >= 5:
                d += timedelta(days=7 - d.weekday())
            if spec.weekend and d.weekday() < 5:
                d += timedelta(days=5 - d.weekday() + rng.randint(0, 1))
            begin = datetime.combine(d, time(hour, minute))
            life.events.append(Event(event_id=life.next_id("ev"), title=title, start=begin,
                                     end=begin + timedelta(minutes=spec.minutes), location=where,
                                     attendees=[who.contact_id] if who else []))  # fmt: skip
