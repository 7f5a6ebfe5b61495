"""Typed personas and worlds. A world is everything the apps and files of its tasks will
hold: people, events, facts, emails with attachments, documents, chats, notes, payments.

The same models validate the offline template builder's output and an LLM builder's JSON.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Id = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.:-]+$")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Persona(Strict):
    persona_id: Id
    name: str = Field(min_length=1)
    locale: str
    age: int = Field(ge=16, le=100)
    occupation: str
    employer: str
    city: str
    country: str
    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    phone: str
    country_code: str = Field(default="", description="ISO 3166-1 alpha-2 of country")
    region: str = Field(default="", description="geonames admin1 code of the city (a US state)")
    timezone: str = Field(default="", description="IANA time zone of the city")
    language: str = Field(default="", description="ISO 639-1 code of the persona's language")
    traits: list[str] = Field(min_length=1)
    goals: list[str] = Field(min_length=1)


class Contact(Strict):
    contact_id: Id
    name: str = Field(min_length=1)
    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    phone: str
    role: str = Field(description="the part they play in this world, e.g. manager, landlord")
    organization: str = ""
    relation: str = Field(default="", description="relation to the persona: colleague, family, vendor, ...")


class Event(Strict):
    event_id: Id
    title: str
    start: datetime
    end: datetime
    location: str = ""
    attendees: list[Id] = Field(default_factory=list, description="contact_ids")
    description: str = ""


class Fact(Strict):
    """A named value tasks and verifiers rely on. ``source`` points at where the value is
    computed (``doc:<document_id>.total``) so that the consistency check can recompute it."""

    key: Id
    value: str | float | int
    kind: Literal["money", "number", "date", "text"] = "text"
    unit: str = ""
    description: str = ""
    source: str = ""


class LineItem(Strict):
    description: str
    quantity: float = Field(gt=0)
    unit_price: float
    amount: float


class Sheet(Strict):
    name: str = Field(min_length=1, max_length=31)
    columns: list[str] = Field(min_length=1)
    rows: list[list[str | float | int | None]] = Field(default_factory=list)
    total_column: str | None = Field(
        default=None, description="if set, the last row is a total of this column over the rows above"
    )


class DocTable(Strict):
    """A table inside a text section: a header row and rows of text cells."""

    columns: list[str] = Field(min_length=1)
    rows: list[list[str]] = Field(default_factory=list)
    caption: str = ""

    @model_validator(mode="after")
    def _widths(self) -> DocTable:
        for n, r in enumerate(self.rows):
            if len(r) != len(self.columns):
                raise ValueError(f"table row {n} has {len(r)} cells for {len(self.columns)} columns")
        return self


class Section(Strict):
    """A headed part of a text document: paragraphs, then bullets, then a table."""

    heading: str = Field(min_length=1)
    level: int = Field(default=1, ge=1, le=3, description="1 = Heading 1, 2 = Heading 2, ...")
    paragraphs: list[str] = Field(default_factory=list)
    bullets: list[str] = Field(default_factory=list)
    table: DocTable | None = None
    style: Literal["normal", "note", "warning"] = Field(
        default="normal", description="note/warning: the section's paragraphs as a callout box"
    )


SlideLayout = Literal[
    "title", "section", "content", "two_content", "comparison", "title_only", "chart", "picture"
]


class ChartSeries(Strict):
    name: str
    values: list[float] = Field(min_length=1)


class Chart(Strict):
    kind: Literal["bar", "line", "pie"] = "bar"
    categories: list[str] = Field(min_length=1)
    series: list[ChartSeries] = Field(min_length=1)
    number_format: str = Field(default="General", description="Excel format of the data labels")

    @model_validator(mode="after")
    def _lengths(self) -> Chart:
        for s in self.series:
            if len(s.values) != len(self.categories):
                raise ValueError(f"chart series {s.name!r} has {len(s.values)} values for "
                                 f"{len(self.categories)} categories")  # fmt: skip
        if self.kind == "pie" and len(self.series) != 1:
            raise ValueError("a pie chart has exactly one series")
        return self


class SlideImage(Strict):
    """A generated picture (preparers/slide_images.py draws it; the same fields give the
    same bytes)."""

    kind: Literal["photo", "logo", "map"] = "photo"
    subject: str = Field(min_length=1, description="what it shows: a city, a venue, a name")
    caption: str = ""


class Slide(Strict):
    title: str
    bullets: list[str] = Field(default_factory=list)
    notes: str = ""
    layout: SlideLayout | None = Field(
        default=None, description="None: a title slide first, title-and-content after"
    )
    right_bullets: list[str] = Field(default_factory=list, description="two_content/comparison")
    left_heading: str = Field(default="", description="comparison: the left column's heading")
    right_heading: str = ""
    chart: Chart | None = None
    image: SlideImage | None = None

    @model_validator(mode="after")
    def _layout_needs(self) -> Slide:
        if self.layout == "chart" and self.chart is None:
            raise ValueError(f"slide {self.title!r}: a chart layout needs a chart")
        if self.layout == "picture" and self.image is None:
            raise ValueError(f"slide {self.title!r}: a picture layout needs an image")
        return self


class Document(Strict):
    document_id: Id
    kind: Literal["invoice", "spreadsheet", "slides", "text", "receipt", "itinerary", "form"]
    title: str
    filename: str = Field(pattern=r"^[A-Za-z0-9_. -]+\.[a-z0-9]+$")
    author: str = Field(default="", description="contact_id or 'me'")
    currency: str = ""
    line_items: list[LineItem] = Field(default_factory=list)
    tax_rate: float = Field(default=0.0, ge=0, le=1)
    total: float | None = None
    sheets: list[Sheet] = Field(default_factory=list)
    slides: list[Slide] = Field(default_factory=list)
    paragraphs: list[str] = Field(default_factory=list)
    sections: list[Section] = Field(
        default_factory=list, description="headed sections after the paragraphs"
    )
    fields: dict[str, str] = Field(default_factory=dict)

    def section(self, heading: str) -> Section:
        for s in self.sections:
            if s.heading.casefold() == heading.casefold():
                return s
        raise KeyError(f"document {self.document_id} has no section {heading!r}")

    def text_before(self, section: int, row: int) -> str:
        """The text a search from the top passes before row ``row`` of section ``section``'s
        table (title, paragraphs, earlier sections, the table's header and earlier rows)."""
        s = self.sections[section]
        t = s.table
        if t is None:
            raise ValueError(f"section {s.heading!r} of document {self.document_id} has no table")
        lines = [self.title, *self.paragraphs]
        for earlier in self.sections[:section]:
            lines += _section_lines(earlier)
        lines += [s.heading, *s.paragraphs, *s.bullets, t.caption, *t.columns]
        lines += [c for r in t.rows[:row] for c in r]
        return " | ".join(lines)

    def text_lines(self) -> list[str]:
        """The paragraphs and every section's text in reading order, table rows as
        tab-separated cells: what a plain viewer or a text check sees."""
        out = list(self.paragraphs)
        for s in self.sections:
            out += _section_lines(s)
        return out


def _section_lines(s: Section) -> list[str]:
    out = [s.heading, *s.paragraphs, *s.bullets]
    if s.table is not None:
        out += ([s.table.caption] if s.table.caption else [])
        out += ["\t".join(r) for r in [s.table.columns, *s.table.rows]]
    return out


class Email(Strict):
    email_id: Id
    folder: Literal["inbox", "sent", "drafts", "archive"] = "inbox"
    sender: str = Field(description="an email address of a contact or of the persona")
    to: list[str] = Field(min_length=1)
    cc: list[str] = Field(default_factory=list)
    subject: str
    body: str
    sent_at: datetime
    attachments: list[Id] = Field(default_factory=list, description="document_ids")
    read: bool = False
    cites: list[Id] = Field(default_factory=list, description="fact keys quoted in the body")


class ChatMessage(Strict):
    sender: str = Field(description="contact_id or 'me'")
    text: str
    sent_at: datetime
    cites: list[Id] = Field(default_factory=list)


class Chat(Strict):
    chat_id: Id
    title: str
    participants: list[Id] = Field(min_length=1, description="contact_ids")
    messages: list[ChatMessage] = Field(default_factory=list)


class Note(Strict):
    note_id: Id
    title: str
    body: str
    cites: list[Id] = Field(default_factory=list)


class Transaction(Strict):
    transaction_id: Id
    booked_on: date
    payee: str
    amount: float = Field(description="negative for money out")
    category: str = ""
    memo: str = ""


class World(Strict):
    world_id: Id
    persona_id: Id
    scenario: Id
    title: str
    summary: str = ""
    base_date: date = Field(description="the world's 'today'")
    currency: str = Field(min_length=3, max_length=3)
    me: Persona
    contacts: list[Contact] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    emails: list[Email] = Field(default_factory=list)
    chats: list[Chat] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)
    transactions: list[Transaction] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> World:
        for label, ids in [
            ("contacts", [c.contact_id for c in self.contacts]),
            ("events", [e.event_id for e in self.events]),
            ("facts", [f.key for f in self.facts]),
            ("documents", [d.document_id for d in self.documents]),
            ("emails", [e.email_id for e in self.emails]),
            ("chats", [c.chat_id for c in self.chats]),
            ("notes", [n.note_id for n in self.notes]),
            ("transactions", [t.transaction_id for t in self.transactions]),
        ]:
            seen: set[str] = set()
            for i in ids:
                if i in seen:
                    raise ValueError(f"{label}: duplicate id {i!r}")
                seen.add(i)
        return self

    # -- look-ups used by preparers, apps and verifiers ---------------------------------
    def fact(self, key: str) -> Fact:
        for f in self.facts:
            if f.key == key:
                return f
        raise KeyError(f"world {self.world_id} has no fact {key!r}")

    def document(self, document_id: str) -> Document:
        for d in self.documents:
            if d.document_id == document_id:
                return d
        raise KeyError(f"world {self.world_id} has no document {document_id!r}")

    def contact(self, contact_id: str) -> Contact:
        for c in self.contacts:
            if c.contact_id == contact_id:
                return c
        raise KeyError(f"world {self.world_id} has no contact {contact_id!r}")
