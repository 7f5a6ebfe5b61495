"""Everyday life drawn from the persona: pay that follows occupation and country, a household
that fits the age, threads from people whose relation fits them, and mail that does not read
as a template across worlds (the default run's 64 worlds as the smoke run)."""

from __future__ import annotations

import re

import pytest

from guiforge.errors import ConfigError
from guiforge.worlds.background import with_background
from guiforge.worlds.consistency import check_world
from guiforge.worlds.life_pools import load_pools, work_pools
from guiforge.worlds.profile import profile_of
from guiforge.worlds.realism import life_realism, monthly_pay
from guiforge.worlds.reuse import body_reuse, body_template, relationship_violations
from guiforge.worlds.sample import sample_worlds
from guiforge.worlds.template_builder import build_world
from guiforge.worlds.wages import wage_table

# occupations the wage table sets far apart: the first must out-earn the second everywhere
ORDERED = [("General Practitioner", "Nurse"), ("Nurse", "Teaching Assistant"),
           ("Software Engineer", "IT Support Technician"), ("Site Manager", "Carpenter"),
           ("Pharmacist", "Hotel Receptionist"), ("Architect", "Florist")]  # fmt: skip


@pytest.fixture(scope="module")
def default_worlds():
    """The default pipeline's 64 worlds (personas seed 7), built offline."""
    return sample_worlds(64, seed=7)


def test_the_wage_table_orders_occupations_in_every_country():
    table = wage_table()
    for code in table.countries:
        for high, low in ORDERED:
            assert table.median_gross(high, code) > table.median_gross(low, code), (code, high, low)
    # a spread-out country stretches the gap, a compressed one narrows it
    gap = {c: table.median_gross("General Practitioner", c) / table.median_gross("Teaching Assistant", c)
           for c in ("US", "SE")}  # fmt: skip
    assert gap["US"] > gap["SE"] > 1.5


def test_pay_in_the_account_follows_occupation_within_a_country(scenarios, personas_by_locale):
    """Two people of one age in one country: the general practitioner's salary is above the
    nurse's, the nurse's above the teaching assistant's (before: one range for everyone)."""
    for locale in ("en_US", "de_DE", "en_IN", "sv_SE", "pt_BR"):
        base = personas_by_locale[locale].model_copy(update={"age": 40, "employer": "Example Group"})
        pay = {}
        for occupation in ("General Practitioner", "Nurse", "Teaching Assistant"):
            p = base.model_copy(update={"occupation": occupation})
            world = build_world(p, scenarios["moving_house"], seed=3)
            pay[occupation] = monthly_pay(world)
        assert pay["General Practitioner"] > pay["Nurse"] > pay["Teaching Assistant"], (locale, pay)


def test_the_household_fits_the_persona(personas_by_locale):
    for p in personas_by_locale.values():
        prof = profile_of(p)
        assert prof == profile_of(p)  # one person, one life
        assert all(k.age <= p.age - 18 for k in prof.kids), (p.age, prof)
        assert (prof.partner is not None) == (prof.household in ("couple", "family"))
        assert 2 <= len(prof.hobbies) <= 3 and prof.group in work_pools().groups
    young = personas_by_locale["en_US"].model_copy(update={"age": 19})
    assert profile_of(young).household not in ("family", "single_parent")


def test_threads_arrange_what_the_calendar_holds(scenarios, personas_by_locale):
    w = build_world(personas_by_locale["en_GB"], scenarios["family_event"], seed=5)
    by_id = {c.contact_id: c for c in w.contacts}
    dinners = [e for e in w.events if e.event_id.startswith("bg_") and e.title.startswith("Dinner with ")]
    for ev in dinners:
        friend = by_id[ev.attendees[0]]
        said = " ".join(e.body for e in w.emails if e.sender == friend.email)
        assert ev.start.strftime("%A") in said, (ev.title, said)


def test_a_sender_who_does_not_fit_is_a_violation(scenarios, personas_by_locale):
    w = build_world(personas_by_locale["en_US"], scenarios["team_offsite"], seed=2)
    assert relationship_violations(w) == []
    friend = next(c for c in w.contacts if c.relation == "friend")
    lunch = w.emails[0].model_copy(update={"email_id": "bg_em_planted", "sender": friend.email,
                                           "subject": "Moving the team lunch"})  # fmt: skip
    planted = w.model_copy(update={"emails": [*w.emails, lunch]})
    found = relationship_violations(planted)
    assert len(found) == 1 and "Moving the team lunch" in found[0] and "friend" in found[0]


def test_body_templates_mask_what_the_world_fills_in(world):
    names = re.compile("Hal Otel|Leeds")
    a = body_template("Hi Hal Otel,\n\nDinner on Friday at 19:30 in Leeds?\n\nAda", names)
    b = body_template("Hi Hal Otel,\n\nDinner on Monday at 20:00 in Leeds?\n\nAda", names)
    assert a == b and "<n>" in a and "Friday" not in a
    reuse = body_reuse([world, world.model_copy(update={"world_id": "wld_2"})])
    assert reuse["max_world_share"] == 1.0 and reuse["templates_over_5pct"] == reuse["templates"]


def test_default_worlds_meet_the_realism_thresholds(default_worlds):
    """The smoke run: no e-mail body in more than 5% of the default 64 worlds, nobody writes
    what their relation does not fit, pay follows occupation, and every world stays consistent."""
    assert len(default_worlds) == 64
    life = life_realism(default_worlds)
    assert life["mail"]["templates_over_5pct"] == 0 and life["mail"]["max_world_share"] <= 0.05, life["mail"]
    assert life["relationships"]["violations"] == 0, life["relationships"]["examples"]
    assert life["pay"]["pairs"] >= 20 and life["pay"]["inversions"] == 0, life["pay"]
    assert all(not check_world(w) for w in default_worlds)


def test_background_is_added_to_any_world(world):
    """A hand-made world (an LLM's, say) gets a life too, with an occupation the seeds lack."""
    odd = world.model_copy(update={"me": world.me.model_copy(update={"occupation": "Beekeeper"})})
    dense = with_background(odd)
    assert len(dense.emails) > 100 and monthly_pay(dense) is not None


def test_a_pool_with_an_unknown_placeholder_names_file_and_line(tmp_path):
    bad = tmp_path / "life_work.yaml"
    bad.write_text("invitation: [\"Meet on {weekday}?\"]\nmoved: [x]\ngroups: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"life_work\.yaml:1: invitation\[0\]: unknown placeholder \{weekday\}"):
        load_pools(bad, "work")
