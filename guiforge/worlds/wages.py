"""What a persona earns: gross annual pay from the occupation and the country (``data/wages.yaml``,
public median wages written down with their sources), net monthly pay for the account.

The occupation's pay relative to the median is measured in the United States and stretched
or compressed to each country's spread of pay (its D9/D1 ratio), so that a general
practitioner out-earns a teaching assistant everywhere, by less in Sweden than in the US."""

from __future__ import annotations

import math
import random
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from guiforge.worlds.model import Persona
from guiforge.worlds.seeds import data_dir, locale_info
from guiforge.yamlfile import read_yaml

PERSONAL_SPREAD = 0.08  # two people in one job and country differ by up to this share either way


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CountryPay(_Strict):
    median: float = Field(gt=0, description="median gross annual earnings, local currency")
    d9_d1: float = Field(gt=1, description="90th over 10th percentile of gross earnings")
    net_share: float = Field(gt=0, le=1, description="net over gross pay at the average wage")


class WageTable(_Strict):
    reference_d9_d1: float = Field(gt=1)
    countries: dict[str, CountryPay] = Field(min_length=1)
    occupations: dict[str, tuple[float, str]] = Field(min_length=1, description="US median (USD), SOC code")

    def ratio(self, occupation: str) -> float:
        """The occupation's median over the all-occupation median in the US (1.0: unknown)."""
        usd = self.occupations.get(occupation)
        return usd[0] / self.countries["US"].median if usd else 1.0

    def spread(self, code: str) -> float:
        return math.log(self._country(code).d9_d1) / math.log(self.reference_d9_d1)

    def _country(self, code: str) -> CountryPay:
        return self.countries.get(code) or self.countries["US"]

    def median_gross(self, occupation: str, code: str, locale: str = "") -> float:
        """The occupation's median gross annual pay in the country, local currency; a country
        the table lacks gets US pay in the locale's money (its money_scale)."""
        if code in self.countries:
            return self.countries[code].median * self.ratio(occupation) ** self.spread(code)
        return self.countries["US"].median * self.ratio(occupation) * locale_info(locale).money_scale

    def net_share(self, code: str) -> float:
        return self._country(code).net_share


@cache
def wage_table() -> WageTable:
    return read_yaml(data_dir() / "wages.yaml").validate(WageTable)


def experience(age: int) -> float:
    """Pay rises with years of work: 0.8 of the median at 22, 1.12 from 50 on."""
    return 0.8 + 0.32 * min(max(age - 22, 0), 28) / 28


def annual_gross(persona: Persona, code: str, rng: random.Random) -> float:
    table = wage_table()
    personal = rng.uniform(1 - PERSONAL_SPREAD, 1 + PERSONAL_SPREAD)
    return table.median_gross(persona.occupation, code, persona.locale) * experience(persona.age) * personal


def monthly_net(persona: Persona, code: str, rng: random.Random) -> float:
    """What reaches the account each month, rounded to cents."""
    return round(annual_gross(persona, code, rng) * wage_table().net_share(code) / 12, 2)


def median_monthly_net(code: str, locale: str = "") -> float:
    """The country's median earner's net monthly pay: what prices and spending scale against."""
    table = wage_table()
    return table.median_gross("", code, locale) * table.net_share(code) / 12
