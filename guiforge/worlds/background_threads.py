"""Personal and work threads: a first message from someone whose relation fits the thread (a
team lunch moved by a colleague, a parents' evening from the class teacher, a drill borrowed
by a neighbour), the persona's reply in the sent folder, now and then their follow-up; what
the thread arranges (a dinner on Friday at 19:30) is in the calendar at that day and time.
Each thread of the pools is used once per world at most. And one meeting invitation that is
then moved (the calendar keeps only the new slot). Used by ``background.with_background``."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from guiforge.worlds.background_mail import (
    HISTORY_DAYS,
    email,
    first_name,
    letter,
    register_of,
    slots,
)
from guiforge.worlds.formats import format_date
from guiforge.worlds.life_pools import Thread, home_pools, work_pools
from guiforge.worlds.model import Contact, Event
from guiforge.worlds.phrases import compose
from guiforge.worlds.seeds import locale_info

if TYPE_CHECKING:
    from guiforge.worlds.life import Life

SKIP_SHARE = 0.12  # a world leaves out about this share of the threads it could have


def life_threads(life: Life) -> list[Thread]:
    """The threads this persona's life can hold: their work's, their household's, family,
    friends, neighbours and hobbies."""
    prof, home = life.profile, home_pools()
    work = work_pools()
    out = [*work.groups[prof.group].threads, *work.shared]
    parts = {"partner": prof.partner is not None, "kids": bool(life.kids),
             "flatmates": prof.household == "flatshare", "parents_home": prof.household == "with_parents",
             "pet": prof.pet is not None}  # fmt: skip
    for part, has in parts.items():
        if has:
            out.extend(getattr(home, part).threads)
    out += [*home.family, *home.friends, *home.neighbours]
    for hobby in prof.hobbies:
        out.extend(home.hobbies[hobby].threads)
    return out


def senders_for(life: Life, thread: Thread) -> list[Contact]:
    """The people who may start ``thread``: a relation it lists and, if it names roles, one
    of those roles."""
    return [c for c in life.contacts
            if c.relation in thread.from_ and (not thread.roles or c.role in thread.roles)]  # fmt: skip


def add_threads(life: Life) -> None:
    rng = life.rng
    started: dict[str, int] = {}
    used_titles = {e.title.lower() for e in life.world.events}
    for thread in life_threads(life):
        who = senders_for(life, thread)
        if not who or rng.random() < SKIP_SHARE:
            continue
        least = min(started.get(c.contact_id, 0) for c in who)
        sender = rng.choice([c for c in who if started.get(c.contact_id, 0) == least])
        started[sender.contact_id] = least + 1
        _thread(life, thread, sender, used_titles)


def _thread(life: Life, thread: Thread, c: Contact, used_titles: set[str]) -> None:
    w, rng = life.world, life.rng
    day = life.past_day(HISTORY_DAYS, 3)
    values = slots(life, day, c)
    register = register_of(c.relation)
    me, they = first_name(w.me.name), first_name(c.name)
    subject = compose(thread.subject, rng, values)
    at = life.moment(day, (7, 21))
    email(life, c.email, w.me.email, at, subject, letter(register, thread.first, rng, values, me, they, c.name))
    at += timedelta(minutes=rng.randint(20, 900))
    email(life, w.me.email, c.email, at, f"Re: {subject}", letter(register, thread.reply, rng, values, they, me, w.me.name, opening=False),
          folder="sent")  # fmt: skip
    follow = compose(thread.follow, rng, values) if thread.follow else ""
    if follow:
        at += timedelta(minutes=rng.randint(20, 900))
        email(life, c.email, w.me.email, at, f"Re: {subject}", letter(register, follow, rng, values, me, they, c.name, opening=False))
    if thread.event is not None:
        _event(life, thread, c, values, used_titles)


def _event(life: Life, thread: Thread, c: Contact, values, used_titles: set[str]) -> None:
    ev = thread.event
    title = compose(ev.title, life.rng, values)
    if title.lower() in used_titles:
        return
    used_titles.add(title.lower())
    day = values["dates"][0 if ev.when == "date" else 1]
    hour, minute = (int(x) for x in values[ev.at].split(":"))
    start = datetime.combine(day, time(hour, minute))
    attendees = [c.contact_id] if c.relation != "school" else []
    life.events.append(Event(event_id=life.next_id("ev"), title=title, start=start,
                             end=start + timedelta(minutes=ev.minutes),
                             location=compose(ev.where, life.rng, values) if ev.where else life.world.me.city,
                             attendees=attendees))  # fmt: skip


def add_rescheduled_meeting(life: Life) -> None:
    """An invitation, then 'Moved:' with a new time, from someone the persona works with; the
    calendar keeps only the new slot."""
    w, rng = life.world, life.rng
    pool = [c for c in life.contacts if c.relation in ("colleague", "employee", "client")]
    if not pool:
        return
    c = rng.choice(pool)
    title = rng.choice(work_pools().groups[life.profile.group].meetings)
    if any(e.title == title for e in w.events):
        return
    loc = locale_info(w.me.locale)
    old = datetime.combine(w.base_date + timedelta(days=rng.randint(3, 12)), time(rng.randrange(9, 16), 0))
    new = old + timedelta(days=rng.randint(1, 3), hours=rng.choice([-1, 1, 2]))
    sent = life.moment(w.base_date - timedelta(days=rng.randint(6, 12)), (8, 17))
    when = lambda d: f"{format_date(d.date(), loc, weekday=True)}, {d:%H:%M}"  # noqa: E731
    values = slots(life, sent.date(), c, meeting=title.lower(), old=when(old), new=when(new))
    register = register_of(c.relation)
    me, they = first_name(w.me.name), first_name(c.name)
    email(life, c.email, w.me.email, sent, f"Invitation: {title}",
          letter(register, work_pools().invitation, rng, values, me, they, c.name))
    moved = sent + timedelta(days=rng.randint(2, 4), minutes=rng.randint(0, 300))
    email(life, c.email, w.me.email, moved, f"Moved: {title}",
          letter(register, work_pools().moved, rng, values, me, they, c.name, opening=False))
    life.events.append(Event(event_id=life.next_id("ev"), title=title, start=new, end=new + timedelta(hours=1),
                             location=f"{c.organization or w.me.city}", attendees=[c.contact_id],
                             description=f"Moved from {when(old)}"))  # fmt: skip
