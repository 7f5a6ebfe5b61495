"""preparers/web_apps.py: world -> app state, deterministic and derived from the world."""

from __future__ import annotations

import json

import pytest

from guiforge.envs.apps import APP_NAMES, STATIC_DIR
from guiforge.envs.web.sample_world import sample_world
from guiforge.preparers.web_apps import PRODUCTS, app_state, web_setup


def test_every_app_has_a_builder_a_script_and_json_state():
    world = sample_world()
    index = (STATIC_DIR / "index.html").read_text()
    for app in APP_NAMES:
        assert f"/static/apps/{app}.js" in index and f"/static/apps/{app}.css" in index
        state = app_state(world, app)
        assert json.loads(json.dumps(state)) == state


def test_same_world_same_bytes_other_world_other_data():
    a = json.dumps(web_setup(sample_world()), sort_keys=True)
    b = json.dumps(web_setup(sample_world()), sort_keys=True)
    assert a == b
    other = web_setup(sample_world(world_id="w-sample-2"))
    shop_a = app_state(sample_world(), "shop")["catalog"]
    shop_b = other["apps"]["shop"]["catalog"]
    core = len(PRODUCTS)  # every world sells the core range (cards name it), plus a range of its own
    assert [p["name"] for p in shop_a][:core] == [p["name"] for p in shop_b][:core]
    assert [p["name"] for p in shop_a] != [p["name"] for p in shop_b]
    assert [p["price"] for p in shop_a][:core] != [p["price"] for p in shop_b][:core]  # prices derive from the world id


def test_catalog_and_flights_follow_the_trip_city():
    lisbon = sample_world()
    rome = sample_world(trip_city="Rome")
    assert any(p["name"] == "Lisbon pocket guide" for p in app_state(lisbon, "shop")["catalog"])
    assert any(p["name"] == "Rome pocket guide" for p in app_state(rome, "shop")["catalog"])
    travel = app_state(rome, "travel")
    assert travel["home"] == "ORD"
    outbound = [f for f in travel["flights"] if f["to"] == "FCO"]
    assert outbound and {f["depart"][:10] for f in outbound} == {"2024-06-02", "2024-06-03", "2024-06-04"}
    assert any(f["from"] == "FCO" and f["depart"].startswith("2024-06-06") for f in travel["flights"])


def test_mail_and_bank_carry_the_world_facts():
    world = sample_world()
    mail = app_state(world, "mail")
    invoice = mail["files"]["doc-invoice-2291"]
    assert invoice["total"] == world.fact("invoice_total").value == 412.5
    assert invoice["subtotal"] == 375 and invoice["tax"] == 37.5
    assert [m["id"] for m in mail["inbox"]][-1] == "e-offsite"  # chronological
    assert mail["inbox"][0]["attachments"] == [] and any(m["attachments"] for m in mail["inbox"])
    bank = app_state(world, "bank")
    assert len(bank["transactions"]) == len(world.transactions)
    assert {t["category"] for t in bank["transactions"]} >= {"Rent", ""}


def test_web_setup_rejects_unknown_apps_and_starts():
    world = sample_world()
    with pytest.raises(ValueError, match="no web app named 'photos'"):
        web_setup(world, ["photos"])
    with pytest.raises(ValueError, match="start must be"):
        web_setup(world, start="inbox")
    assert web_setup(world, ["mail"], start="mail")["start"] == "/mail/inbox"


def test_built_worlds_seed_and_render_every_app(web):
    """Worlds from the template builder (every shipped scenario) load into every app."""
    from web_env_helpers import task

    builder = pytest.importorskip("guiforge.worlds.template_builder")
    from guiforge.worlds.personas import build_personas
    from guiforge.worlds.scenarios import load_scenarios, suitable_scenarios

    scenarios = load_scenarios()
    personas = build_personas(12, seed=7)
    built = 0
    for scenario in list(scenarios.values())[:3]:  # three worlds keep this test short
        persona = next((p for p in personas if scenario in suitable_scenarios(p, scenarios)), None)
        if persona is None:
            continue
        world = builder.build_world(persona, scenario, seed=3)
        setup = web_setup(world)
        assert set(setup["apps"]) == set(APP_NAMES)
        for app in APP_NAMES:
            obs = web.reset(task(f"{scenario.id}-{app}", "web", [app], {**setup, "start": app}, []))
            assert obs.debug["path"].startswith(f"/{app}") and obs.debug["elements"]
        built += 1
    assert built >= 2
