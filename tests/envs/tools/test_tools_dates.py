"""Date and calendar arithmetic; "today" is the world's base date (2025-03-12, a Wednesday)."""

from __future__ import annotations

from tools_helpers import ok, run

from guiforge.envs.tools import ToolContext


def test_today_and_add_days_default_to_the_world(ctx: ToolContext):
    assert ok(ctx, "today") == {"date": "2025-03-12", "weekday": "wednesday"}
    assert ok(ctx, "add_days", days=45) == {"date": "2025-04-26", "weekday": "saturday"}
    assert ok(ctx, "add_days", days=-12, start="2025-03-01")["date"] == "2025-02-17"


def test_without_a_world_a_date_is_required(ctx: ToolContext):
    ctx.world = None
    r = run(ctx, "add_days", days=1)
    assert not r.ok and "no date given" in r.error
    assert ok(ctx, "add_days", days=1, start="2024-02-28")["date"] == "2024-02-29"


def test_add_months_clamps_the_day(ctx: ToolContext):
    assert ok(ctx, "add_months", months=1, start="2025-01-31")["date"] == "2025-02-28"
    assert ok(ctx, "add_months", months=1, start="2024-01-31")["date"] == "2024-02-29"
    assert ok(ctx, "add_months", months=-14, start="2025-03-12")["date"] == "2024-01-12"


def test_business_days(ctx: ToolContext):
    # Fri 2025-03-14 + 1 business day = Mon 03-17; with Monday a holiday = Tue 03-18
    assert ok(ctx, "add_business_days", days=1, start="2025-03-14")["date"] == "2025-03-17"
    assert ok(ctx, "add_business_days", days=1, start="2025-03-14",
              holidays=["2025-03-17"])["date"] == "2025-03-18"
    assert ok(ctx, "add_business_days", days=-3, start="2025-03-17")["date"] == "2025-03-12"
    assert ok(ctx, "add_business_days", days=10)["date"] == "2025-03-26"
    assert ok(ctx, "business_days_between", start="2025-03-01", end="2025-04-01") == 21
    assert ok(ctx, "business_days_between", start="2025-04-01", end="2025-03-01") == -21
    assert ok(ctx, "business_days_between", start="2025-12-22", end="2026-01-05",
              holidays=["2025-12-25", "2025-12-26", "2026-01-01", "2025-12-27"]) == 7


def test_weekday_week_number_calendar(ctx: ToolContext):
    assert ok(ctx, "day_of_week", day="2024-03-03")["weekday"] == "sunday"
    week = ok(ctx, "week_number", day="2024-12-30")
    assert (week["iso_year"], week["iso_week"]) == (2025, 1)  # ISO week 1 of the next year
    assert (week["week_start"], week["week_end"]) == ("2024-12-30", "2025-01-05")
    feb = ok(ctx, "month_calendar", year=2028, month=2)
    assert feb["days"] == 29 and feb["weeks"][0][:3] == [0, 1, 2]  # 2028-02-01 is a Tuesday
    assert not run(ctx, "month_calendar", year=2028, month=13).ok


def test_time_zones_handle_daylight_saving(ctx: ToolContext):
    # 15:00 in New York on 2025-03-10 (already EDT, UTC-4) is 04:00 next day in Tokyo
    r = ok(ctx, "convert_timezone", when="2025-03-10T15:00", from_timezone="America/New_York",
           to_timezone="Asia/Tokyo")
    assert r["datetime"] == "2025-03-11T04:00:00+09:00" and r["utc_offset"] == "+09:00"
    # a week earlier New York was still on EST (UTC-5)
    r = ok(ctx, "convert_timezone", when="2025-03-03T15:00", from_timezone="America/New_York",
           to_timezone="UTC")
    assert r["datetime"] == "2025-03-03T20:00:00Z" and r["abbreviation"] == "UTC"
    bad = run(ctx, "convert_timezone", when="2025-03-03T15:00", from_timezone="Mars/Olympus",
              to_timezone="UTC")
    assert not bad.ok and "unknown time zone 'Mars/Olympus'" in bad.error


def test_duration_between(ctx: ToolContext):
    d = ok(ctx, "duration_between", start="2025-03-01T09:30", end="2025-03-03T12:45:10")
    assert (d["days"], d["hours"], d["minutes"], d["seconds"]) == (2, 3, 15, 10)
    assert d["total_hours"] == 51.2528
    back = ok(ctx, "duration_between", start="2025-04-01", end="2025-03-01")
    assert back["total_days"] == -31 and back["text"].startswith("-31d")
    mixed = run(ctx, "duration_between", start="2025-03-01T00:00+01:00", end="2025-03-02")
    assert not mixed.ok and "UTC offset" in mixed.error


def test_next_occurrences(ctx: ToolContext):
    assert ok(ctx, "next_weekday", weekday="friday")["date"] == "2025-03-14"
    assert ok(ctx, "next_weekday", weekday="wednesday")["date"] == "2025-03-19"
    assert ok(ctx, "next_weekday", weekday="wednesday", include_start=True)["date"] == "2025-03-12"
    assert ok(ctx, "next_anniversary", month=1, day=5)["date"] == "2026-01-05"
    assert ok(ctx, "next_anniversary", month=3, day=20)["date"] == "2025-03-20"
    assert ok(ctx, "next_anniversary", month=2, day=29, after="2025-03-12")["date"] == "2026-02-28"
    assert not run(ctx, "next_anniversary", month=4, day=31).ok
