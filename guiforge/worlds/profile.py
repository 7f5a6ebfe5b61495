"""Who the persona lives with and what they do after work: a household (single, couple,
family, single parent, flatshare, still with parents) that fits their age, children with ages
that fit theirs, a pet now and then, two or three hobbies that follow their traits, whether
they rent, and which occupation group's working life is theirs.

A pure function of the persona (seeded by its id): every world of one persona shares its
household, as one person has one life."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from guiforge.worlds.life_pools import home_pools, work_pools
from guiforge.worlds.model import Persona
from guiforge.worlds.runtime import shared_faker, stable_hash
from guiforge.worlds.seeds import load_persona_seeds

SELF_EMPLOYED = "Self-employed"
PETS = (("dog", 0.5), ("cat", 0.4), ("rabbit", 0.1))
PET_NAMES = ("Luna", "Max", "Bella", "Milo", "Coco", "Rocky", "Nala", "Oscar", "Pepper", "Simba", "Lola",
             "Bruno", "Mia", "Charlie", "Frida", "Toby", "Kiwi", "Leo", "Ruby", "Biscuit")


@dataclass(frozen=True)
class Member:
    role: str  # partner, son, daughter, flatmate, mother, father
    first: str
    age: int


@dataclass
class Profile:
    group: str  # an occupation group of data/life_work.yaml
    household: str  # a household of data/life_home.yaml
    members: list[Member] = field(default_factory=list)
    pet: tuple[str, str] | None = None  # (kind, name)
    hobbies: list[str] = field(default_factory=list)
    renting: bool = True
    car: bool = False

    @property
    def kids(self) -> list[Member]:
        return [m for m in self.members if m.role in ("son", "daughter")]

    @property
    def partner(self) -> Member | None:
        return next((m for m in self.members if m.role == "partner"), None)


def profile_of(persona: Persona) -> Profile:
    rng = random.Random(int.from_bytes(stable_hash("guiforge-life", persona.persona_id)[:8], "big"))
    fk = shared_faker(persona.locale)
    fk.seed_instance(rng.getrandbits(64))
    home = home_pools()
    kinds = sorted(home.households)
    weights = [_age_weight(home.households[k].weight_by_age, persona.age) for k in kinds]
    household = rng.choices(kinds, weights)[0] if any(weights) else "single"
    members: list[Member] = []
    if household in ("couple", "family"):
        members.append(Member("partner", fk.first_name(), max(18, persona.age + rng.randint(-5, 5))))
    if household in ("family", "single_parent"):
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            oldest = max(1, min(17, persona.age - 22))
            members.append(Member(rng.choice(("son", "daughter")), fk.first_name(), rng.randint(1, oldest)))
    if household == "flatshare":
        members.extend(Member("flatmate", fk.first_name(), persona.age + rng.randint(-4, 4))
                       for _ in range(rng.randint(1, 3)))  # fmt: skip
    pet = None
    if "pet owner" in persona.traits or rng.random() < 0.2:
        kind = rng.choices([k for k, _ in PETS], [w for _, w in PETS])[0]
        pet = (kind, rng.choice(PET_NAMES))
    return Profile(group=occupation_group(persona), household=household, members=members, pet=pet,
                   hobbies=_hobbies(persona, rng), renting=persona.age < 32 or rng.random() < 0.45,
                   car=household in ("family", "single_parent") or rng.random() < 0.4)  # fmt: skip


def occupation_group(persona: Persona) -> str:
    """The persona's occupation group; an occupation the seeds do not list (an LLM persona)
    gets the office group of its kind of employer."""
    group = load_persona_seeds().group_of(persona.occupation)
    if group in work_pools().groups:
        return group
    return "freelance_creative" if persona.employer == SELF_EMPLOYED else "finance_admin"


def _age_weight(bands: dict[str, float], age: int) -> float:
    for band, weight in bands.items():
        lo, hi = (int(x) for x in band.split("-"))
        if lo <= age <= hi:
            return weight
    return 0.0


def _hobbies(persona: Persona, rng: random.Random) -> list[str]:
    """Two or three hobbies: those a trait points to first, then any."""
    hobbies = home_pools().hobbies
    names = sorted(hobbies)
    liked = [h for h in names if set(hobbies[h].traits) & set(persona.traits)]
    rng.shuffle(liked)
    rest = [h for h in names if h not in liked]
    rng.shuffle(rest)
    return (liked + rest)[: rng.randint(2, 3)]
