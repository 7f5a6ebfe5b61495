"""The mobile domain: launcher, open_app, tap, long press, swipe, type, enter, back, home."""

from __future__ import annotations

from io import BytesIO

from PIL import Image
from web_env_helpers import Driver, crit, task

from guiforge.envs import Action
from guiforge.preparers.web_apps import web_setup


def test_launcher_open_app_back_home(mobile, world):
    obs = mobile.reset(task("m-nav", "mobile", ["mail"], web_setup(world), []))
    d = Driver(mobile, obs)
    assert d.path == "/" and obs.height > obs.width
    frame = (1082, 2203) if obs.debug["scale"] > 1 else (412, 839)  # device (surface, rounded up) or CSS pixels
    assert Image.open(BytesIO(obs.screenshot)).size == (obs.width, obs.height) == frame
    assert {f"open-{a}" for a in ("mail", "calendar", "shop", "chat")} <= d.ids()
    d.tap(id="open-mail")
    assert d.path == "/mail"
    d.tap(id="msg-e-dan")
    assert d.path == "/mail/inbox/e-dan"
    d.act(Action(type="back"))
    assert d.path == "/mail"
    d.tap(id="open-drawer")
    assert "folder-archive" in d.ids()
    assert d.act(Action(type="back")).feedback == "closed the open panel"
    assert "folder-archive" not in d.ids()
    d.act(Action(type="back"))
    assert d.path == "/"  # back from the app's first screen leaves it
    r = d.act(Action(type="back"), ok=False)
    assert r.error and "home screen" in r.error and not r.done
    d.act(Action(type="open_app", app="calendar"))
    assert d.path == "/calendar"
    d.act(Action(type="home"))
    assert d.path == "/"
    r = d.act(Action(type="open_app", app="photos"), ok=False)
    assert r.error and "no app named" in r.error


def test_swipe_scrolls_and_changes_month(mobile, world):
    d = Driver(mobile, mobile.reset(task("m-swipe", "mobile", ["shop"], web_setup(world, start="shop"), [])))

    def products() -> dict[str, int]:
        return {e["id"]: e["box"][1] for e in d.obs.debug["elements"] if (e["id"] or "").startswith("product-")}

    before = products()
    d.act(Action(type="swipe", x=500, y=800, x2=500, y2=300))
    after = products()
    shared = sorted(set(before) & set(after))
    assert shared, "a half-screen swipe should keep some products on screen"
    shift = before[shared[0]] - after[shared[0]]
    finger = 500 * d.obs.height / 999  # the finger's travel in screenshot pixels
    assert 0.85 * finger < shift < 1.15 * finger, shift  # content follows the finger, no fling
    d.act(Action(type="open_app", app="calendar"))
    assert "day-2024-05-14" in d.ids() and "day-2024-06-14" not in d.ids()
    d.act(Action(type="swipe", x=850, y=450, x2=150, y2=460))  # right to left: next month
    assert "day-2024-06-14" in d.ids() and "day-2024-05-14" not in d.ids()


def test_long_press_menu_type_enter_and_action_errors(mobile, world):
    rubric = [crit("archived", "state_contains", path="mail.archive[*].subject", text="June rent reminder"),
              crit("chat", "state_contains", path="chat.threads[1].messages[-1].text", text="on my way")]
    t = task("m-chat", "mobile", ["mail", "chat"], web_setup(world, ["mail", "chat"]), rubric)
    obs = mobile.reset(t)
    assert not mobile.evaluate().success
    d = Driver(mobile, obs)
    r = d.act(Action(type="type", text="hello"), ok=False)
    assert r.error and "nothing editable has focus" in r.error and not r.done
    r = d.act(Action(type="click", x=500, y=500), ok=False)
    assert r.error and "not in the mobile action set" in r.error
    r = d.act(Action(type="tap", x=500, y=150), ok=False)  # the clock widget: nothing to tap
    assert r.error and "hit nothing clickable" in r.error
    d.act(Action(type="open_app", app="mail"))
    d.click(id="msg-e-tom", kind="long_press")
    assert "menu-archive" in d.ids()
    d.tap(id="menu-archive")
    d.act(Action(type="home"))
    d.tap(id="open-chat")
    d.tap(id="thread-ch-family")
    d.tap(id="chat-input")
    d.type("On my way")
    d.act(Action(type="enter"))
    assert mobile.evaluate().success
    end = d.act(Action(type="answer", answer="done"), ok=False)
    assert end.done and end.answer == "done"
    mobile.reset(t)
    assert not mobile.evaluate().success


