"""Coherence rules: a world must agree with the real world, not only with itself. The
persona lives in a real city (geonames) whose country uses the world's currency (CLDR), speaks
a language of that country and keeps its time zone; invoices charge a VAT rate the country's
table lists (data/countries.yaml); numbers are written the country's way; flights take as
long as their great-circle distance implies; the self-employed have no line manager; the
occupation fits the scenario; document numbers do not repeat. Each rule's code names it in
the exclusion a failing world gets."""

from __future__ import annotations

import re
from functools import cache

import yaml

from guiforge.paths import SCENARIOS_DIR
from guiforge.worlds import places
from guiforge.worlds.model import World
from guiforge.worlds.problem import Problem
from guiforge.worlds.seeds import load_persona_seeds, locale_info

SELF_EMPLOYED = "Self-employed"
_IATA = re.compile(r"\(([A-Z]{3})\)")
_NUMBER_FIELD = re.compile(r"\b(number|no\.?|nr\.?|ref(erence)?)\b", re.IGNORECASE)


def check_coherence(w: World) -> list:
    out: list[Problem] = []
    for rule in (_place, _money, _vat, _flights, _manager, _occupation, _document_numbers):
        out.extend(Problem(code, msg) for code, msg in rule(w))
    return out


def _code(w: World) -> str:
    return w.me.country_code or places.country_code(w.me.country)


def _place(w: World) -> list[tuple[str, str]]:
    code = _code(w)
    if not code:
        return [("unknown_country", f"persona {w.me.persona_id}: country {w.me.country!r} is not an ISO 3166 country")]
    out = []
    if not places.is_real_city(w.me.city, code):
        out.append(("invented_city", f"persona {w.me.persona_id}: {w.me.city!r} is not a city of {w.me.country} (geonames)"))
    city = places.home_of(w.me)
    if w.me.timezone and city and w.me.timezone != city.timezone:
        out.append(("timezone", f"persona {w.me.persona_id}: time zone {w.me.timezone} is not {city.name}'s ({city.timezone})"))
    langs = places.country_languages(code)
    if w.me.language and langs and w.me.language not in langs:
        out.append(("language", f"persona {w.me.persona_id}: language {w.me.language!r} is not spoken officially in {w.me.country} ({', '.join(langs)})"))
    return out


def _money(w: World) -> list[tuple[str, str]]:
    code, out = _code(w), []
    want = places.country_currency(code) if code else ""
    if want and w.currency != want:
        out.append(("currency", f"world {w.world_id}: currency {w.currency} but {w.me.country} uses {want}"))
    rules = places.rules(code) if code else None
    loc = locale_info(w.me.locale)
    if rules and (_space(loc.decimal), _space(loc.group)) != (_space(rules.decimal), _space(rules.group)):
        out.append(("number_format", f"locale {w.me.locale}: writes 1{loc.group}234{loc.decimal}50 but {w.me.country} writes 1{rules.group}234{rules.decimal}50"))
    return out


def _space(s: str) -> str:
    return " " if s.strip() == "" else s


@cache
def _rates_for(currency: str) -> frozenset[float]:
    table = places.country_table()
    rates = {0.0}
    for code, r in table.countries.items():
        if places.country_currency(code) == currency:
            rates |= {r.vat, r.accommodation}
            if code == "US":
                rates |= set(table.us_states.values())
    return frozenset(round(x, 5) for x in rates)


def _vat(w: World) -> list[tuple[str, str]]:
    allowed = _rates_for(w.currency)
    if len(allowed) <= 1:
        return []  # a currency the table does not cover
    out = []
    for d in w.documents:
        if d.line_items and d.tax_rate and round(d.tax_rate, 5) not in allowed:
            shown = ", ".join(f"{x:.4g}" for x in sorted(allowed))
            out.append(("vat_rate", f"document {d.document_id}: tax rate {d.tax_rate:.4g} is no VAT rate of a {w.currency} country ({shown}; data/countries.yaml)"))
    return out


def _flights(w: World) -> list[tuple[str, str]]:
    home = places.home_of(w.me)
    origin = places.airport_for(home) if home else None
    if origin is None:
        return []
    out = []
    for e in w.events:
        if not e.title.lower().startswith("flight"):
            continue
        codes = [c for c in _IATA.findall(f"{e.title} {e.location}") if c != origin.iata]
        other = places.airport(codes[0]) if codes else None
        if other is None:
            continue
        dist = places.km(origin.lat, origin.lon, other.lat, other.lon)
        lo, hi = places.flight_bounds(dist)
        minutes = (e.end - e.start).total_seconds() / 60
        if not lo <= minutes <= hi:
            out.append(("flight_time", f"event {e.event_id}: {origin.iata}-{other.iata} is {dist:,.0f} km, a flight of {lo}-{hi} min, not {minutes:.0f}"))
    return out


def _manager(w: World) -> list[tuple[str, str]]:
    if w.me.employer != SELF_EMPLOYED:
        return []
    return [("self_employed_manager", f"contact {c.contact_id}: {w.me.name} is self-employed but has a {c.role} at {c.organization or 'work'}")
            for c in w.contacts
            if c.organization == SELF_EMPLOYED or (c.relation == "colleague" and "manager" in c.role.lower())]  # fmt: skip


def _occupation(w: World) -> list[tuple[str, str]]:
    sc = _scenario_suits().get(w.scenario)
    group = load_persona_seeds().group_of(w.me.occupation)
    if not sc or group is None or group in sc:
        return []
    return [("occupation_scenario", f"persona {w.me.persona_id}: a {w.me.occupation} ({group}) does not fit scenario {w.scenario} (suits {', '.join(sc)})")]


@cache
def _scenario_suits() -> dict[str, tuple[str, ...]]:
    """Each scenario's ``suits``, read straight from its file (no full template check)."""

    out = {}
    for f in sorted(SCENARIOS_DIR.glob("*.yaml")):
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # an unreadable scenario is reported by the loader, not here
        if isinstance(data, dict) and isinstance(data.get("suits"), list):
            out[f.stem] = tuple(map(str, data["suits"]))
    return out


def _document_numbers(w: World) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    out = []
    for d in w.documents:
        if d.kind not in ("invoice", "receipt"):
            continue  # a form may quote the posting's reference; two bills may not share one
        for k, v in d.fields.items():
            if not _NUMBER_FIELD.search(k) or not v.strip():
                continue
            key = f"{k.lower()}={v.strip()}"
            if key in seen and seen[key] != d.document_id:
                out.append(("document_number", f"document {d.document_id}: {k} {v} is also document {seen[key]}'s"))
            seen.setdefault(key, d.document_id)
    return out
