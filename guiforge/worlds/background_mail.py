"""Background mail: what the persona's people, clubs, work systems and newsletters write. This
module holds what they share: the values a message's placeholders take (``slots``: the day a
dinner is on, a restaurant the persona really pays at, the child's name), a letter in the
register of a relation (greeting, aside, body, sign-off), and the mailbox rules (nothing
arrives after today). Used by background_news, background_threads and background_money."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.formats import MONTHS, WEEKDAYS, format_date, format_money
from guiforge.worlds.life_pools import Register, home_pools, work_pools
from guiforge.worlds.model import Contact, Email
from guiforge.worlds.phrases import Piece, Slots, compose
from guiforge.worlds.runtime import workday

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

HISTORY_DAYS = 90
WORK_RELATIONS = frozenset({"colleague", "employee", "client", "school"})
# typical daily mean temperature (°C) per month: a temperate northern city; the south is six
# months on; the tropics have their own year (India's pre-monsoon heat, Brazil's mild winter)
NORTH_C = (2, 3, 7, 11, 15, 19, 21, 21, 17, 12, 7, 3)
SOUTHERN = frozenset({"AU", "BR", "AR", "CL", "ZA", "NZ"})
TROPICAL = {"IN": (19, 22, 27, 31, 33, 31, 29, 28, 28, 27, 23, 20), "BR": (26, 26, 25, 24, 22, 21, 20, 21, 22, 23, 24, 25)}
REGISTER_OF = {"colleague": "work", "employee": "work", "client": "work", "friend": "close", "neighbour": "close",
               "family": "family", "school": "formal", "vendor": "formal"}  # fmt: skip


def email(life: Life, sender: str, to: str, at: datetime, subject: str, body: str,
          folder: str = "inbox", read: bool | None = None) -> Email:  # fmt: skip
    """Append one e-mail; one dated after the start of today's mail is moved to yesterday."""
    if at.date() > life.world.base_date or (at.date() == life.world.base_date and at.hour >= 8):
        at = datetime.combine(life.world.base_date - timedelta(days=1), at.time())
    e = Email(email_id=life.next_id("em"), folder=folder, sender=sender, to=[to], subject=subject,
              body=body.strip() + "\n", sent_at=at,
              read=read if read is not None else (folder != "inbox" or life.rng.random() < 0.7))  # fmt: skip
    life.emails.append(e)
    return e


def first_name(name: str) -> str:
    return name.split()[0]


