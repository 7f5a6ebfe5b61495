"""The scripted teacher inside the browser drawn around a web app (static/chrome.js): it
switches to an app open in a tab by clicking the tab, as a person does, and keeps to
``goto`` where no tab holds the app; its slips never land on the browser's or phone's
own bars (their recovery is the app's, not the browser's)."""

from __future__ import annotations

from guiforge.envs.base import Observation
from guiforge.teacher.mistakes import neighbour
from guiforge.teacher.reference import ReferenceProgram
from guiforge.teacher.slips import tab_neighbour


def tab(i: int, label: str, x: int) -> dict:
    return {"id": f"gf-tab-{i}", "role": "tab", "tag": "div", "label": label, "box": [x, 6, 200, 30],
            "grid": [int((x + 100) / 1.28), 29]}


def first_action(obs: Observation, app: str):
    return ReferenceProgram([{"do": "open", "app": app}], "web").send(obs)


def test_open_clicks_the_apps_tab_else_goes_there():
    obs = Observation(debug={"elements": [tab(0, "Mail", 8), tab(1, "Calendar", 210)], "path": "/mail/inbox"})
    plan = first_action(obs, "calendar")
    assert (plan.action.type, plan.action.x, plan.action.y) == ("click", *tab(1, "Calendar", 210)["grid"])
    assert "tab" in plan.thought
    plan = first_action(obs, "bank")
    assert (plan.action.type, plan.action.text) == ("goto", "bank")


def test_slips_stay_off_the_browsers_tabs():
    tabs = [tab(0, "Mail", 8), tab(1, "Calendar", 210), tab(2, "Shop", 412)]
    obs = Observation(debug={"elements": tabs})
    assert tab_neighbour(obs, tabs[1]) is None and neighbour(obs, tabs[1]) is None
    # the same row as the app's own tabs is a row a slip may use
    own = [{**t, "id": f"view-{i}"} for i, t in enumerate(tabs)]
    assert tab_neighbour(Observation(debug={"elements": own}), own[1]) is not None
