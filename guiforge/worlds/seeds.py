"""The persona seed vocabulary (``data/persona_seeds.yaml``): locales with their money and
date conventions, occupation groups with fitting goals, and personality traits."""

from __future__ import annotations

import string
import threading
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guiforge.paths import DATA_DIR
from guiforge.yamlfile import read_yaml


def data_dir() -> Path:
    """The seed-data folder (``data/`` of the checkout, or of ``$GUIFORGE_HOME``)."""
    return DATA_DIR


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LocaleInfo(_Strict):
    country: str
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    symbol: str
    symbol_after: bool = Field(default=False, description="'12,50 €' rather than '€12.50'")
    group: str = Field(default=",", description="thousands separator")
    decimal: str = Field(default=".", description="decimal separator")
    date_style: Literal["dmy", "mdy"] = "dmy"
    tld: str = Field(default="com", pattern=r"^[a-z.]+$")
    money_scale: float = Field(default=1.0, gt=0, description="prices relative to EUR/USD")
    weight: float = Field(default=1.0, ge=0)


EMPLOYER_NAMES = {"company", "city", "last_name"}


class OccupationGroup(_Strict):
    occupations: list[str] = Field(min_length=1)
    goals: list[str] = Field(min_length=3)
    age: tuple[int, int] = (23, 64)
    employers: list[str] = Field(
        default=["{company}"],
        min_length=1,
        description="formats over {company}, {city}, {last_name}; 'Self-employed' is allowed",
    )
    work_email: bool = Field(default=True, description="use an address at the employer's domain")

    @model_validator(mode="after")
    def _check(self) -> OccupationGroup:
        lo, hi = self.age
        if not 16 <= lo <= hi <= 100:
            raise ValueError(f"age range {list(self.age)} must be ascending within 16..100")
        for fmt in self.employers:
            names = {f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None}
            if names - EMPLOYER_NAMES:
                raise ValueError(
                    f"employer format {fmt!r} may only use {{company}}, {{city}}, {{last_name}}"
                )
        return self


class PersonaSeeds(_Strict):
    locales: dict[str, LocaleInfo] = Field(min_length=1)
    traits: list[str] = Field(min_length=4)
    occupation_groups: dict[str, OccupationGroup] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> PersonaSeeds:
        for label, items in [
            ("traits", self.traits),
            ("occupations", [o for g in self.occupation_groups.values() for o in g.occupations]),
        ]:
            seen: set[str] = set()
            for x in items:
                if x.lower() in seen:
                    raise ValueError(f"{label}: {x!r} is listed twice")
                seen.add(x.lower())
        return self

    def group_of(self, occupation: str) -> str | None:
        for name, g in self.occupation_groups.items():
            if occupation in g.occupations:
                return name
        return None


_lock = threading.Lock()


@lru_cache(maxsize=8)
def _load(path: str) -> PersonaSeeds:
    return read_yaml(path).validate(PersonaSeeds)


def load_persona_seeds(path: str | Path | None = None) -> PersonaSeeds:
    """Load and validate the seed file (cached per path); errors name file, line and field."""
    with _lock:
        return _load(str(path or data_dir() / "persona_seeds.yaml"))


FALLBACK_LOCALE = LocaleInfo(country="", currency="USD", symbol="$", date_style="mdy")


def locale_info(locale: str, seeds: PersonaSeeds | None = None) -> LocaleInfo:
    """Conventions of ``locale``; a locale the seeds do not list (an LLM persona) gets US ones."""
    seeds = seeds or load_persona_seeds()
    return seeds.locales.get(locale, FALLBACK_LOCALE)
