"""Where a window starts and ends (epoch seconds), for an instant and a time zone.

Calendar windows follow the wall clock of BudgetTimeZone: a minute, an hour, a day from midnight, a
week from Monday midnight, a month from the 1st at midnight. Their bounds are computed on the wall
clock and then made instants (zoneinfo), so a day that a DST change makes 23 or 25 hours long is 23
or 25 hours long here too; an hour window is always an hour of real time (the repeated or skipped
wall-clock hour of a DST change is one more or one fewer window). A wall-clock midnight that does
not exist (a zone that changes at 00:00) starts the day at the first instant after it.

Rolling windows (`<N>h`) have no bounds of their own: one opens with the first request when none is
open (in the admission script) and lasts N hours.

`Bounds` caches the current bounds of each (window, zone) until they end: the relay asks once per
request and window, and computes once per window turn.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = UTC


@lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name; an unknown one (an option edited by hand) reads as UTC."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _instant(wall: datetime, tz: ZoneInfo) -> int:
    """The epoch second of a wall-clock time in `tz`; a time in a gap moves past the gap."""
    aware = wall.replace(tzinfo=tz, fold=0)
    if aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != wall:  # in a gap: the instant it ends
        return int(max(aware.timestamp(), wall.replace(tzinfo=tz, fold=1).timestamp()))
    return int(aware.timestamp())


def bounds(window: str, now: float, tz_name: str = "UTC") -> tuple[int, int]:
    """(start, end) in epoch seconds of the calendar window `window` that holds `now`."""
    seconds = int(now // 1)
    if window == "minute":
        start = seconds - seconds % 60
        return start, start + 60
    if window == "hour":  # an hour of real time: the same in every zone whose offset is whole hours
        tz = zone(tz_name)
        local = datetime.fromtimestamp(seconds, tz)
        offset = int(local.utcoffset().total_seconds()) if local.utcoffset() else 0  # type: ignore[union-attr]
        start = seconds - (seconds + offset) % 3600
        return start, start + 3600
    tz = zone(tz_name)
    local = datetime.fromtimestamp(seconds, tz).replace(tzinfo=None)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "day":
        first, after = day, day + timedelta(days=1)
    elif window == "week":
        first = day - timedelta(days=day.weekday())
        after = first + timedelta(days=7)
    elif window == "month":
        first = day.replace(day=1)
        after = (first.replace(year=first.year + 1, month=1) if first.month == 12
                 else first.replace(month=first.month + 1))
    else:
        raise ValueError(f"not a calendar window: {window}")
    start, end = _instant(first, tz), _instant(after, tz)
    if start > seconds:  # a gap at midnight put the start after `now` (cannot happen with real zones' rules)
        start = seconds
    return start, end


class Bounds:
    """The current (start, end) of each calendar window and zone, recomputed when it ends."""

    def __init__(self) -> None:
        self._current: dict[tuple[str, str], tuple[int, int]] = {}

    def of(self, window: str, now: float, tz_name: str) -> tuple[int, int]:
        key = (window, tz_name)
        hit = self._current.get(key)
        if hit is not None and hit[0] <= now < hit[1]:
            return hit
        found = bounds(window, now, tz_name)
        if len(self._current) > 256:
            self._current.clear()
        self._current[key] = found
        return found
