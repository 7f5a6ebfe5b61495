"""Fixtures for the worlds tests: scenarios loaded once, personas from every locale, and a
small hand-made world that is consistent (tests break it one way at a time)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from guiforge.worlds.model import (
    Chat,
    ChatMessage,
    Contact,
    Document,
    Email,
    Event,
    Fact,
    LineItem,
    Note,
    Persona,
    Sheet,
    Transaction,
    World,
)
from guiforge.worlds.personas import build_personas
from guiforge.worlds.scenarios import load_scenarios
from guiforge.worlds.seeds import load_persona_seeds


@pytest.fixture(scope="session")
def scenarios():
    return load_scenarios()


@pytest.fixture(scope="session")
def personas_by_locale():
    """The first persona of each locale in the seed file (seed 11 covers all of them)."""
    out: dict[str, Persona] = {}
    for p in build_personas(100, seed=11):
        out.setdefault(p.locale, p)
    assert set(out) == set(load_persona_seeds().locales)
    return out


ME = Persona(
    persona_id="per_0000000001", name="Ada Example", locale="en_GB", age=40, occupation="Accountant",
    employer="Example Ltd", city="Leeds", country="United Kingdom", email="ada@example.co.uk",
    phone="0113 000 0000", traits=["organized", "punctual"], goals=["file claims on time"],
)  # fmt: skip


def good_world() -> World:
    """A small world that passes every check."""
    return World(
        world_id="wld_test",
        persona_id=ME.persona_id,
        scenario="hand_made",
        title="Hand-made world",
        base_date=date(2024, 5, 20),
        currency="GBP",
        me=ME,
        contacts=[
            Contact(
                contact_id="c_hotel",
                name="Hal Otel",
                email="hal@hotel.co.uk",
                phone="1",
                role="front desk",
            ),
            Contact(
                contact_id="c_boss",
                name="Bo Ss",
                email="bo@example.co.uk",
                phone="2",
                role="manager",
            ),
        ],
        events=[
            Event(
                event_id="ev_trip",
                title="Trip",
                start=datetime(2024, 5, 2, 9),
                end=datetime(2024, 5, 2, 17),
                attendees=["c_boss"],
            ),  # fmt: skip
        ],
        documents=[
            Document(
                document_id="inv_hotel",
                kind="invoice",
                title="Invoice",
                filename="invoice.pdf",
                author="c_hotel",
                currency="GBP",
                tax_rate=0.2,
                total=412.5,
                line_items=[
                    LineItem(description="Room", quantity=3, unit_price=95.0, amount=285.0),
                    LineItem(description="Breakfast", quantity=3, unit_price=15.0, amount=45.0),
                    LineItem(description="City tax", quantity=1, unit_price=13.75, amount=13.75),
                ],
                fields={"Invoice total": "£412.50"},
            ),  # fmt: skip
            Document(
                document_id="claim",
                kind="spreadsheet",
                title="Claim",
                filename="claim.xlsx",
                sheets=[
                    Sheet(
                        name="Expenses",
                        columns=["Item", "Amount"],
                        total_column="Amount",
                        rows=[["Hotel", 412.5], ["Taxi", 37.25], ["Total", 449.75]],
                    )
                ],
            ),  # fmt: skip
        ],
        facts=[
            Fact(key="hotel_total", kind="money", value=412.5, source="doc:inv_hotel.total"),
            Fact(
                key="claim_total",
                kind="money",
                value=449.75,
                source="doc:claim.sheet:Expenses.total",
            ),
            Fact(key="trip_date", kind="date", value="2024-05-02", source="event:ev_trip.date"),
            Fact(key="cost_centre", kind="text", value="CC-1234"),
            Fact(key="taxi", kind="money", value=-37.25, source="tx:tx_taxi.amount"),
        ],
        emails=[
            Email(
                email_id="em_invoice",
                sender="hal@hotel.co.uk",
                to=["ada@example.co.uk"],
                subject="Your invoice",
                body="Invoice attached. The total is £412.50 including tax.\n",
                sent_at=datetime(2024, 5, 3, 10),
                attachments=["inv_hotel"],
                cites=["hotel_total"],
            ),
            Email(
                email_id="em_claim",
                folder="sent",
                sender="ada@example.co.uk",
                to=["bo@example.co.uk"],
                cc=["hal@hotel.co.uk"],
                subject="Claim",
                body="Claim total: 449.75 GBP for the trip on 2 May 2024, cost centre CC-1234.\n",
                sent_at=datetime(2024, 5, 19, 9),
                attachments=["claim"],
                cites=["claim_total", "trip_date", "cost_centre"],
            ),
        ],  # fmt: skip
        chats=[
            Chat(
                chat_id="ch_boss",
                title="Bo",
                participants=["c_boss"],
                messages=[
                    ChatMessage(
                        sender="c_boss", text="When was the trip?", sent_at=datetime(2024, 5, 19, 8)
                    ),
                    ChatMessage(
                        sender="me",
                        text="On May 2nd, taxi was £37.25",
                        sent_at=datetime(2024, 5, 19, 8, 5),
                        cites=["trip_date", "taxi"],
                    ),
                ],
            ),
        ],  # fmt: skip
        notes=[
            Note(
                note_id="note",
                title="To do",
                body="Claim 1,234? no: £449.75 total.",
                cites=["claim_total"],
            )
        ],
        transactions=[
            Transaction(
                transaction_id="tx_taxi", booked_on=date(2024, 5, 2), payee="Taxi", amount=-37.25
            )
        ],
    )


@pytest.fixture
def world() -> World:
    return good_world()
