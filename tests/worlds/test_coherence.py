"""Coherence rules against real data: each rule fires on a world broken its way, names the
rule in its code, and real personas and built worlds pass them."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from guiforge.worlds import places
from guiforge.worlds.coherence import check_coherence
from guiforge.worlds.consistency import check_world
from guiforge.worlds.model import Contact, Event
from guiforge.worlds.personas import build_personas


def codes(world) -> set[str]:
    return {p.code for p in check_coherence(world)}


def test_hand_made_world_is_coherent(world):
    assert check_coherence(world) == []


BREAKS = {
    "invented_city": lambda w: setattr(w.me, "city", "East Michaelborough"),
    "currency": lambda w: setattr(w, "currency", "INR"),
    "vat_rate": lambda w: setattr(w.documents[0], "tax_rate", 0.19),
    "timezone": lambda w: setattr(w.me, "timezone", "Asia/Kolkata"),
    "language": lambda w: setattr(w.me, "language", "pl"),
    "self_employed_manager": lambda w: (
        setattr(w.me, "employer", "Self-employed"),
        w.contacts.append(Contact(contact_id="c_mgr", name="Max Boss", email="max@x.example.com",
                                  phone="1", role="line manager", relation="colleague",
                                  organization="Self-employed")),
    ),
    "flight_time": lambda w: w.events.append(Event(
        event_id="ev_fl", title="Flight to Barcelona (BCN)", start=datetime(2024, 5, 1, 8),
        end=datetime(2024, 5, 1, 8) + timedelta(minutes=20))),
    "document_number": lambda w: (w.documents.append(w.documents[0].model_copy(
        update={"document_id": "inv_copy", "filename": "copy.pdf", "fields": {"Invoice number": "A-1"}})),
        w.documents[0].fields.__setitem__("Invoice number", "A-1")),
}  # fmt: skip


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_each_rule_fires_with_its_code(world, rule):
    world.me = world.me.model_copy()  # the fixture's persona is shared between tests
    world.me.country_code = "GB"
    world.me.timezone = "Europe/London"
    world.me.language = "en"
    BREAKS[rule](world)
    found = check_world(world)
    assert rule in {p.code for p in found}, found
    assert all(p.message and "\n" not in p.message for p in found)


def test_flight_times_follow_great_circle_distance():
    muc, bcn = places.airport("MUC"), places.airport("BCN")
    d = places.km(muc.lat, muc.lon, bcn.lat, bcn.lon)
    assert 950 < d < 1100  # Munich-Barcelona is ~1,040 km
    assert 105 <= places.flight_minutes(d) <= 135  # scheduled about 2 h
    lhr, syd = places.airport("LHR"), places.airport("SYD")
    assert places.flight_minutes(places.km(lhr.lat, lhr.lon, syd.lat, syd.lon)) > 900


def test_country_table_matches_cldr_and_iso():
    from babel.numbers import get_decimal_symbol, get_group_symbol

    from guiforge.worlds.seeds import load_persona_seeds

    for loc, info in load_persona_seeds().locales.items():
        code = places.country_code(info.country)
        rules = places.rules(code)
        assert rules is not None, f"{info.country} has no row in data/countries.yaml"
        assert places.country_currency(code) == info.currency, loc
        norm = lambda s: " " if not s.strip() else s  # noqa: E731 - narrow/no-break spaces
        assert (norm(get_decimal_symbol(loc)), norm(get_group_symbol(loc))) == (rules.decimal, norm(rules.group)), loc
        assert (norm(info.decimal), norm(info.group)) == (rules.decimal, norm(rules.group)), loc


def test_personas_live_in_real_cities_with_their_time_zone():
    people = build_personas(40, seed=3)
    for p in people:
        assert places.is_real_city(p.city, p.country_code), p.city
        city = places.find_city(p.city, p.country_code, p.region)
        assert city is not None and city.timezone == p.timezone
        assert p.language in places.country_languages(p.country_code)


def test_trips_go_to_real_cities_in_the_same_currency(scenarios, personas_by_locale):
    from guiforge.worlds.template_builder import build_world

    for loc in ("pl_PL", "en_IN", "es_ES", "en_US"):
        p = personas_by_locale[loc]
        w = build_world(p, scenarios["expense_report"], seed=2)
        flight = next(e for e in w.events if e.event_id == "ev_flight_out")
        code = flight.title.rsplit("(", 1)[1].rstrip(")")
        dest = places.airport(code)
        assert dest is not None and places.country_currency(dest.country) == w.currency
        inv = w.document("inv_hotel")
        assert inv.tax_rate == places.vat_rate(dest.country, accommodation=True) or dest.country == "US"
        assert "flight_time" not in {p.code for p in check_world(w)}
