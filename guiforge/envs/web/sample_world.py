"""A hand-written world for demos and tests of the web apps, built from the World model
directly (it does not depend on the world builders)."""

from __future__ import annotations

from datetime import date, datetime

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
    Slide,
    Transaction,
    World,
)


def _dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


def sample_world(world_id: str = "w-sample-1", trip_city: str = "Lisbon") -> World:
    me = Persona(
        persona_id="p-maya", name="Maya Patel", locale="en_US", age=34, occupation="Project manager",
        employer="Northwind Logistics", city="Chicago", country="United States",
        email="maya.patel@northwind.example", phone="+1 312 555 0142",
        traits=["organised", "direct"], goals=["ship the Q2 rollout", "plan the Lisbon offsite"],
    )
    contacts = [
        Contact(contact_id="c-dan", name="Daniel Okafor", email="daniel.okafor@northwind.example", phone="+1 312 555 0190",
                role="manager", organization="Northwind Logistics", relation="colleague"),
        Contact(contact_id="c-lena", name="Lena Fischer", email="lena.fischer@northwind.example", phone="+1 312 555 0117",
                role="analyst", organization="Northwind Logistics", relation="colleague"),
        Contact(contact_id="c-acme", name="Carlos Ruiz", email="billing@acmeprint.example", phone="+1 773 555 0101",
                role="vendor", organization="Acme Print Co", relation="vendor"),
        Contact(contact_id="c-sofia", name="Sofia Marques", email="sofia@lisbonevents.example", phone="+351 21 555 0134",
                role="event planner", organization="Lisbon Events", relation="vendor"),
        Contact(contact_id="c-priya", name="Priya Patel", email="priya.patel@mailbox.example", phone="+1 630 555 0188",
                role="sister", relation="family"),
        Contact(contact_id="c-tom", name="Tom Becker", email="tom.becker@harbor.example", phone="+1 312 555 0166",
                role="landlord", organization="Harbor Property", relation="landlord"),
        Contact(contact_id="c-june", name="June Park", email="june.park@ledgerwise.example", phone="+1 312 555 0173",
                role="accountant", organization="Ledgerwise", relation="accountant"),
        Contact(contact_id="c-omar", name="Omar Haddad", email="omar.haddad@northwind.example", phone="+1 312 555 0125",
                role="engineer", organization="Northwind Logistics", relation="colleague"),
    ]
    invoice = Document(
        document_id="doc-invoice-2291", kind="invoice", title="Invoice INV-2291", filename="INV-2291.pdf",
        author="c-acme", currency="USD", tax_rate=0.10, total=412.50,
        line_items=[
            LineItem(description="Business cards (box of 500)", quantity=1, unit_price=75.00, amount=75.00),
            LineItem(description="Tri-fold brochures", quantity=200, unit_price=1.25, amount=250.00),
            LineItem(description="Vinyl banner 2x6 ft", quantity=1, unit_price=50.00, amount=50.00),
        ],
        fields={"Invoice no.": "INV-2291", "Issued": "May 10, 2024", "Due": "June 9, 2024", "Bill to": "Northwind Logistics"},
    )
    budget = Document(
        document_id="doc-budget", kind="spreadsheet", title="Offsite budget", filename="offsite-budget.xlsx",
        author="c-lena", currency="USD",
        sheets=[Sheet(name="Budget", columns=["Item", "Owner", "Estimate"], rows=[
            ["Venue", "Sofia", 4200], ["Flights", "Maya", 6800], ["Hotel", "Maya", 5400], ["Dinners", "Lena", 1900],
        ])],
    )
    deck = Document(
        document_id="doc-kickoff", kind="slides", title="Q2 rollout kickoff", filename="q2-kickoff.pptx", author="me",
        slides=[Slide(title="Q2 rollout", bullets=["Scope: 14 depots", "Go-live: June 24"]),
                Slide(title="Risks", bullets=["Scanner firmware", "Driver training backlog"])],
    )
    itinerary = Document(
        document_id="doc-itinerary", kind="itinerary", title=f"{trip_city} offsite itinerary", filename="offsite-itinerary.txt",
        author="c-sofia", paragraphs=[f"Day 1 (June 3): arrive in {trip_city}, check in at Hotel Miradouro.",
                                       "Day 2 (June 4): workshop 9:00-16:00 at the Alfama studio.",
                                       "Day 3 (June 5): team dinner at 19:30."],
    )
    emails = [
        Email(email_id="e-invoice", sender="billing@acmeprint.example", to=[me.email], subject="Invoice INV-2291 for your print order",
              body="Hi Maya,\n\nPlease find attached invoice INV-2291 for the brochures, business cards and banner.\n"
                   "The total due is $412.50, payable by June 9.\n\nThanks,\nCarlos Ruiz\nAcme Print Co",
              sent_at=_dt("2024-05-13T16:05:00"), attachments=["doc-invoice-2291"], cites=["invoice_total"]),
        Email(email_id="e-offsite", sender="sofia@lisbonevents.example", to=[me.email], cc=["lena.fischer@northwind.example"],
              subject=f"{trip_city} offsite: itinerary draft", body=f"Hello Maya,\n\nHere is the draft itinerary for {trip_city}. "
              "Let me know if the workshop times work for the team.\n\nBest,\nSofia", sent_at=_dt("2024-05-14T08:12:00"),
              attachments=["doc-itinerary"]),
        Email(email_id="e-budget", sender="lena.fischer@northwind.example", to=[me.email], subject="Offsite budget v2",
              body="Maya, updated budget attached. Flights are the biggest line now.\n\nLena", sent_at=_dt("2024-05-12T11:40:00"),
              attachments=["doc-budget"], read=True),
        Email(email_id="e-dan", sender="daniel.okafor@northwind.example", to=[me.email], subject="Rollout status for Thursday",
              body="Can you send me a short status on the Q2 rollout before Thursday's review? Two or three bullets are fine.",
              sent_at=_dt("2024-05-14T07:55:00")),
        Email(email_id="e-tom", sender="tom.becker@harbor.example", to=[me.email], subject="June rent reminder",
              body="Hi Maya, a friendly reminder that June rent of $1,850.00 is due on June 1.\n\nTom", sent_at=_dt("2024-05-10T09:00:00"),
              read=True),
        Email(email_id="e-priya", sender="priya.patel@mailbox.example", to=[me.email], subject="Mom's birthday dinner",
              body="Are you free on Saturday the 25th for Mom's birthday? Thinking 7pm at Lula Cafe.", sent_at=_dt("2024-05-11T20:14:00")),
        Email(email_id="e-sent-1", folder="sent", sender=me.email, to=["omar.haddad@northwind.example"], subject="Scanner firmware",
              body="Omar, can you confirm the firmware version for the depot scanners?", sent_at=_dt("2024-05-09T15:30:00"), read=True),
        Email(email_id="e-arch-1", folder="archive", sender="june.park@ledgerwise.example", to=[me.email], subject="Your 2023 return was filed",
              body="Good news: your 2023 return was accepted.", sent_at=_dt("2024-04-15T10:00:00"), read=True),
    ]
    events = [
        Event(event_id="ev-sync", title="Team sync", start=_dt("2024-05-14T10:00:00"), end=_dt("2024-05-14T10:30:00"),
              location="Room 4B", attendees=["c-dan", "c-lena", "c-omar"]),
        Event(event_id="ev-review", title="Q2 rollout review", start=_dt("2024-05-16T14:00:00"), end=_dt("2024-05-16T15:00:00"),
              location="Board room", attendees=["c-dan"], description="Status of the 14 depots"),
        Event(event_id="ev-dentist", title="Dentist", start=_dt("2024-05-21T08:30:00"), end=_dt("2024-05-21T09:15:00"),
              location="Lakeview Dental"),
        Event(event_id="ev-dinner", title="Mom's birthday dinner", start=_dt("2024-05-25T19:00:00"), end=_dt("2024-05-25T21:00:00"),
              location="Lula Cafe", attendees=["c-priya"]),
        Event(event_id="ev-offsite", title=f"{trip_city} offsite", start=_dt("2024-06-03T09:00:00"), end=_dt("2024-06-05T18:00:00"),
              location=trip_city, attendees=["c-lena", "c-sofia"]),
    ]
    chats = [
        Chat(chat_id="ch-lena", title="Lena Fischer", participants=["c-lena"], messages=[
            ChatMessage(sender="c-lena", text="Did you see the budget update?", sent_at=_dt("2024-05-13T17:02:00")),
            ChatMessage(sender="me", text="Yes, looking now. Flights look high.", sent_at=_dt("2024-05-13T17:05:00")),
            ChatMessage(sender="c-lena", text="Agreed. Can you check cheaper options for June 3?", sent_at=_dt("2024-05-13T17:06:00")),
        ]),
        Chat(chat_id="ch-family", title="Family", participants=["c-priya"], messages=[
            ChatMessage(sender="c-priya", text="Dinner on the 25th still on?", sent_at=_dt("2024-05-14T08:40:00")),
        ]),
        Chat(chat_id="ch-rollout", title="Q2 rollout", participants=["c-dan", "c-omar", "c-lena"], messages=[
            ChatMessage(sender="c-omar", text="Firmware 4.2 is on all scanners in depot 7.", sent_at=_dt("2024-05-10T12:00:00")),
            ChatMessage(sender="c-dan", text="Great, thanks Omar.", sent_at=_dt("2024-05-10T12:05:00")),
        ]),
    ]
    notes = [
        Note(note_id="n-packing", title=f"{trip_city} packing list", body="Passport\nTravel adapter\nLaptop + charger\nRain jacket"),
        Note(note_id="n-status", title="Rollout status", body="- 9 of 14 depots live\n- Scanner firmware 4.2 rolled out\n- Training backlog: 23 drivers"),
        Note(note_id="n-gifts", title="Gift ideas for Mom", body="Cookbook\nSilk scarf\nPottery class voucher"),
    ]
    transactions = [
        Transaction(transaction_id="t-1", booked_on=date(2024, 5, 1), payee="Harbor Property", amount=-1850.00, category="Rent"),
        Transaction(transaction_id="t-2", booked_on=date(2024, 5, 2), payee="Northwind Logistics", amount=4210.55, category="Salary"),
        Transaction(transaction_id="t-3", booked_on=date(2024, 5, 3), payee="Whole Foods Market", amount=-86.42, category="Groceries"),
        Transaction(transaction_id="t-4", booked_on=date(2024, 5, 5), payee="CTA Ventra", amount=-75.00, category="Transport"),
        Transaction(transaction_id="t-5", booked_on=date(2024, 5, 6), payee="Lula Cafe", amount=-42.80),
        Transaction(transaction_id="t-6", booked_on=date(2024, 5, 8), payee="ComEd", amount=-64.19, category="Utilities"),
        Transaction(transaction_id="t-7", booked_on=date(2024, 5, 9), payee="Trader Joe's", amount=-53.10, category="Groceries"),
        Transaction(transaction_id="t-8", booked_on=date(2024, 5, 11), payee="Netflix", amount=-15.49),
        Transaction(transaction_id="t-9", booked_on=date(2024, 5, 12), payee="Shell", amount=-48.75, category="Transport"),
        Transaction(transaction_id="t-10", booked_on=date(2024, 5, 13), payee="Amazon", amount=-129.99, category="Shopping"),
    ]
    facts = [
        Fact(key="invoice_total", value=412.50, kind="money", unit="USD", source="doc:doc-invoice-2291.total"),
        Fact(key="trip_city", value=trip_city, kind="text"),
        Fact(key="trip_date", value="2024-06-03", kind="date"),
        Fact(key="trip_return_date", value="2024-06-06", kind="date"),
        Fact(key="rent_amount", value=1850.00, kind="money", unit="USD"),
    ]
    return World(
        world_id=world_id, persona_id=me.persona_id, scenario="office-offsite", title=f"Maya plans the {trip_city} offsite",
        base_date=date(2024, 5, 14), currency="USD", me=me, contacts=contacts, events=events, facts=facts,
        documents=[invoice, budget, deck, itinerary], emails=emails, chats=chats, notes=notes, transactions=transactions,
    )
