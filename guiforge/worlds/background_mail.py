"""Background mail: newsletters and notifications on their schedules, personal threads
with replies from the persona's sent folder, and a meeting invitation followed by its
rescheduling (the calendar holds the new time). Used by ``background.with_background``."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.formats import MONTHS, format_date
from guiforge.worlds.model import Email, Event
from guiforge.worlds.seeds import locale_info

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

HISTORY_DAYS = 90


def add_mail(life: Life) -> None:
    _newsletters(life)
    _threads(life)
    _rescheduled_meeting(life)


def _email(life: Life, sender: str, to: str, at: datetime, subject: str, body: str,
           folder: str = "inbox", read: bool | None = None) -> None:  # fmt: skip
    if at.date() > life.world.base_date or (at.date() == life.world.base_date and at.hour >= 8):
        at = datetime.combine(life.world.base_date - timedelta(days=1), at.time())
    life.emails.append(Email(
        email_id=life.next_id("em"), folder=folder, sender=sender, to=[to], subject=subject,
        body=body.strip() + "\n", sent_at=at,
        read=read if read is not None else (folder != "inbox" or life.rng.random() < 0.7)))  # fmt: skip


def _newsletters(life: Life) -> None:
    w, rng = life.world, life.rng
    senders = {c.role: c for c in life.roles.get("newsletter", [])}
    for spec in life.vocab["senders"]:
        c = senders.get(spec["kind"])
        if c is None:
            continue
        day = w.base_date - timedelta(days=rng.randint(0, spec["every"] - 1))
        first = w.base_date - timedelta(days=HISTORY_DAYS)
        while day > first:
            at = life.moment(day, (5, 20))
            subject = rng.choice(spec["subjects"]).format(
                city=w.me.city, name=c.name, home=w.me.city, month=MONTHS[at.month - 1],
                code=f"{rng.randint(10**9, 10**10 - 1)}")  # fmt: skip
            body = (f"{subject}\n\nHello {w.me.name.split()[0]},\n\n{_blurb(spec['kind'], c.name, w.me.city)}\n\n"
                    f"You receive this e-mail because you signed up at {c.name}. Unsubscribe at any time.")
            _email(life, c.email, w.me.email, at, subject, body, read=rng.random() < 0.5)
            day -= timedelta(days=spec["every"] + rng.randint(-1, 1))


def _blurb(kind: str, name: str, city: str) -> str:
    return {
        "news": f"The stories people in {city} read this week, plus the weather and what's on.",
        "retail": f"Hand-picked offers from {name}, valid while stocks last.",
        "streaming": "New series, films and documentaries added this month.",
        "airline": f"Book early and save on flights from {city}. Fares include taxes and fees.",
        "library": "Please check your account for loans, reservations and upcoming events.",
        "delivery": "Track your parcel and choose another delivery day in the app.",
        "bank": "For your security we never ask for your PIN or passwords by e-mail.",
    }.get(kind, f"News from {name}.")


def _threads(life: Life) -> None:
    w, rng = life.world, life.rng
    people = [c for c in life.contacts if c.relation in ("friend", "family", "colleague", "client")]
    threads = rng.sample(life.vocab["threads"], len(life.vocab["threads"]))
    rounds = 3  # every thread starts three times, with other people: subjects repeat as in real mail
    for k in range(len(threads) * rounds):
        subject, first, reply, follow = threads[k % len(threads)]
        if not people:
            return
        c = people[k % len(people)]
        day = life.past_day(HISTORY_DAYS, 2)
        at = life.moment(day, (7, 21))
        hi = c.name.split()[0]
        me = w.me.name.split()[0]
        _email(life, c.email, w.me.email, at, subject, f"Hi {me},\n\n{first}\n\n{hi}")
        at += timedelta(minutes=rng.randint(20, 900))
        _email(life, w.me.email, c.email, at, f"Re: {subject}", f"Hi {hi},\n\n{reply}\n\n{me}", folder="sent")
        if follow:
            at += timedelta(minutes=rng.randint(20, 900))
            _email(life, c.email, w.me.email, at, f"Re: {subject}", f"{follow}\n\n{hi}")


def _rescheduled_meeting(life: Life) -> None:
    """An invitation, then 'Moved:' with a new time; the calendar keeps only the new slot."""
    w, rng = life.world, life.rng
    pool = life.roles.get("colleague") or life.roles.get("client") or life.roles.get("friend")
    if not pool:
        return
    c = rng.choice(pool)
    title = rng.choice(["Project sync", "Planning session", "Quarterly check-in", "Budget review"])
    if any(e.title == title for e in w.events):
        return
    loc = locale_info(w.me.locale)
    old = datetime.combine(w.base_date + timedelta(days=rng.randint(3, 12)), time(rng.randrange(9, 16), 0))
    new = old + timedelta(days=rng.randint(1, 3), hours=rng.choice([-1, 1, 2]))
    sent = life.moment(w.base_date - timedelta(days=rng.randint(6, 12)), (8, 17))
    when = lambda d: f"{format_date(d.date(), loc, weekday=True)}, {d:%H:%M}"  # noqa: E731
    _email(life, c.email, w.me.email, sent, f"Invitation: {title}",
           f"Hi {w.me.name.split()[0]},\n\nI'd like to set up a {title.lower()} on {when(old)} for an hour.\n\n{c.name}")
    moved = sent + timedelta(days=rng.randint(2, 4), minutes=rng.randint(0, 300))
    _email(life, c.email, w.me.email, moved, f"Moved: {title}",
           f"Hi {w.me.name.split()[0]},\n\nsomething came up, so I have moved the {title.lower()} from "
           f"{when(old)} to {when(new)}. Same place.\n\n{c.name}")
    life.events.append(Event(event_id=life.next_id("ev"), title=title, start=new, end=new + timedelta(hours=1),
                             location=f"{c.organization or w.me.city}", attendees=[c.contact_id],
                             description=f"Moved from {when(old)}"))  # fmt: skip
