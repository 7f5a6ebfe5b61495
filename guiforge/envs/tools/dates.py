"""Date and calendar arithmetic. "Today" is the world's ``base_date`` (the system clock
would make episodes unreproducible); time zones are IANA names via :mod:`zoneinfo`."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: list[str] = list(Weekday.__args__)  # type: ignore[attr-defined]


class DateResult(BaseModel):
    date: date
    weekday: str


class WeekResult(BaseModel):
    date: date
    iso_year: int
    iso_week: int
    weekday_number: int
    week_start: date
    week_end: date


class Duration(BaseModel):
    total_seconds: float
    days: int
    hours: int
    minutes: int
    seconds: int
    total_days: float
    total_hours: float
    text: str


class ZonedTime(BaseModel):
    datetime: datetime
    timezone: str
    utc_offset: str
    abbreviation: str


class MonthCalendar(BaseModel):
    year: int
    month: int
    month_name: str
    days: int
    weeks: list[list[int]]  # Monday-first; 0 = a day of the neighbouring month


def _dated(d: date) -> DateResult:
    return DateResult(date=d, weekday=WEEKDAYS[d.weekday()])


def _today(ctx: ToolContext, given: date | None) -> date:
    if given is not None:
        return given
    if ctx.world is None:
        raise ToolError("no date given and this task has no world to supply today's date")
    return ctx.world.base_date


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin") from None


def _is_business(d: date, holidays: set[date]) -> bool:
    return d.weekday() < 5 and d not in holidays


@tool("dates")
def today(ctx: ToolContext) -> DateResult:
    """Today's date in this task's world (and its weekday)."""
    return _dated(_today(ctx, None))


@tool("dates")
def add_days(ctx: ToolContext, days: int, start: date | None = None) -> DateResult:
    """Add (or subtract, with a negative number) calendar days to a date: "what date is 30
    days after ...".

    Args:
        days: number of days to add; negative goes back in time
        start: starting date YYYY-MM-DD; defaults to today in the world
    """
    return _dated(_today(ctx, start) + timedelta(days=days))


@tool("dates")
def add_months(ctx: ToolContext, months: int, start: date | None = None) -> DateResult:
    """Add calendar months to a date; the day is clamped to the month's length (Jan 31 + 1
    month = Feb 28/29).

    Args:
        months: number of months to add; negative goes back
        start: starting date YYYY-MM-DD; defaults to today in the world
    """
    d = _today(ctx, start)
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise ToolError(f"the result falls in year {year}, outside 1-9999")
    day = min(d.day, calendar.monthrange(year, month + 1)[1])
    return _dated(date(year, month + 1, day))


@tool("dates")
def add_business_days(ctx: ToolContext, days: int, start: date | None = None,
                      holidays: list[date] | None = None) -> DateResult:
    """Add working days (Monday-Friday, skipping listed holidays) to a date: due dates such
    as "10 business days after the invoice".

    Args:
        days: working days to add; negative goes back
        start: starting date YYYY-MM-DD; defaults to today in the world
        holidays: dates that are not working days
    """
    d, off = _today(ctx, start), set(holidays or [])
    step = 1 if days >= 0 else -1
    left = abs(days)
    while left:
        d += timedelta(days=step)
        if _is_business(d, off):
            left -= 1
    return _dated(d)


@tool("dates")
def business_days_between(ctx: ToolContext, start: date, end: date,
                          holidays: list[date] | None = None) -> int:
    """Count working days (Monday-Friday, minus holidays) from start (inclusive) to end
    (exclusive); negative if end is before start.

    Args:
        start: first date YYYY-MM-DD
        end: last date YYYY-MM-DD (not counted)
        holidays: dates that are not working days
    """
    lo, hi, sign = (start, end, 1) if start <= end else (end, start, -1)
    off = set(holidays or [])
    weeks, rest = divmod((hi - lo).days, 7)
    count = weeks * 5 + sum(1 for i in range(rest) if (lo + timedelta(days=weeks * 7 + i)).weekday() < 5)
    count -= sum(1 for h in off if lo <= h < hi and h.weekday() < 5)
    return sign * count


@tool("dates")
def day_of_week(ctx: ToolContext, day: date) -> DateResult:
    """The weekday name of a date (which day of the week, e.g. Tuesday).

    Args:
        day: the date YYYY-MM-DD
    """
    return _dated(day)


@tool("dates")
def week_number(ctx: ToolContext, day: date | None = None) -> WeekResult:
    """ISO week number of a date (calendar week, weeks start on Monday) with the week's first
    and last day.

    Args:
        day: the date YYYY-MM-DD; defaults to today in the world
    """
    d = _today(ctx, day)
    iso = d.isocalendar()
    start = d - timedelta(days=d.weekday())
    return WeekResult(date=d, iso_year=iso.year, iso_week=iso.week, weekday_number=iso.weekday,
                      week_start=start, week_end=start + timedelta(days=6))


@tool("dates")
def convert_timezone(ctx: ToolContext, when: datetime, from_timezone: str,
                     to_timezone: str) -> ZonedTime:
    """Convert a local time from one time zone to another (meeting times across cities),
    handling daylight saving.

    Args:
        when: local date and time YYYY-MM-DDTHH:MM in from_timezone
        from_timezone: IANA zone of the given time, e.g. America/New_York or UTC
        to_timezone: IANA zone to convert to, e.g. Asia/Tokyo
    """
    src, dst = _zone(from_timezone), _zone(to_timezone)
    local = when.replace(tzinfo=src) if when.tzinfo is None else when.astimezone(src)
    out = local.astimezone(dst)
    offset = out.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    hours, rem = divmod(abs(int(offset.total_seconds())), 3600)
    return ZonedTime(datetime=out, timezone=to_timezone, utc_offset=f"{sign}{hours:02d}:{rem // 60:02d}",
                     abbreviation=out.tzname() or "")


@tool("dates")
def duration_between(ctx: ToolContext, start: datetime, end: datetime) -> Duration:
    """How long between two dates or times (elapsed days, hours, minutes); negative when end
    comes before start.

    Args:
        start: first date or date-time, e.g. 2024-03-01 or 2024-03-01T09:30
        end: second date or date-time
    """
    if (start.tzinfo is None) != (end.tzinfo is None):
        raise ToolError("give both times with a UTC offset or neither")
    delta = end - start
    total = delta.total_seconds()
    rest = abs(int(total))
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    sign = "-" if total < 0 else ""
    return Duration(total_seconds=total, days=days, hours=hours, minutes=minutes, seconds=seconds,
                    total_days=round(total / 86400, 6), total_hours=round(total / 3600, 4),
                    text=f"{sign}{days}d {hours}h {minutes}m {seconds}s")


@tool("dates")
def next_weekday(ctx: ToolContext, weekday: Weekday, after: date | None = None,
                 include_start: bool = False) -> DateResult:
    """The next occurrence of a weekday after a date ("next Friday").

    Args:
        weekday: the day of the week wanted
        after: reference date YYYY-MM-DD; defaults to today in the world
        include_start: count the reference date itself if it is that weekday
    """
    d = _today(ctx, after)
    ahead = (WEEKDAYS.index(weekday) - d.weekday()) % 7
    if ahead == 0 and not include_start:
        ahead = 7
    return _dated(d + timedelta(days=ahead))


@tool("dates")
def next_anniversary(ctx: ToolContext, month: int, day: int, after: date | None = None) -> DateResult:
    """The next occurrence of a yearly date such as a birthday, renewal or deadline (Feb 29
    falls on Feb 28 in common years).

    Args:
        month: month 1-12
        day: day of the month 1-31
        after: reference date YYYY-MM-DD; defaults to today in the world
    """
    d = _today(ctx, after)
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise ToolError(f"month {month} / day {day} is not a calendar date")
    for year in (d.year, d.year + 1):
        last = calendar.monthrange(year, month)[1]
        if day > last and not (month == 2 and day == 29):
            raise ToolError(f"month {month} has no day {day}")
        candidate = date(year, month, min(day, last))
        if candidate > d:
            return _dated(candidate)
    raise ToolError("no next occurrence found")  # unreachable for valid dates


@tool("dates")
def month_calendar(ctx: ToolContext, year: int, month: int) -> MonthCalendar:
    """The calendar of a month: how many days it has and its weeks Monday to Sunday.

    Args:
        year: the year, e.g. 2025
        month: month 1-12
    """
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        raise ToolError(f"{year}-{month} is not a valid month")
    cal = calendar.Calendar(firstweekday=0)
    return MonthCalendar(year=year, month=month, month_name=calendar.month_name[month],
                         days=calendar.monthrange(year, month)[1],
                         weeks=cal.monthdayscalendar(year, month))