class Values(Slots):
    """Placeholder values for messages written around ``anchor`` (the day the first one is
    sent) by or to ``other``; each computed on first use (``_<name>`` below) and kept."""

    def __init__(self, life: Life, anchor: date, other: Contact | None = None, **given):
        w, rng = life.world, life.rng
        super().__init__({}, me=first_name(w.me.name), me_full=w.me.name, city=w.me.city, employer=w.me.employer)
        self.life, self.anchor, self.other = life, anchor, other
        if other is not None:
            self.update(first=first_name(other.name), name=other.name, org=other.organization or other.name)
        d1 = anchor + timedelta(days=rng.randint(2, 6))
        d2 = d1 + timedelta(days=rng.randint(2, 5))
        if other is not None and other.relation in WORK_RELATIONS:  # work happens on workdays
            d1, d2 = workday(d1), workday(d2)
            d2 = d2 if d2 > d1 else workday(d1 + timedelta(days=1))
        self["dates"] = (d1, d2)
        self.update(given)

    def __missing__(self, key: str) -> str:
        make = getattr(self, f"_{key}", None)
        if make is None:
            raise KeyError(f"no value for placeholder {{{key}}}")
        value = self[key] = make()
        return value

    def fresh(self, *keep: str) -> Values:
        out = Values.__new__(Values)
        dict.__init__(out, {k: self[k] for k in keep if k in self})
        out.makers, out.life, out.anchor, out.other = {}, self.life, self.anchor, self.other
        return out

    # -- the values ------------------------------------------------------------------------
    def _person(self, *relations: str) -> str:
        pool = [c for c in self.life.contacts if c.relation in relations and c is not self.other]
        return first_name(self.life.rng.choice(pool).name) if pool else self["me"]

    def _clock(self, lo: int, hi: int) -> str:
        return f"{self.life.rng.randrange(lo, hi)}:{self.life.rng.choice(['00', '15', '30', '45'])}"

    def _day(self):
        return WEEKDAYS[self["dates"][0].weekday()]

    def _date(self):
        return format_date(self["dates"][0], self.life.loc, weekday=True, year=False)

    def _day2(self):
        return WEEKDAYS[self["dates"][1].weekday()]

    def _date2(self):
        return format_date(self["dates"][1], self.life.loc, weekday=True, year=False)

    def _past_day(self):
        return WEEKDAYS[(self.anchor - timedelta(days=self.life.rng.randint(1, 5))).weekday()]

    def _time(self):
        return self._clock(18, 21)

    def _time_am(self):
        return self._clock(9, 12)

    def _amount(self):
        """A sum of money: people round it, statements and systems give the cents."""
        if self.other is not None and self.other.relation in ("newsletter", "vendor"):
            return format_money(self.life.money(8, 70), self.life.loc)
        return format_money(round(self.life.money(8, 60)), self.life.loc, cents=False)

    def _price(self):
        return format_money(self.life.money(120, 900), self.life.loc, cents=False)

    def _kid_age(self):
        return str(self.life.rng.randint(5, 12))

    def _colleague(self):
        return self._person("colleague", "employee", "client")

    def _friend(self):
        return self._person("friend")

    def _street(self):
        return self.life.fk_street()

    def _number(self):
        return str(self.life.rng.randint(2, 9))

    def _minutes(self):
        return str(self.life.rng.randint(12, 95))

    def _percent(self):
        return str(self.life.rng.randint(3, 40))

    def _last4(self):
        return str(self.life.rng.randint(1000, 9999))

    def _plot(self):
        return str(self.life.rng.randint(2, 40))

    def _brand(self):
        return self.life.brand()

    def _place(self):
        life = self.life
        return life.rng.choice(life.places) if life.places else f"the café on {life.fk_street()}"

    def _partner(self):
        c = next((c for c in self.life.contacts if c.role == "partner"), None)
        return first_name(c.name) if c else self._person("friend")

    def _kid(self):
        return self.life.rng.choice(self.life.kids) if self.life.kids else "the little one"

    def _pet(self):
        return self.life.profile.pet[1] if self.life.profile.pet else "the dog"

    def _pet_kind(self):
        return self.life.profile.pet[0] if self.life.profile.pet else "dog"

    def _school(self):
        return self.life.school or f"{self['city']} Primary School"

    def _club(self):
        return f"{self['city']} Social Club"

    def _hobby(self):
        return (self.life.profile.hobbies or ["walking"])[0].replace("_", " ")

    def _room(self):
        rng = self.life.rng
        return f"room {rng.randint(1, 4)}.{rng.randint(1, 20):02d}"

    def _project(self):
        projects = work_pools().groups[self.life.profile.group].projects
        return self.life.rng.choice(projects).format(street=self.life.fk_street(), city=self["city"])

    def _client(self):
        clients = [c.organization for c in self.life.contacts if c.relation == "client" and c.organization]
        return self.life.rng.choice(clients) if clients else self.life.fk_company()

    def _month(self):
        return MONTHS[(self.anchor.month - 1 + self.life.rng.randint(0, 2)) % 12]

    def _ref(self):
        rng = self.life.rng
        return f"{rng.choice(['#', 'REF-', 'No. ', ''])}{rng.randint(1000, 99999)}"

    def _code(self):
        rng = self.life.rng
        return f"{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.randint(10**9, 10**10 - 1)}"

    def _dest(self):
        return self.life.rng.choice(self.life.vocab["words"]["destinations"])

    def _weather(self):
        """A sky and a temperature that fit the month and the country's climate."""
        rng, month = self.life.rng, self.anchor.month - 1
        code = self.life.country
        if code in TROPICAL:
            base = TROPICAL[code][month]
        else:
            base = NORTH_C[(month + 6) % 12 if code in SOUTHERN else month]
        t = base + rng.randint(-3, 3)
        temp = f"{round(t * 9 / 5 + 32)}°F" if code == "US" else f"{t}°C"
        return f"{rng.choice(self.life.vocab['words']['weather'])}, around {temp}"

    def _fare(self):
        return format_money(self.life.money(35, 420), self.life.loc, cents=False)

    def _product(self):
        return self.life.rng.choice(self.life.vocab["words"]["products"])

    def _title(self):
        return " ".join(self.life.rng.choice(ws) for ws in self.life.vocab["words"]["title_words"])

    def _shop(self):
        return self.life.rng.choice(self.life.shops) if self.life.shops else self.life.brand()


def slots(life: Life, anchor: date, other: Contact | None = None, **given) -> Values:
    """Placeholder values for messages written around ``anchor`` by or to ``other``."""
    return Values(life, anchor, other, **given)


def register_of(relation: str) -> Register:
    return home_pools().registers[REGISTER_OF.get(relation, "formal")]


def letter(register: Register, body: Piece, rng: random.Random, values: Slots, to: str, sign: str,
           sign_full: str, opening: bool = True) -> str:  # fmt: skip
    """Greeting, an aside now and then (in the message that opens a thread), the body, the
    sign-off: one message as a person in ``register`` writes it."""
    values.update(to=to, sign=sign, sign_full=sign_full)
    head = compose(register.greetings, rng, values)
    aside = compose(register.asides, rng, values) if register.asides and opening else ""
    text = compose(body, rng, values)
    closer = compose(register.closers, rng, values) if register.closers else ""
    tail = compose(register.signoffs, rng, values)
    return "\n\n".join(p for p in (head, aside, f"{text} {closer}".strip(), tail) if p)
