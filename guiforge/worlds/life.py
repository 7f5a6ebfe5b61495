"""What the background generators (background*.py) share while they fill one world: the
world, the seeded stream, the vocabulary, the persona's profile and what has been added so far."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from guiforge.worlds.model import Contact, World
from guiforge.worlds.profile import SELF_EMPLOYED, Profile


@dataclass
class Life:
    """What the background generators share while they fill one world."""

    world: World
    rng: random.Random
    vocab: dict[str, Any]
    scale: float  # prices: the locale's money scale, then the persona's spending (background_money)
    country: str
    profile: Profile
    contacts: list[Contact] = field(default_factory=list)
    events: list = field(default_factory=list)
    emails: list = field(default_factory=list)
    transactions: list = field(default_factory=list)
    documents: list = field(default_factory=list)
    roles: dict[str, list[Contact]] = field(default_factory=dict)
    brands: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)  # restaurants and cafés the persona pays at
    kids: list[str] = field(default_factory=list)  # children's first names (not contacts)
    school: str = ""
    shops: list[str] = field(default_factory=list)  # shops the persona pays at
    sender_specs: list = field(default_factory=list)  # (spec, name) of every newsletter contact
    fk: Any = None  # the world's Faker, in the persona's locale
    loc: Any = None  # the persona's LocaleInfo
    _n: dict[str, int] = field(default_factory=dict)

    def next_id(self, kind: str) -> str:
        self._n[kind] = self._n.get(kind, 0) + 1
        return f"bg_{kind}_{self._n[kind]:03d}"

    def money(self, lo: float, hi: float) -> float:
        return round(self.rng.uniform(lo, hi) * self.scale, 2)

    def brand(self) -> str:
        return self.brands.pop() if self.brands else self.rng.choice(self.vocab["brands"])

    def moment(self, day: date, hours: tuple[int, int] = (7, 22)) -> datetime:
        return datetime.combine(day, time(self.rng.randrange(*hours), self.rng.randrange(0, 60)))

    def past_day(self, lo: int, hi: int = 1) -> date:
        """A day ``hi``..``lo`` days before the world's today."""
        return self.world.base_date - timedelta(days=self.rng.randint(hi, lo))

    def fk_street(self) -> str:
        return self.fk.street_name()

    def fk_company(self) -> str:
        return self.fk.company()

    @property
    def employed(self) -> bool:
        return self.world.me.employer != SELF_EMPLOYED
