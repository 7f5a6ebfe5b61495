"""Everyday life around a scenario, drawn from the persona: the people of their job (colleagues,
an owner's employees, a freelancer's clients), their household (partner, children, flatmates,
a pet), family, friends, neighbours and the clubs of their hobbies; what those people write
and arrange; newsletters and the systems of their work; months of appointments; the pay their
occupation earns in their country and hundreds of card payments. ``with_background(world)``
adds them to any world (template- or LLM-built) so that tasks have to search, filter, scroll
and tell similar things apart.

Everything is drawn from a stream seeded by the world id (the household from the persona id:
one person, one life); nothing the scenario wrote is changed, and the additions never collide
with it: new people have names and first names of their own, new events have titles the
scenario does not use, and background payments use categories no scenario fact sums over."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import yaml

from guiforge.worlds.background_calendar import add_appointments
from guiforge.worlds.background_docs import add_workbooks
from guiforge.worlds.background_money import add_money
from guiforge.worlds.background_news import add_newsletters, sender_specs
from guiforge.worlds.background_threads import add_rescheduled_meeting, add_threads
from guiforge.worlds.formats import company_domain, slug, unique_email
from guiforge.worlds.life import Life
from guiforge.worlds.life_pools import home_pools, work_pools
from guiforge.worlds.model import Contact, World
from guiforge.worlds.places import country_code
from guiforge.worlds.profile import profile_of
from guiforge.worlds.runtime import shared_faker, stable_hash
from guiforge.worlds.seeds import data_dir, locale_info

FAMILY_LAST_NAME = {"partner": 0.5, "mother": 1.0, "father": 1.0, "sister": 0.8, "brother": 0.8,
                    "son": 1.0, "daughter": 1.0}  # fmt: skip


@cache
def vocabulary() -> dict[str, Any]:
    with open(data_dir() / "background.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def with_background(world: World, contacts: int = 44) -> World:
    """``world`` plus its everyday life (deterministic in the world id)."""
    rng = random.Random(int.from_bytes(stable_hash("guiforge-background", world.world_id)[:8], "big"))
    vocab = vocabulary()
    code = world.me.country_code or _country_code(world.me.country)
    life = Life(world, rng, vocab, locale_info(world.me.locale).money_scale, code, profile_of(world.me))
    life.brands = rng.sample(vocab["brands"], len(vocab["brands"]))
    life.loc = locale_info(world.me.locale)
    life.fk = shared_faker(world.me.locale)
    life.fk.seed_instance(rng.getrandbits(64))
    _people(life, contacts)
    add_money(life)
    add_newsletters(life)
    add_threads(life)
    add_rescheduled_meeting(life)
    add_appointments(life)
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
class _People:
    """Adds people with names, first names and addresses no one in the world has yet."""

    def __init__(self, life: Life):
        w = life.world
        self.life = life
        self.fk = life.fk
        self.taken_names = {c.name.lower() for c in w.contacts} | {w.me.name.lower()}
        self.taken_first = {c.name.split()[0].lower() for c in w.contacts} | {w.me.name.split()[0].lower()}
        self.taken_mail = {c.email.lower() for c in w.contacts} | {w.me.email.lower()}
        self.my_domain = w.me.email.split("@", 1)[1]

    def first_name(self, wanted: str = "") -> str:
        """``wanted`` if no one has that first name yet, else a fresh one (kept as taken)."""
        first = wanted
        for _ in range(30):
            if first and first.split()[0].lower() not in self.taken_first:
                break
            first = self.fk.first_name()
        self.taken_first.add(first.split()[0].lower())
        return first

    def add(self, role: str, relation: str, org: str = "", last: str = "", free: bool = False,
            first: str = "") -> Contact:  # fmt: skip
        w = self.life.world
        for _ in range(30):
            first_try = first or self.fk.first_name()
            surname = last or self.fk.last_name()
            name = f"{first_try} {surname}"
            # a compound first name ("José Antonio") is known by its first part
            if name.lower() not in self.taken_names and first_try.split()[0].lower() not in self.taken_first:
                break
            first = ""
        self.taken_names.add(name.lower())
        self.taken_first.add(first_try.split()[0].lower())
        if free or not org:
            domain = self.fk.free_email_domain()
        elif org == w.me.employer:
            domain = self.my_domain
        else:
            domain = company_domain(org, locale_info(w.me.locale).tld)
        email = unique_email(f"{slug(first_try, '.')}.{slug(surname, '.')}", domain, self.taken_mail)
        return _add(self.life, role, relation, name, org, email, self.fk.phone_number())


def _people(life: Life, total: int) -> None:
    w, rng, prof = life.world, life.rng, life.profile
    people = _People(life)
    group = work_pools().groups[prof.group]
    last_me = w.me.name.split()[-1]
    # work: colleagues, an owner's employees, or a freelancer's clients
    if not life.employed or group.staff == "client":
        roles = group.roles if group.staff == "client" else ["client"]
        for role in rng.sample(roles * 2, rng.randint(6, 9)):
            people.add(role, "client", people.fk.company())
    else:
        for role in rng.sample(group.roles, min(len(group.roles), rng.randint(7, 9))) + rng.choices(group.roles, k=2):
            people.add(role, group.staff, w.me.employer)
    # household and family
    for m in prof.members:
        if m.role == "flatmate":
            people.add("flatmate", "friend", free=True, first=m.first)
        elif m.role == "partner":
            people.add("partner", "family", free=True, first=m.first,
                       last=last_me if rng.random() < FAMILY_LAST_NAME["partner"] else "")
    life.kids = [people.first_name(m.first) for m in prof.kids]
    family = []
    if w.me.age < 68:
        family += rng.sample(["mother", "father"], rng.randint(1, 2))
    family += rng.choices(["sister", "brother"], k=rng.randint(1, 2))
    if w.me.age >= 48 and not prof.kids:
        family += rng.choices(["son", "daughter"], k=rng.randint(1, 2))
    for role in family:
        people.add(role, "family", free=True, last=last_me if rng.random() < FAMILY_LAST_NAME[role] else "")
    if life.kids:
        life.school = rng.choice([f"{w.me.city} Primary School", f"{people.fk.last_name()} Primary School",
                                  f"St {people.fk.last_name()}'s School", f"{w.me.city} Community School"])
        people.add("class teacher", "school", life.school)
        people.add("parent", "friend", free=True)
    # hobbies and neighbours
    for hobby in prof.hobbies:
        for _ in range(rng.randint(1, 2)):
            people.add(home_pools().hobbies[hobby].member, "friend", free=True)
    for _ in range(rng.randint(1, 2)):
        people.add("neighbour", "neighbour", free=True)
    # the people who bill and serve the household
    for spec in life.vocab["vendor_roles"]:
        if spec["role"] == "landlord" and not prof.renting:
            continue
        people.add(spec["role"], "vendor", _fill(spec["org"], life, last=people.fk.last_name()))
    if prof.pet:
        people.add("vet", "vendor", f"{w.me.city} Vet Clinic")
    _senders(life, people)
    while len(life.contacts) < total:
        people.add("friend", "friend", free=True)


def _senders(life: Life, people: _People) -> None:
    """Organisations that mail on a schedule, one address each: the newsletters everyone
    gets, the system of the persona's work, the school, the vet, the hobbies' clubs."""
    tld = locale_info(life.world.me.locale).tld
    life.sender_specs = sender_specs(life)
    for spec, name, _club in life.sender_specs:
        email = unique_email(spec.local, company_domain(name, tld), people.taken_mail)
        _add(life, spec.kind, "newsletter", name, name, email, people.fk.phone_number())


def _add(life: Life, role: str, relation: str, name: str, org: str, email: str, phone: str) -> Contact:
    c = Contact(contact_id=life.next_id("c"), name=name, email=email, phone=phone, role=role,
                organization=org, relation=relation)  # fmt: skip
    life.contacts.append(c)
    life.roles.setdefault(relation, []).append(c)
    life.roles.setdefault(role, []).append(c)
    return c


def _fill(fmt: str, life: Life, **extra: str) -> str:
    return fmt.format(city=life.world.me.city, brand=life.brand(), bank="Northstar",
                      home=life.world.me.city, employer=life.world.me.employer, **extra).strip()  # fmt: skip
