"""Window bounds: calendar windows on the wall clock of the budget time zone (DST-correct), weeks from
Monday, months from the 1st; the cache of the current bounds turns with the clock it is given."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from api.services.budgets.windows import Bounds, bounds, valid_zone


def at(text: str, tz: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp()


def test_utc_windows() -> None:
    now = at("2025-03-12 15:47:09")  # a Wednesday
    assert bounds("minute", now) == (int(at("2025-03-12 15:47:00")), int(at("2025-03-12 15:48:00")))
    assert bounds("hour", now) == (int(at("2025-03-12 15:00")), int(at("2025-03-12 16:00")))
    assert bounds("day", now) == (int(at("2025-03-12")), int(at("2025-03-13")))
    assert bounds("week", now) == (int(at("2025-03-10")), int(at("2025-03-17")))
    assert bounds("month", now) == (int(at("2025-03-01")), int(at("2025-04-01")))
    assert bounds("month", at("2025-12-31 23:59:59")) == (int(at("2025-12-01")), int(at("2026-01-01")))


def test_a_day_in_another_zone_starts_at_its_midnight() -> None:
    tz = "Asia/Shanghai"
    now = at("2025-03-12 01:30", tz)  # still the 11th in UTC
    assert bounds("day", now, tz) == (int(at("2025-03-12", tz)), int(at("2025-03-13", tz)))
    assert bounds("hour", at("2025-03-12 10:15", "Asia/Kolkata"), "Asia/Kolkata")[0] == \
        int(at("2025-03-12 10:00", "Asia/Kolkata"))  # a half-hour offset: the local hour


def test_dst_days_are_23_and_25_hours_long() -> None:
    tz = "Europe/Berlin"
    spring = bounds("day", at("2025-03-30 12:00", tz), tz)
    autumn = bounds("day", at("2025-10-26 12:00", tz), tz)
    assert spring[1] - spring[0] == 23 * 3600 and autumn[1] - autumn[0] == 25 * 3600
    assert spring[0] == int(at("2025-03-30", tz))
    week = bounds("week", at("2025-03-30 12:00", tz), tz)  # the Sunday that loses an hour
    assert week == (int(at("2025-03-24", tz)), int(at("2025-03-31", tz)))
    assert week[1] - week[0] == 7 * 86400 - 3600
    month = bounds("month", at("2025-10-15", tz), tz)
    assert month == (int(at("2025-10-01", tz)), int(at("2025-11-01", tz)))


def test_a_midnight_that_does_not_exist_starts_the_day_after_the_gap() -> None:
    tz = "America/Santiago"  # changes at 24:00 → 01:00 in September
    start, end = bounds("day", at("2024-09-08 12:00", tz), tz)
    assert datetime.fromtimestamp(start, ZoneInfo(tz)).hour == 1
    assert end - start == 23 * 3600


def test_the_cache_turns_with_the_clock() -> None:
    cache = Bounds()
    day = at("2025-03-12 23:59:59")
    assert cache.of("day", day, "UTC") == bounds("day", day)
    assert cache.of("day", day + 1, "UTC") == (int(at("2025-03-13")), int(at("2025-03-14")))


def test_zone_names() -> None:
    assert valid_zone("UTC") and valid_zone("Asia/Shanghai") and not valid_zone("Mars/Olympus")
