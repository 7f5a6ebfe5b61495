"""Everyday life around a scenario: the dozens of people, the newsletters, notifications and
personal threads, the months of appointments and the hundreds of card payments that a real
person's apps hold. ``with_background(world)`` adds them to any world (template- or
LLM-built) so that tasks have to search, filter, scroll and tell similar things apart.

Everything is drawn from a stream seeded by the world id; nothing the scenario wrote is
changed, and the additions never collide with it: new people have names and first names of
their own, new events have titles the scenario does not use, and background payments use
categories no scenario fact sums over."""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta
from functools import cache
from typing import Any

import yaml

from guiforge.worlds.background_docs import add_workbooks
from guiforge.worlds.background_mail import add_mail
from guiforge.worlds.background_money import add_money
from guiforge.worlds.formats import company_domain, slug, unique_email
from guiforge.worlds.life import Life
from guiforge.worlds.model import Contact, Event, World
from guiforge.worlds.places import country_code
from guiforge.worlds.runtime import shared_faker, stable_hash
from guiforge.worlds.seeds import data_dir, locale_info

SELF_EMPLOYED = "Self-employed"


@cache
def vocabulary() -> dict[str, Any]:
    with open(data_dir() / "background.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def with_background(world: World, contacts: int = 44) -> World:
    """``world`` plus its everyday life (deterministic in the world id)."""
    rng = random.Random(int.from_bytes(stable_hash("guiforge-background", world.world_id)[:8], "big"))
    vocab = vocabulary()
    code = world.me.country_code or _country_code(world.me.country)
    life = Life(world, rng, vocab, locale_info(world.me.locale).money_scale, code)
    life.brands = rng.sample(vocab["brands"], len(vocab["brands"]))
    _people(life, contacts)
    add_money(life)
    add_mail(life)
    _appointments(life)
    add_workbooks(life)
    return world.model_copy(update={
        "contacts": [*world.contacts, *life.contacts],
        "documents": [*world.documents, *life.documents],
        "events": sorted([*world.events, *life.events], key=lambda e: (e.start, e.event_id)),
        "emails": sorted([*world.emails, *life.emails], key=lambda e: (e.sent_at, e.email_id)),
        "transactions": sorted([*world.transactions, *life.transactions],
                               key=lambda t: (t.booked_on, t.transaction_id)),
    })  # fmt: skip


def _country_code(name: str) -> str:
    return country_code(name)


# -- people -------------------------------------------------------------------------------
def _people(life: Life, total: int) -> None:
    w, rng, vocab = life.world, life.rng, life.vocab
    fk = shared_faker(w.me.locale)
    fk.seed_instance(rng.getrandbits(64))
    taken_names = {c.name.lower() for c in w.contacts} | {w.me.name.lower()}
    taken_first = {c.name.split()[0].lower() for c in w.contacts} | {w.me.name.split()[0].lower()}
    taken_mail = {c.email.lower() for c in w.contacts} | {w.me.email.lower()}
    employed = w.me.employer != SELF_EMPLOYED
    my_domain = w.me.email.split("@", 1)[1]
    last_me = w.me.name.split()[-1]

    def person(role: str, relation: str, org: str = "", last: str = "", free: bool = False):
        for _ in range(30):
            first = fk.first_name()
            surname = last or fk.last_name()
            name = f"{first} {surname}"
            if name.lower() not in taken_names and first.lower() not in taken_first:
                break
        taken_names.add(name.lower())
        taken_first.add(first.lower())
        if free or not org:
            domain = fk.free_email_domain()
        elif org == w.me.employer:
            domain = my_domain
        else:
            domain = company_domain(org, locale_info(w.me.locale).tld)
        _add(life, role, relation, name, org, unique_email(f"{slug(first, '.')}.{slug(surname, '.')}", domain, taken_mail),
             fk.phone_number())  # fmt: skip

    n_colleagues = rng.randint(8, 12) if employed else 0
    for role in rng.choices(vocab["colleague_roles"], k=n_colleagues):
        person(role, "colleague", w.me.employer)
    if not employed:  # clients and peers instead of colleagues
        for _ in range(rng.randint(6, 9)):
            person("client", "client", fk.company())
    for _ in range(rng.randint(3, 5)):
        person("family", "family", last=last_me if rng.random() < 0.6 else "", free=True)
    for spec in vocab["vendor_roles"]:
        org = _fill(spec["org"], life, last=fk.last_name())
        person(spec["role"], "vendor", org)
    _senders(life, fk, taken_mail)
    while len(life.contacts) < total:
        person("friend", "friend", free=True)


def _senders(life: Life, fk, taken_mail: set[str]) -> None:
    """Newsletter and notification senders: organisations, one address each."""
    tld = locale_info(life.world.me.locale).tld
    for spec in life.vocab["senders"]:
        name = _fill(spec["name"], life, last=fk.last_name())
        email = unique_email(spec["local"], company_domain(name, tld), taken_mail)
        _add(life, spec["kind"], "newsletter", name, name, email, fk.phone_number())


def _add(life: Life, role: str, relation: str, name: str, org: str, email: str, phone: str) -> None:
    c = Contact(contact_id=life.next_id("c"), name=name, email=email, phone=phone, role=role,
                organization=org, relation=relation)  # fmt: skip
    life.contacts.append(c)
    life.roles.setdefault(relation, []).append(c)
    life.roles.setdefault(role, []).append(c)


def _fill(fmt: str, life: Life, **extra: str) -> str:
    return fmt.format(city=life.world.me.city, brand=life.brand(), bank="Northstar",
                      home=life.world.me.city, **extra).strip()  # fmt: skip


# -- calendar -----------------------------------------------------------------------------
def _appointments(life: Life) -> None:
    """Months of calendar: weekly and fortnightly slots, monthly evenings and one-offs, from
    two months back to two months ahead, with titles the scenario does not use."""
    w, rng = life.world, life.rng
    used = {e.title.lower() for e in w.events}
    employed = w.me.employer != SELF_EMPLOYED
    for spec in life.vocab["appointments"]:
        if spec.get("employed") and not employed:
            continue
        who = None
        if spec.get("with"):
            pool = life.roles.get(spec["with"]) or []
            if not pool:
                continue
            who = rng.choice(pool)
        title = spec["title"].format(**{spec.get("with", "x"): who.name.split()[0] if who else ""})
        if title.lower() in used:
            continue
        used.add(title.lower())
        step = {"weekly": 7, "biweekly": 14, "monthly": 28}.get(spec["repeat"])
        start = w.base_date - timedelta(days=rng.randint(40, 50))
        days = [start + timedelta(days=k * step) for k in range(0, 95 // step)] if step else [
            w.base_date + timedelta(days=rng.randint(-40, 50))]
        hour, minute = rng.randrange(*spec["hours"]), rng.choice([0, 15, 30, 45])
        for d in days:
            if d.weekday() >= 5 and (spec.get("employed") or step is None and spec.get("with") == "colleague"):
                d += timedelta(days=7 - d.weekday())
            begin = datetime.combine(d, time(hour, minute))
            life.events.append(Event(
                event_id=life.next_id("ev"), title=title, start=begin,
                end=begin + timedelta(minutes=spec["minutes"]),
                location=_location(life, spec["title"]), attendees=[who.contact_id] if who else []))  # fmt: skip


def _location(life: Life, title: str) -> str:
    city = life.world.me.city
    if "1:1" in title or "Team" in title:
        return f"{life.world.me.employer}, {city}"
    if "Dentist" in title:
        c = (life.roles.get("dentist") or [None])[0]
        return f"{c.organization}, {city}" if c else city
    return city
