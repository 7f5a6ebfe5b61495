"""The screens around the apps (static/chrome.js) in real Chromium: a browser's tab strip
and toolbar around a web app, a phone's status and navigation bars around a mobile one.
They are drawn inside the viewport, so the element scan places them and every click made
from the scan lands (on the chrome and on the app under it), and their controls work as a
browser's and a phone's do. A theme's accent and palette restyle the apps themselves."""

from __future__ import annotations

import pytest
from web_env_helpers import Driver, task

from guiforge.envs import EnvSpec
from guiforge.envs.web.mobile_env import MobileEnv
from guiforge.envs.web.web_env import WebEnv
from guiforge.preparers.web_apps import web_setup

BROWSER = {"browser": {"tabs": 2, "offset": 1}}
PHONE = {"phone": {"nav": "buttons", "battery": 40}}


def element(driver: Driver, id_: str) -> dict:
    return next(e for e in driver.obs.debug["elements"] if e["id"] == id_)


@pytest.fixture
def direct_browser():
    env = WebEnv(EnvSpec(domain="web"))
    env.start()
    yield env
    env.close()


def test_a_web_app_inside_a_browser_that_works(direct_browser, world):
    direct_web = direct_browser
    spec = task("scr-web", "web", ["mail"], web_setup(world, ["mail"], start="mail"), [])
    spec = spec.model_copy(update={"presentation": {**BROWSER, "viewport": [1280, 720],
                                                    "theme": {"name": "sand", "accent": "#b45309", "palette": "sand"}}})
    obs = direct_web.reset(spec)
    d = Driver(direct_web, obs)
    start = d.path
    address = element(d, "gf-address")
    assert address["value"] == f"apps.guiforge.test{start}" and address["box"][1] < 78
    tabs = [e for e in obs.debug["elements"] if e["role"] == "tab"]
    assert len(tabs) == 3 and "Mail" in {t["label"] for t in tabs}
    assert element(d, "gf-back")["disabled"] and element(d, "gf-forward")["disabled"]  # a fresh history
    # the app sits below the browser's bars: everything it shows starts under them
    assert min(e["box"][1] for e in obs.debug["elements"] if not (e["id"] or "").startswith("gf-")) >= 78
    # the theme restyles the app: its accent, not the app's own red, on the app's primary button
    colour = direct_web.s.page.evaluate("() => getComputedStyle(document.querySelector('.app')).getPropertyValue('--accent')")
    assert colour.strip() == "#b45309"
    assert direct_web.s.page.evaluate("() => document.documentElement.dataset.palette") == "sand"

    row = next(e for e in obs.debug["elements"] if (e["id"] or "").startswith("msg-"))
    d.click(id=row["id"])  # a click from the scan lands on the message under the bars
    opened = d.path
    assert opened != start and element(d, "gf-address")["value"].endswith(opened)
    d.click(id="gf-back")
    assert d.path == start and not element(d, "gf-forward")["disabled"]
    d.click(id="gf-forward")
    assert d.path == opened
    d.click(id="gf-address")  # typed into the address bar, Enter opens it
    d.type("apps.guiforge.test/calendar\n")
    assert d.path.startswith("/calendar") and element(d, "gf-address")["value"].endswith(d.path)
    d.click(id="gf-address")
    d.type("example.com\n")  # the network is closed: a browser's error page, not a crash
    assert any("can't be reached" in (e["label"] or "") for e in d.obs.debug["elements"] if e["role"] == "alert")
    other = next(t for t in tabs if t["label"] not in ("Mail", "Calendar"))
    d.click(id=other["id"])
    assert d.path.strip("/").split("/")[0] == other["label"].lower()
    assert element(d, other["id"])["label"] == other["label"]
    # a plain task has no browser around it
    plain = direct_web.reset(spec.model_copy(update={"presentation": {}}))
    assert not any((e["id"] or "").startswith("gf-") for e in plain.debug["elements"])


@pytest.fixture
def direct_phone():
    """A MobileEnv on the test thread, so the status bar (hidden from the scan) can be read;
    one per test, as the thread holds one Playwright at a time."""
    env = MobileEnv(EnvSpec(domain="mobile", screenshot_scale="css"))
    env.start()
    yield env
    env.close()


def test_a_phone_with_its_status_and_navigation_bars(direct_phone, world):
    env = direct_phone
    spec = task("scr-phone", "mobile", ["mail", "chat"], web_setup(world, ["mail", "chat"]), [])
    spec = spec.model_copy(update={"presentation": {**PHONE, "viewport": [390, 750]}})
    d = Driver(env, env.reset(spec))
    status = env.s.page.evaluate("() => document.querySelector('.gf-statusbar').innerText")
    # the world's clock (its day starts at 09:00), a battery at the drawn level, unread-mail notice
    assert status.split()[0] == "9:00" and "40%" in status
    assert env.s.page.evaluate("() => document.querySelectorAll('.gf-statusbar .gf-notice').length") >= 1
    assert d.path == "/"
    d.tap(id="open-mail")
    assert d.path.startswith("/mail")
    assert {"gf-nav-back", "gf-nav-home", "gf-nav-recents"} <= d.ids()
    # the navigation bar is the bottom of the screen; the app ends above it
    assert element(d, "gf-nav-home")["box"][1] >= 750 - 48
    assert max(e["box"][1] + e["box"][3] for e in d.obs.debug["elements"]
               if not (e["id"] or "").startswith("gf-")) <= 750 - 48
    row = next(e for e in d.obs.debug["elements"] if (e["id"] or "").startswith("msg-"))
    d.tap(id=row["id"])  # a tap from the scan lands on the message between the bars
    assert d.path.count("/") >= 2
    d.tap(id="gf-nav-back")
    assert d.path.startswith("/mail") and d.path.count("/") < 3
    d.tap(id="gf-nav-home")
    assert d.path == "/"
    d.tap(id="gf-nav-recents")
    d.tap(id="gf-recent-mail")
    assert d.path.startswith("/mail")
    # a gesture phone has a pill and no buttons: the agent's back and home actions work it
    gesture = env.reset(spec.model_copy(update={"presentation": {"phone": {"nav": "gesture"}, "viewport": [390, 750]}}))
    assert not {"gf-nav-back", "gf-nav-home"} & {e["id"] for e in gesture.debug["elements"]}
    assert env.s.page.evaluate("() => !!document.querySelector('.gf-navbar.gesture .gf-pill')")
