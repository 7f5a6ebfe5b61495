"""The pools everyday life is drawn from (``data/life_work.yaml``, ``data/life_home.yaml``):
per occupation group the people at work, their meetings, threads and the system that mails
them; per household the partner's, children's and flatmates' threads and events; per hobby
its club; and the threads friends, family and neighbours write. Each thread names the
relations that may send it, so a team lunch is only ever moved by a colleague.

Loaded once and checked: an unknown field, repeat or placeholder is a one-line error naming
the file, the line and the field."""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guiforge.worlds.phrases import Piece, placeholders
from guiforge.worlds.seeds import data_dir
from guiforge.yamlfile import read_yaml

# every placeholder a pool may use (guiforge/worlds/background_mail.py fills them)
PLACEHOLDERS = frozenset({
    "me", "me_full", "first", "name", "city", "employer", "org", "day", "date", "day2", "date2", "past_day",
    "time", "time_am", "place", "amount", "price", "partner", "kid", "kid_age", "pet", "pet_kind", "school",
    "club", "colleague", "friend", "street", "number", "room", "project", "client", "month", "ref", "to",
    "sign", "sign_full", "brand", "shop", "product", "title", "dest", "percent", "code", "weather",
    "hobby", "last4", "minutes", "plot", "meeting", "old", "new", "fare",
})
Relation = Literal["colleague", "employee", "client", "family", "friend", "neighbour", "vendor", "school"]
Repeat = Literal["weekly", "biweekly", "monthly", "once"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EventSpec(_Strict):
    """A calendar entry: once, or repeating over the months the calendar holds."""

    title: str
    repeat: Repeat
    minutes: int = Field(gt=0, le=720)
    hours: tuple[int, int] = Field(description="start hour drawn from [lo, hi)")
    with_: str = Field(default="", alias="with", description="a relation or role: a person attends")
    workday: bool = Field(default=False, description="never on a weekend")
    weekend: bool = Field(default=False, description="only on a Saturday or Sunday")
    where: str = Field(default="", description="the location (placeholders allowed)")
    needs: Literal["", "car", "kids", "partner", "pet", "employed"] = ""


class ThreadEvent(_Strict):
    """What a thread arranges lands in the calendar at the day and time its messages name."""

    title: str
    when: Literal["date", "date2"] = "date"
    at: Literal["time", "time_am"] = "time"
    minutes: int = Field(default=60, gt=0, le=720)
    where: str = ""


class Thread(_Strict):
    id: str
    from_: list[Relation] = Field(alias="from", min_length=1, description="relations that may start it")
    roles: list[str] = Field(default_factory=list, description="the sender's role is one of these (e.g. partner)")
    subject: Piece
    first: Piece
    reply: Piece
    follow: Piece = ""
    event: ThreadEvent | None = None


class SenderItem(_Strict):
    """An item that is also what the e-mail is about: its subject leads the issue."""

    subject: Piece
    text: str


class Sender(_Strict):
    """An organisation that mails on a schedule: a newsletter, a system's notifications. An
    issue is an opening, a few of its items (each filled on its own), a closing."""

    kind: str
    name: str
    local: str = Field(pattern=r"^[a-z0-9.-]+$")
    every: int = Field(ge=1, le=60, description="days between mails")
    subjects: Piece
    open: Piece
    items: list[str | SenderItem] = Field(min_length=5)
    pick: tuple[int, int] = (2, 3)
    close: Piece
    bullets: bool = Field(default=False, description="items as a list (a newsletter), not sentences")


class Group(_Strict):
    """An occupation group's working life."""

    staff: Relation = "colleague"
    roles: list[str] = Field(min_length=3)
    projects: list[str] = Field(min_length=2)
    meetings: list[str] = Field(min_length=2, description="titles an invitation can be moved for")
    events: list[EventSpec] = Field(default_factory=list)
    threads: list[Thread] = Field(min_length=3)
    sender: Sender | None = None


class WorkPools(_Strict):
    invitation: Piece
    moved: Piece
    groups: dict[str, Group] = Field(min_length=1)
    shared: list[Thread] = Field(default_factory=list, description="threads any workplace has")


class Household(_Strict):
    """A kind of household and how likely it is at each age."""

    weight_by_age: dict[str, float] = Field(description="'lo-hi' age band -> weight")


class Pool(_Strict):
    """What one part of home life brings: threads, calendar entries, senders."""

    threads: list[Thread] = Field(default_factory=list)
    events: list[EventSpec] = Field(default_factory=list)
    senders: list[Sender] = Field(default_factory=list)


class Hobby(_Strict):
    club: str
    member: str = Field(description="the role of people met there")
    traits: list[str] = Field(default_factory=list, description="persona traits that make it likely")
    events: list[EventSpec] = Field(min_length=1)
    threads: list[Thread] = Field(min_length=1)
    sender: Sender | None = None
    fee: tuple[float, float] = Field(description="monthly membership fee, EUR/USD magnitude")


class Register(_Strict):
    """How one kind of relation opens and closes a message."""

    greetings: list[str] = Field(min_length=3)
    asides: list[str] = Field(default_factory=list)
    closers: list[str] = Field(default_factory=list, description="a line after the body now and then")
    signoffs: list[str] = Field(min_length=3)


class HomePools(_Strict):
    households: dict[str, Household] = Field(min_length=1)
    family: list[Thread] = Field(min_length=3)
    friends: list[Thread] = Field(min_length=5)
    neighbours: list[Thread] = Field(min_length=1)
    hobbies: dict[str, Hobby] = Field(min_length=3)
    partner: Pool
    kids: Pool
    flatmates: Pool
    parents_home: Pool
    pet: Pool
    registers: dict[Literal["work", "close", "family", "formal"], Register]
    events: list[EventSpec] = Field(default_factory=list, description="anyone's one-offs: dentist, haircut")

    @model_validator(mode="after")
    def _registers(self) -> HomePools:
        missing = {"work", "close", "family", "formal"} - set(self.registers)
        if missing:
            raise ValueError(f"registers needs {sorted(missing)}")
        return self


def _unknown(piece: Piece) -> set[str]:
    return placeholders(piece) - PLACEHOLDERS


def _check_pieces(src, data: dict) -> None:
    """Every placeholder a pool uses is one the mail builder fills."""
    def walk(value, path):
        if isinstance(value, str):
            bad = _unknown(value)
            if bad:
                raise src.error(path, f"unknown placeholder {{{sorted(bad)[0]}}}; known: {', '.join(sorted(PLACEHOLDERS))}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, (*path, k))
    walk(data, ())


class _EveryoneSenders(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    senders: list[Sender] = Field(min_length=1)


@cache
def everyone_senders() -> list[Sender]:
    """The newsletters everyone gets (``senders`` of data/background.yaml)."""
    src = read_yaml(data_dir() / "background.yaml")
    return src.validate(_EveryoneSenders).senders


def load_pools(path, kind: Literal["work", "home"]) -> WorkPools | HomePools:
    """Read and check one pool file; an error names the file, the line and the field."""
    src = read_yaml(path)
    if not isinstance(src.data, dict):
        raise src.error((), "a pool file must be a mapping")
    _check_pieces(src, src.data)
    return src.validate(WorkPools if kind == "work" else HomePools)


@cache
def work_pools() -> WorkPools:
    return load_pools(data_dir() / "life_work.yaml", "work")


@cache
def home_pools() -> HomePools:
    return load_pools(data_dir() / "life_home.yaml", "home")