def test_css_pixel_frames_from_the_spec(manager, world):
    """``EnvSpec.screenshot_scale="css"`` gives 412x839 frames (about 6x cheaper to capture
    than device pixels); taps still land, since geometry follows the frame's pixels."""
    from guiforge.envs import EnvSpec

    with manager.acquire(EnvSpec(domain="mobile", screenshot_scale="css")) as lease:
        obs = lease.reset(task("m-css", "mobile", ["mail"], web_setup(world), []))
        assert Image.open(BytesIO(obs.screenshot)).size == (obs.width, obs.height) == (412, 839)
        d = Driver(lease, obs)
        d.tap(id="open-mail")
        assert d.path == "/mail"


def test_a_half_hidden_option_is_its_visible_part_and_a_swipe_on_it_scrolls(mobile, world):
    """A row cut by its scrolled list (an in-page dropdown taller than the screen) is
    reported by the part that shows, so the point a teacher aims at lands on the row inside
    the list, and a swipe from the last one scrolls the list instead of the page."""
    setup = web_setup(world, start="bank")
    bank = setup["apps"]["bank"]
    bank["categories"] = bank.get("categories", []) + [f"Extra {i}" for i in range(12)]
    d = Driver(mobile, mobile.reset(task("m-dropdown", "mobile", ["bank"], setup, [])))
    account = next(e["id"] for e in d.obs.debug["elements"] if (e["id"] or "").startswith("account-"))
    d.tap(id=account)
    d.tap(id="tx-category-filter")

    def options() -> list[dict]:
        return [e for e in d.obs.debug["elements"] if (e["id"] or "").startswith("tx-category-filter-option-")]

    shown = options()
    last = shown[-1]
    d.act(Action(type="swipe", x=last["grid"][0], y=last["grid"][1], x2=last["grid"][0], y2=last["grid"][1] - 200))
    after = options()
    assert after, "the swipe closed the dropdown (it scrolled the page, not the list)"
    assert after[0]["id"] != shown[0]["id"], "the list did not scroll"
    assert {e["label"] for e in after} & {f"Extra {i}" for i in range(12)}


def test_a_dialog_with_a_long_address_stays_on_a_phone_screen(mobile, world):
    """An attendee's long e-mail address wraps inside the event dialog instead of widening
    it past the screen's edge (where its close button could not be tapped)."""
    setup = web_setup(world, start="calendar")
    event = setup["apps"]["calendar"]["events"][0]
    event["attendees"][0]["email"] = "hermenegildo.maximiliano.fernandezvillaverde@removalsandstorage.example"
    d = Driver(mobile, mobile.reset(task("m-dialog", "mobile", ["calendar"], setup, [])))
    d.tap(id=f"day-{event['start'][:10]}")
    d.tap(id=f"event-{event['id']}")
    close = next((e for e in d.obs.debug["elements"] if e["id"] == "dialog-close"), None)
    assert close is not None, "the dialog's close button is off screen"
    assert close["box"][0] + close["box"][2] <= d.obs.width
    d.tap(id="dialog-close")
    assert "dialog-close" not in d.ids()


def test_a_dropdown_opens_in_a_scrolled_list(mobile, world):
    """A category dropdown far down a long account (a dense world's payments) opens after
    swipes: putting the list back where it was when the dropdown re-renders is not a scroll
    that closes it."""
    from guiforge.worlds.background import with_background

    dense = with_background(world)
    obs = mobile.reset(task("m-drop", "mobile", ["bank"], web_setup(dense, ["bank"]), []))
    d = Driver(mobile, obs)
    d.act(Action(type="open_app", app="bank"))
    d.tap(id="account-acc-checking")
    for _ in range(3):
        d.act(Action(type="swipe", x=500, y=750, x2=500, y2=350))
    selects = [e for e in d.obs.debug["elements"] if (e["id"] or "").startswith("category-") and 150 < e["grid"][1] < 900]
    assert selects, "no category dropdown on screen after scrolling the account"
    target = selects[-1]["id"]
    d.tap(id=target)
    options = [e for e in d.obs.debug["elements"] if (e["id"] or "").startswith(f"{target}-option-")]
    assert options, f"{target} did not open in the scrolled list"
