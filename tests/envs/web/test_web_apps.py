"""Each app, seeded from a world, driven by real clicks and typing through EnvManager to a
state its rubric accepts; a reset then restores the seed and the rubric fails again."""

from __future__ import annotations

import pytest
from web_env_helpers import Driver, crit, task

from guiforge.envs import Action
from guiforge.preparers.web_apps import app_state, web_setup


def run(lease, t, drive) -> None:
    """Initial state fails, the drive passes, a reset fails again."""
    obs = lease.reset(t)
    before = lease.evaluate()
    assert not before.success, before
    drive(Driver(lease, obs))
    after = lease.evaluate()
    assert after.success, after
    lease.reset(t)
    again = lease.evaluate()
    assert not again.success and again.criteria == before.criteria, again


def test_mail_forward_attachment_after_viewing_it(web, world):
    rubric = [
        crit("to", "state_contains", path="mail.sent[-1].to[*]", text="june.park@ledgerwise.example"),
        crit("attached", "state_contains", path="mail.sent[-1].attachments[*].filename", text="INV-2291.pdf"),
        crit("note", "state_contains", path="mail.sent[-1].body", text=["please pay", "412.50"]),
        crit("subject", "state_equals", path="mail.sent[-1].subject", value="Fwd: Invoice INV-2291 for your print order"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="msg-e-invoice")
        assert d.path == "/mail/inbox/e-invoice"
        d.click(id="open-attachment-doc-invoice-2291")
        assert "viewer-close" in d.ids() and "msg-forward" not in d.ids()  # the viewer covers the message
        d.click(id="viewer-close")
        d.click(id="msg-forward")
        d.fill("compose-to", "june.park@ledgerwise.example")
        d.click(id="compose-body")
        d.act(Action(type="key", keys=["ctrl", "home"]))
        d.type("Hi June, please pay this invoice (412.50 total).\n")
        d.click(id="compose-send")
        assert d.path == "/mail/inbox"

    run(web, task("mail-fwd", "web", ["mail"], web_setup(world, ["mail"]), rubric), drive)


def test_mail_compose_by_contact_name_with_picked_attachment(web, world):
    rubric = [
        crit("to", "state_equals", path="mail.sent[-1].to[0]", value="daniel.okafor@northwind.example"),
        crit("subject", "state_contains", path="mail.sent[-1].subject", text="Rollout status"),
        crit("attached", "state_contains", path="mail.sent[-1].attachments[*].filename", text="q2-kickoff.pptx"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="compose")
        d.click(id="compose-send")  # no recipient yet: the app refuses and says why
        assert "compose-error" in d.ids()
        d.fill("compose-to", "Daniel Okafor")
        d.fill("compose-subject", "Rollout status")
        d.fill("compose-body", "9 of 14 depots are live.")
        d.click(id="compose-attach")
        d.click(id="attach-doc-kickoff")
        d.click(id="attach-done")
        d.click(id="compose-send")

    run(web, task("mail-compose", "web", ["mail"], web_setup(world, ["mail"]), rubric), drive)


def test_calendar_create_with_attendee_and_edit_event(web, world):
    rubric = [
        crit("title", "state_equals", path="calendar.events[-1].title", value="Offsite prep"),
        crit("start", "state_equals", path="calendar.events[-1].start", value="2024-05-22T15:00:00"),
        crit("attendee", "state_contains", path="calendar.events[-1].attendees[*].email", text="lena.fischer@northwind.example"),
        crit("moved", "state_equals", path="calendar.events[*].location", value="Riverside Dental"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="cal-create")
        d.fill("event-title", "Offsite prep")
        d.fill("event-date", "2024-05-22", clear=True)
        d.fill("event-start", "3 PM", clear=True)
        d.fill("event-end", "16:00", clear=True)
        d.fill("event-attendees", "Lena")
        d.click(id="suggest-lena.fischer@northwind.example")
        d.click(id="event-save")
        assert "event-editor" not in d.ids() and "event-offsite-prep" not in d.ids()
        d.click(id="event-ev-dentist")
        d.click(id="event-edit")
        d.fill("event-location", "Riverside Dental", clear=True)
        d.click(id="event-save")
        d.click(id="view-week")
        assert d.path == "/calendar/week"

    run(web, task("cal", "web", ["calendar"], web_setup(world, ["calendar"]), rubric), drive)


def test_contacts_search_edit_and_add(web, world):
    rubric = [
        crit("phone", "state_equals", path="contacts.contacts[*].phone", value="+1 312 555 0000"),
        crit("added", "state_contains", path="contacts.contacts[-1].email", text="rita.gomez@example.com"),
    ]

    def drive(d: Driver) -> None:
        d.fill("contacts-search", "okafor")
        assert [e for e in d.ids() if e.startswith("contact-c-")] == ["contact-c-dan"]
        d.click(id="contact-c-dan")
        d.click(id="contact-edit")
        d.fill("contact-phone", "+1 312 555 0000", clear=True)
        d.click(id="contact-save")
        d.click(id="contact-new")
        d.fill("contact-name", "Rita Gomez")
        d.fill("contact-email", "rita.gomez@example.com")
        d.choose("contact-relation", "Friend")
        d.click(id="contact-save")
        assert d.path.startswith("/contacts/contact-")

    run(web, task("contacts", "web", ["contacts"], web_setup(world, ["contacts"]), rubric), drive)


def test_shop_filter_product_cart_checkout(web, world):
    shop = app_state(world, "shop")  # tax: the home country's rate (data/countries.yaml)
    adapter = next(p for p in shop["catalog"] if p["name"] == "Universal travel adapter")
    subtotal = round(adapter["price"] * 2, 2)
    shipping = 0 if subtotal >= shop["free_shipping_over"] else 4.99
    total = round(subtotal + shipping + round(subtotal * shop["tax_rate"], 2), 2)
    rubric = [
        crit("qty", "state_equals", path="shop.orders[-1].items[0].qty", value=2),
        crit("sku", "state_equals", path="shop.orders[-1].items[0].sku", value=adapter["sku"]),
        crit("address", "state_contains", path="shop.orders[-1].shipping_address.address", text="12 Rua Augusta"),
        crit("total", "state_equals", path="shop.orders[-1].total", value=total),
        crit("card", "state_equals", path="shop.orders[-1].payment.card_last4", value="4242"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="filter-cat-travel")
        assert f"product-{adapter['sku']}" in d.ids()
        d.fill("shop-search", "adapter")
        d.click(id=f"product-{adapter['sku']}")
        d.click(id="qty-plus")
        d.click(id="add-to-cart")
        d.click(id="cart-button")
        d.click(id="checkout")
        d.fill("ship-address", "12 Rua Augusta")
        d.fill("ship-postal", "1100-053")
        d.click(id="place-order")
        assert "checkout-error" in d.ids()  # no card yet
        d.fill("card-number", "4242 4242 4242 4242")
        d.fill("card-name", "Maya Patel")
        d.fill("card-expiry", "08/27")
        d.fill("card-cvc", "123")
        d.click(id="place-order")
        assert d.path.startswith("/shop/order/")

    run(web, task("shop", "web", ["shop"], web_setup(world, ["shop"]), rubric), drive)


def test_notes_create_and_edit(web, world):
    rubric = [
        crit("new", "state_equals", path="notes.notes[-1].title", value="Call the venue"),
        crit("body", "state_contains", path="notes.notes[-1].body", text="projector"),
        crit("edited", "state_contains", path="notes.notes[0].body", text="Sunscreen"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="note-new")
        d.type("Call the venue")
        d.fill("note-body", "Ask Sofia about the projector")
        d.click(id="note-n-packing")
        d.click(id="note-body")
        d.act(Action(type="key", keys=["ctrl", "end"]))
        d.type("\nSunscreen")

    run(web, task("notes", "web", ["notes"], web_setup(world, ["notes"]), rubric), drive)


def test_bank_categorise_and_transfer(web, world):
    txs = app_state(world, "bank")["transactions"]
    netflix = next(i for i, t in enumerate(txs) if t["payee"] == "Netflix")
    rubric = [
        crit("category", "state_equals", path=f"bank.transactions[{netflix}].category", value="Subscriptions"),
        crit("amount", "state_equals", path="bank.transfers[-1].amount", value=412.50),
        crit("payee", "state_equals", path="bank.transfers[-1].to_name", value="Acme Print Co"),
        crit("ref", "state_contains", path="bank.transfers[-1].reference", text="INV-2291"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="account-acc-checking")
        d.choose("category-t-8", "Subscriptions")
        d.click(id="transfer-from-account")
        d.choose("transfer-to", "Acme Print Co")
        d.fill("transfer-amount", "412.50")
        d.fill("transfer-reference", "INV-2291")
        d.click(id="transfer-review")
        assert d.path == "/bank/transfer/review"
        d.click(id="transfer-confirm")
        assert d.path.startswith("/bank/done/")

    run(web, task("bank", "web", ["bank"], web_setup(world, ["bank"]), rubric), drive)


def test_travel_search_seat_passenger_pay(web, world):
    rubric = [
        crit("to", "state_equals", path="travel.bookings[-1].to", value="LIS"),
        crit("day", "state_contains", path="travel.bookings[-1].depart", text="2024-06-03"),
        crit("name", "state_equals", path="travel.bookings[-1].passengers[0].last_name", value="Patel"),
        crit("seat", "state_count", path="travel.bookings[-1].passengers[0].seat", min=1),
    ]

    def drive(d: Driver) -> None:
        d.fill("search-to", "Lis")
        d.click(id="to-option-LIS")
        d.fill("search-date", "2024-06-03")
        d.click(id="search-flights")
        assert d.path == "/travel/results"
        first = next(e["id"] for e in d.obs.debug["elements"] if (e["id"] or "").startswith("select-fl-ORD-LIS-0603"))
        d.click(id=first)
        free = next(e["id"] for e in d.obs.debug["elements"] if (e["id"] or "").startswith("seat-") and "available" in e["label"])
        d.click(id=free)
        d.click(id="seats-continue")
        d.fill("p1-first", "Maya")
        d.fill("p1-last", "Patel")
        d.fill("p1-dob", "1990-04-21")
        d.fill("p1-email", "maya.patel@northwind.example")
        d.click(id="passengers-continue")
        d.fill("pay-card", "4111 1111 1111 1111")
        d.fill("pay-name", "Maya Patel")
        d.fill("pay-expiry", "09/28")
        d.fill("pay-cvc", "321")
        d.click(id="confirm-booking")
        assert d.path.startswith("/travel/booking/")

    run(web, task("travel", "web", ["travel"], web_setup(world, ["travel"]), rubric), drive)


def test_chat_reply_and_new_conversation(web, world):
    rubric = [
        crit("reply", "state_contains", path="chat.threads[1].messages[-1].text", text="see you at 7"),
        crit("new", "state_equals", path="chat.threads[-1].title", value="June Park"),
        crit("hello", "state_equals", path="chat.threads[-1].messages[0].text", value="Hi June, got a minute?"),
    ]

    def drive(d: Driver) -> None:
        d.click(id="thread-ch-family")
        d.click(id="chat-input")
        d.type("Yes, see you at 7!\n")  # Enter sends
        d.click(id="chat-new")
        d.click(id="new-chat-c-june")
        d.fill("chat-input", "Hi June, got a minute?")
        d.click(id="chat-send")

    run(web, task("chat", "web", ["chat"], web_setup(world, ["chat"]), rubric), drive)


@pytest.mark.parametrize("app", ["mail", "shop"])
def test_goto_between_apps_keeps_state(web, world, app):
    """A cross-app task: the app switcher and goto reach every app; state survives both."""
    t = task("switch", "web", ["mail", "shop"], web_setup(world, ["mail", "shop"], start=app), [])
    d = Driver(web, web.reset(t))
    d.click(id="app-switcher")
    d.click(id="switch-notes")
    assert d.path == "/notes"
    d.act(Action(type="goto", text="contacts"))
    assert d.path == "/contacts"
    r = d.act(Action(type="goto", text="https://example.com/"), ok=False)
    assert r.error and "network is blocked" in r.error and d.path == "/contacts"
    d.act(Action(type="back"))
    assert d.path == "/notes"
