"""Look-ups in the episode's world: facts, contacts, events, documents, emails, payments.

Results are the world model's own records (dumped as JSON), so an answer the agent copies
from them is exactly what the verifier's rubric was built from.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool
from guiforge.worlds.model import Contact, Document, Email, Event, Fact, Transaction

MAX_HITS = 50


class WorldSummary(BaseModel):
    world_id: str
    title: str
    summary: str
    today: date
    currency: str
    me: dict[str, Any]
    counts: dict[str, int]


class TransactionList(BaseModel):
    transactions: list[Transaction]
    count: int
    total: float


def _matches(query: str, *fields: Any) -> bool:
    """Every word of ``query`` appears in one of ``fields`` (case-insensitive)."""
    hay = " ".join(str(f) for f in fields).casefold()
    return all(word in hay for word in query.casefold().split())


@tool("world")
def world_summary(ctx: ToolContext) -> WorldSummary:
    """Who I am and what this world holds: the persona, today's date, home currency and how
    many contacts, events, facts, documents, emails and transactions exist."""
    w = ctx.need_world()
    counts = {name: len(getattr(w, name)) for name in
              ("contacts", "events", "facts", "documents", "emails", "chats", "notes", "transactions")}
    return WorldSummary(world_id=w.world_id, title=w.title, summary=w.summary, today=w.base_date,
                        currency=w.currency, me=w.me.model_dump(mode="json"), counts=counts)


@tool("world")
def get_fact(ctx: ToolContext, key: str) -> Fact:
    """Read one named fact of the world (an amount, a date, a number) by its exact key.

    Args:
        key: the fact key, e.g. invoice_total; search_facts finds keys
    """
    w = ctx.need_world()
    try:
        return w.fact(key)
    except KeyError:
        raise ToolError(f"no fact {key!r}; search_facts lists the keys that exist") from None


@tool("world")
def search_facts(ctx: ToolContext, query: str = "") -> list[Fact]:
    """Find facts whose key, description or value mentions all the query words (empty query
    lists every fact).

    Args:
        query: words to look for, e.g. rent deposit
    """
    w = ctx.need_world()
    return [f for f in w.facts if _matches(query, f.key.replace("_", " "), f.description, f.value,
                                           f.unit)][:MAX_HITS]


@tool("world")
def find_contacts(ctx: ToolContext, query: str = "") -> list[Contact]:
    """Search the address book: people whose name, email, phone, role, organisation or relation
    mention all the query words.

    Args:
        query: words such as a name, company or role (landlord, manager); empty lists everyone
    """
    w = ctx.need_world()
    return [c for c in w.contacts if _matches(query, c.name, c.email, c.phone, c.role,
                                              c.organization, c.relation)][:MAX_HITS]


@tool("world")
def get_contact(ctx: ToolContext, contact_id: str) -> Contact:
    """One contact's full record (email address, phone number, role) by contact_id.

    Args:
        contact_id: the id from find_contacts or from an event's attendees
    """
    w = ctx.need_world()
    try:
        return w.contact(contact_id)
    except KeyError:
        raise ToolError(f"no contact {contact_id!r}; find_contacts searches by name") from None


@tool("world")
def list_events(ctx: ToolContext, query: str = "", start: date | None = None,
                end: date | None = None, attendee: str | None = None) -> list[Event]:
    """Calendar events (meetings, appointments) filtered by words, a date range and an attendee,
    sorted by start time.

    Args:
        query: words in the title, location or description; empty matches all
        start: only events starting on or after this date
        end: only events starting on or before this date
        attendee: a contact_id that must attend
    """
    w = ctx.need_world()
    hits = [
        e for e in w.events
        if _matches(query, e.title, e.location, e.description)
        and (start is None or e.start.date() >= start)
        and (end is None or e.start.date() <= end)
        and (attendee is None or attendee in e.attendees)
    ]
    return sorted(hits, key=lambda e: e.start)[:MAX_HITS]


@tool("world")
def list_documents(ctx: ToolContext, query: str = "", kind: str | None = None) -> list[dict[str, Any]]:
    """List the world's documents (invoices, receipts, spreadsheets, itineraries...): id, kind,
    title, filename and total.

    Args:
        query: words in the title or filename; empty matches all
        kind: invoice, spreadsheet, slides, text, receipt, itinerary or form
    """
    w = ctx.need_world()
    return [
        {"document_id": d.document_id, "kind": d.kind, "title": d.title, "filename": d.filename,
         "currency": d.currency, "total": d.total}
        for d in w.documents
        if _matches(query, d.title, d.filename) and (kind is None or d.kind == kind)
    ][:MAX_HITS]


@tool("world")
def get_document(ctx: ToolContext, document_id: str) -> Document:
    """A document's full content: line items, tax rate, total, sheets, slides, paragraphs and
    form fields.

    Args:
        document_id: the id from list_documents or from an email's attachments
    """
    w = ctx.need_world()
    try:
        return w.document(document_id)
    except KeyError:
        raise ToolError(f"no document {document_id!r}; list_documents shows the ids") from None


@tool("world")
def search_emails(ctx: ToolContext, query: str = "", folder: str | None = None,
                  sender: str | None = None) -> list[Email]:
    """Search the mailbox: emails whose subject or body contain all query words, optionally
    from one folder (inbox, sent, drafts, archive) or sender; newest first.

    Args:
        query: words to find in subject or body
        folder: inbox, sent, drafts or archive
        sender: part of the sender's email address
    """
    w = ctx.need_world()
    hits = [
        m for m in w.emails
        if _matches(query, m.subject, m.body)
        and (folder is None or m.folder == folder)
        and (sender is None or sender.casefold() in m.sender.casefold())
    ]
    return sorted(hits, key=lambda m: m.sent_at, reverse=True)[:MAX_HITS]


@tool("world")
def list_transactions(ctx: ToolContext, query: str = "", start: date | None = None,
                      end: date | None = None, category: str | None = None) -> TransactionList:
    """Bank transactions and payments (spending, income) filtered by payee/memo words, dates and
    category, with their count and total.

    Args:
        query: words in the payee or memo
        start: only transactions booked on or after this date
        end: only transactions booked on or before this date
        category: exact category, e.g. groceries
    """
    w = ctx.need_world()
    hits = [
        t for t in w.transactions
        if _matches(query, t.payee, t.memo)
        and (start is None or t.booked_on >= start)
        and (end is None or t.booked_on <= end)
        and (category is None or t.category.casefold() == category.casefold())
    ]
    hits.sort(key=lambda t: t.booked_on)
    return TransactionList(transactions=hits[: MAX_HITS * 4], count=len(hits),
                           total=round(sum(t.amount for t in hits), 2))


@tool("world")
def upcoming_events(ctx: ToolContext, days: int = 7, now: datetime | None = None) -> list[Event]:
    """Events in the next N days from now (the world's today), soonest first: "what is on my
    schedule this week".

    Args:
        days: how many days ahead to look
        now: reference date-time; defaults to the start of the world's today
    """
    w = ctx.need_world()
    ref = now or datetime.combine(w.base_date, datetime.min.time())
    if days < 0:
        raise ToolError("days must be zero or more")
    limit = ref.toordinal() + days
    hits = [e for e in w.events if e.start.replace(tzinfo=None) >= ref.replace(tzinfo=None)
            and e.start.toordinal() <= limit]
    return sorted(hits, key=lambda e: e.start)[:MAX_HITS]
