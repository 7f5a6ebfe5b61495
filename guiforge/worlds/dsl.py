"""The scenario DSL's schema (see data/scenarios/README.md). Strings anywhere are Jinja
templates; a string that is exactly one ``{{ expr }}`` yields the expression's value."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

Range = tuple[int, int]
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
RESERVED = {"me", "people", "facts", "docs", "base_date", "today", "currency", "i", "it"}
Native = str | int | float | bool | None  # a literal or a template evaluated to a value


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


def _ordered(r: Any) -> Any:
    if (
        isinstance(r, tuple)
        and len(r) == 2
        and all(isinstance(x, int | float) for x in r)
        and r[0] > r[1]
    ):
        raise ValueError(f"range [{r[0]}, {r[1]}] must be ascending")
    return r


# -- variable generators ------------------------------------------------------------------
class RandInt(_S):
    randint: Range
    _o = field_validator("randint")(_ordered)


class Money(_S):
    money: tuple[float | str, float | str] = Field(
        description="range in EUR/USD (numbers or expressions); scaled to the locale's currency"
    )
    step: float | None = Field(
        default=None, gt=0, description="round to multiples (scaled, kept 'nice')"
    )
    _o = field_validator("money")(_ordered)


class Choice(_S):
    choice: list[Any] | str = Field(description="a list, or a template giving one")
    weights: list[float] | None = None

    @model_validator(mode="after")
    def _weights(self) -> Choice:
        if self.weights is not None and (
            not isinstance(self.choice, list) or len(self.weights) != len(self.choice)
        ):
            raise ValueError("weights need a literal choice list of the same length")
        return self


class Sample(_S):
    sample: list[Any] | str
    k: int | Range = Field(description="how many distinct elements, or a range")
    _o = field_validator("k")(_ordered)


class FakerGen(_S):
    faker: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="a Faker provider, e.g. company")
    args: dict[str, Any] = Field(default_factory=dict)
    locale: str | None = Field(default=None, description="template; default: the persona's locale")


class DateGen(_S):
    date: int | Range = Field(description="day offset from the world's base date, or a range")
    workday: bool = Field(default=False, description="move a weekend day to the next Monday")
    _o = field_validator("date")(_ordered)


class Expr(_S):
    expr: str = Field(description="a Jinja expression over earlier variables")
    round: int | None = None


class Value(_S):
    value: Any


class Repeat(_S):
    repeat: int | Range | str = Field(
        description="a count, a count range, or a template giving a list"
    )
    as_: str = Field(default="it", alias="as", pattern=r"^[a-z_][a-z0-9_]*$")
    item: dict[str, VarSpec] = Field(min_length=1)
    _o = field_validator("repeat")(_ordered)

    @field_validator("item", mode="before")
    @classmethod
    def _wrap(cls, v: Any) -> Any:
        return {k: wrap_literal(x) for k, x in v.items()} if isinstance(v, dict) else v


GENERATORS = ("randint", "money", "choice", "sample", "faker", "date", "expr", "value", "repeat")


def _gen_tag(v: Any) -> str | None:
    if isinstance(v, dict):
        keys = [k for k in GENERATORS if k in v]
        return keys[0] if len(keys) == 1 else None
    return next((k for k in GENERATORS if hasattr(v, k)), None)


def wrap_literal(v: Any) -> Any:
    """A bare value (string, number, list) is shorthand for ``{value: ...}``."""
    return v if isinstance(v, dict) else {"value": v}


VarSpec = Annotated[
    Union[  # noqa: UP007 -- tagged union members need the explicit form
        Annotated[RandInt, Tag("randint")],
        Annotated[Money, Tag("money")],
        Annotated[Choice, Tag("choice")],
        Annotated[Sample, Tag("sample")],
        Annotated[FakerGen, Tag("faker")],
        Annotated[DateGen, Tag("date")],
        Annotated[Expr, Tag("expr")],
        Annotated[Value, Tag("value")],
        Annotated[Repeat, Tag("repeat")],
    ],
    Discriminator(
        _gen_tag,
        custom_error_type="generator",
        custom_error_message=f"a variable needs exactly one generator key: {', '.join(GENERATORS)}",
    ),
]
Repeat.model_rebuild()


# -- world elements -------------------------------------------------------------------------
class At(_S):
    """A moment: ``day`` is an offset from the base date, an offset range, or a template giving
    a date, datetime or offset; ``time`` is 'HH:MM' or an hour range [from, to)."""

    day: int | Range | str = 0
    time: str | Range = (9, 17)
    workday: bool = False

    @field_validator("time")
    @classmethod
    def _time(cls, v: Any) -> Any:
        if isinstance(v, str) and "{{" in v:
            return v  # a template; checked when rendered
        if isinstance(v, str):
            h, _, m = v.partition(":")
            if not (h.isdigit() and m.isdigit() and int(h) < 24 and int(m) < 60):
                raise ValueError(f"time {v!r} must be 'HH:MM'")
        elif not 0 <= v[0] < v[1] <= 24:
            raise ValueError(f"hour range {list(v)} must be ascending within 0..24")
        return v


class _Each(_S):
    """Any list element may repeat over a list (``each``) and be conditional (``when``)."""

    each: str | None = Field(default=None, description="template giving a list")
    as_: str = Field(default="it", alias="as", pattern=r"^[a-z_][a-z0-9_]*$")
    when: str | None = Field(default=None, description="template; the element is kept when truthy")


class TextItem(_Each):
    text: str


TextList = list[Union[str, TextItem]]  # noqa: UP007


class Person(_S):
    role: str | None = Field(default=None, description="default: the key, humanized")
    relation: str = ""
    organization: str = ""
    first_name: str | None = None
    last_name: str | None = None
    locale: str | None = None
    gender: str | None = Field(
        default=None, description="template giving 'female' or 'male' (for first names)"
    )
    email_domain: Literal["organization", "free"] | None = Field(
        default=None, description="default: the organization's domain when there is one"
    )


class EventSpec(_Each):
    id: str
    title: str
    start: At
    end: At | None = None
    minutes: int | Range | str | None = Field(
        default=None, description="duration when no end is given"
    )
    location: str = ""
    attendees: list[str] = Field(default_factory=list, description="roles")
    description: str = ""


class LineItemSpec(_Each):
    description: str
    quantity: float | str = 1
    unit_price: float | str


class RowSpec(_Each):
    cells: list[Native]


class SheetSpec(_S):
    name: str
    columns: list[str] = Field(min_length=1)
    rows: list[RowSpec] = Field(default_factory=list)
    total: str | None = Field(default=None, description="a column to total in a last row")
    total_label: str = "Total"

    @model_validator(mode="after")
    def _total_column(self) -> SheetSpec:
        if self.total is not None and self.total not in self.columns:
            raise ValueError(
                f"total column {self.total!r} is not one of the columns {self.columns}"
            )
        return self


class TableSpec(_S):
    columns: list[str] = Field(min_length=1)
    rows: list[RowSpec] = Field(default_factory=list)
    caption: str = ""


class SectionSpec(_Each):
    heading: str
    level: int = Field(default=1, ge=1, le=3)
    paragraphs: TextList = Field(default_factory=list)
    bullets: TextList = Field(default_factory=list)
    table: TableSpec | None = None
    style: Literal["normal", "note", "warning"] = "normal"


class SeriesSpec(_S):
    name: str
    values: list[Native] | str = Field(description="numbers, or a template giving a list")


class ChartSpec(_S):
    kind: Literal["bar", "line", "pie"] = "bar"
    categories: list[Native] | str = Field(description="labels, or a template giving a list")
    series: list[SeriesSpec] = Field(min_length=1)
    number_format: str = "General"


class ImageSpec(_S):
    kind: Literal["photo", "logo", "map"] = "photo"
    subject: str
    caption: str = ""


class SlideSpec(_Each):
    title: str
    bullets: TextList = Field(default_factory=list)
    notes: str = ""
    layout: (
        Literal["title", "section", "content", "two_content", "comparison", "title_only",
                "chart", "picture"] | None
    ) = None  # fmt: skip
    right_bullets: TextList = Field(default_factory=list)
    left_heading: str = ""
    right_heading: str = ""
    chart: ChartSpec | None = None
    image: ImageSpec | None = None


class DocumentSpec(_Each):
    id: str
    kind: Literal["invoice", "spreadsheet", "slides", "text", "receipt", "itinerary", "form"]
    title: str
    filename: str
    author: str = "me"
    line_items: list[LineItemSpec] = Field(default_factory=list)
    tax_rate: float | str = 0.0
    sheets: list[SheetSpec] = Field(default_factory=list)
    slides: list[SlideSpec] = Field(default_factory=list)
    paragraphs: TextList = Field(default_factory=list)
    sections: list[SectionSpec] = Field(default_factory=list)
    fields: dict[str, str] = Field(default_factory=dict)


class TransactionSpec(_Each):
    id: str
    day: int | Range | str
    payee: str
    amount: float | str
    category: str = ""
    memo: str = ""


class FactSpec(_Each):
    key: str
    kind: Literal["money", "number", "date", "text"] = "text"
    value: Native = None
    source: str = ""
    unit: str = ""
    description: str = ""

    @model_validator(mode="after")
    def _one_origin(self) -> FactSpec:
        if self.value is None and not self.source:
            raise ValueError("a fact needs a value or a source")
        return self


class EmailSpec(_Each):
    id: str
    from_: str = Field(alias="from", description="a role or 'me'")
    to: list[str] = Field(min_length=1)
    cc: list[str] = Field(default_factory=list)
    at: At
    subject: str
    body: str | list[str | list[str]] = Field(
        description="the text; or paragraphs, each a string or alternatives one of which is picked per world")
    attachments: list[str] = Field(default_factory=list)
    cites: list[str] = Field(default_factory=list)
    folder: Literal["inbox", "sent", "drafts", "archive"] | None = None
    read: bool | None = None

    @model_validator(mode="after")
    def _alternatives(self) -> EmailSpec:
        if isinstance(self.body, list) and any(isinstance(p, list) and not p for p in self.body):
            raise ValueError("body: a paragraph's list of alternatives is empty")
        return self


class MessageSpec(_Each):
    from_: str = Field(alias="from")
    at: At
    text: str
    cites: list[str] = Field(default_factory=list)


class ChatSpec(_Each):
    id: str
    title: str
    participants: list[str] = Field(min_length=1, description="roles (the persona is implied)")
    messages: list[MessageSpec] = Field(default_factory=list)


class NoteSpec(_Each):
    id: str
    title: str
    body: str
    cites: list[str] = Field(default_factory=list)


class Scenario(_S):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    summary: str = ""
    suits: list[str] = Field(default_factory=list, description="occupation groups; empty = anyone")
    tags: list[str] = Field(default_factory=list)
    vars: dict[str, VarSpec] = Field(default_factory=dict)
    people: dict[str, Person] = Field(default_factory=dict)
    events: list[EventSpec] = Field(default_factory=list)
    documents: list[DocumentSpec] = Field(default_factory=list)
    transactions: list[TransactionSpec] = Field(default_factory=list)
    facts: list[FactSpec] = Field(default_factory=list)
    emails: list[EmailSpec] = Field(default_factory=list)
    chats: list[ChatSpec] = Field(default_factory=list)
    notes: list[NoteSpec] = Field(default_factory=list)
    file: str = Field(default="", exclude=True, description="set by the loader, for error messages")
    _lines: dict[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)

    def line(self, path: tuple[str | int, ...]) -> int | None:
        """The YAML line of ``path`` (or of its nearest ancestor), when loaded from a file."""
        p = tuple(path)
        while p:
            if p in self._lines:
                return self._lines[p]
            p = p[:-1]
        return None

    @field_validator("vars", mode="before")
    @classmethod
    def _wrap_vars(cls, v: Any) -> Any:
        return {k: wrap_literal(x) for k, x in v.items()} if isinstance(v, dict) else v

    @field_validator("vars", "people")
    @classmethod
    def _names(cls, v: dict[str, Any]) -> dict[str, Any]:
        # names are used in templates (vars) and in contact ids (people: c_<role>)
        for k in v:
            if not _NAME.match(k) or k in RESERVED:
                raise ValueError(
                    f"{k!r} must be a lowercase identifier (a-z, 0-9, _) other than {sorted(RESERVED)}"
                )
        return v
