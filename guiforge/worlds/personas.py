"""Offline personas: Faker in the persona's own locale plus the curated vocabulary of
``data/persona_seeds.yaml``. Persona ``i`` depends only on ``(seed, i)``, so any sharding of
an index range yields the same personas."""

from __future__ import annotations

import random
from pathlib import Path

from guiforge.worlds.formats import company_domain, slug
from guiforge.worlds.model import Persona
from guiforge.worlds.places import City, country_code, country_table, towns
from guiforge.worlds.runtime import shared_faker, stable_hash
from guiforge.worlds.seeds import OccupationGroup, PersonaSeeds, load_persona_seeds


def persona_id(seed: int, index: int) -> str:
    return "per_" + stable_hash("guiforge-persona-id", seed, index).hex()[:10]


def build_personas(
    count: int, seed: int, start: int = 0, seeds_path: str | Path | None = None
) -> list[Persona]:
    """Personas ``start .. start+count-1`` of the stream named by ``seed``."""
    if count < 0 or start < 0:
        raise ValueError(f"count ({count}) and start ({start}) must not be negative")
    seeds = load_persona_seeds(seeds_path)
    return [build_persona(seed, i, seeds) for i in range(start, start + count)]


def build_persona(seed: int, index: int, seeds: PersonaSeeds) -> Persona:
    rng = random.Random(int.from_bytes(stable_hash("guiforge-persona", seed, index)[:8], "big"))
    locales = list(seeds.locales)
    locale = rng.choices(locales, weights=[seeds.locales[x].weight for x in locales])[0]
    info = seeds.locales[locale]
    group_name = rng.choice(sorted(seeds.occupation_groups))
    group = seeds.occupation_groups[group_name]
    fk = shared_faker(locale)
    fk.seed_instance(rng.getrandbits(64))  # this persona's own stream: no state from others
    first, last = fk.first_name(), fk.last_name()
    code = country_code(info.country)
    home = home_city(rng, code)
    city = home.name if home else fk.city()
    employer = _employer(rng.choice(group.employers), fk.company(), city, last)
    local = f"{slug(first, '.')}.{slug(last, '.')}"
    if group.work_email and employer != "Self-employed":
        email = f"{local}@{company_domain(employer, info.tld)}"
    else:
        email = f"{local}{rng.choice(['', str(rng.randint(1, 99))])}@{fk.free_email_domain()}"
    return Persona(
        persona_id=persona_id(seed, index),
        name=f"{first} {last}",
        locale=locale,
        age=rng.randint(*group.age),
        occupation=rng.choice(group.occupations),
        employer=employer,
        city=city,
        country=info.country,
        email=email,
        phone=fk.phone_number(),
        country_code=code,
        region=home.admin1 if home else "",
        timezone=home.timezone if home else "",
        language=locale.split("_")[0],
        traits=rng.sample(seeds.traits, rng.randint(2, 4)),
        goals=_goals(rng, group),
    )


def home_city(rng: random.Random, code: str) -> City | None:
    """A real city of the country, drawn with weight sqrt(population) so that capitals are
    common but towns appear too; US cities only in states whose sales tax the table lists."""
    pool = list(towns(code))
    if code == "US":
        states = country_table().us_states
        pool = [c for c in pool if c.admin1 in states]
    if not pool:
        return None
    return rng.choices(pool, weights=[c.population**0.5 for c in pool])[0]


def _employer(fmt: str, company: str, city: str, last_name: str) -> str:
    return fmt.format(company=company, city=city, last_name=last_name)


def _goals(rng: random.Random, group: OccupationGroup) -> list[str]:
    return rng.sample(group.goals, rng.randint(1, min(3, len(group.goals))))
