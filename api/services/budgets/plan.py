"""Which windows a request counts in, and their Redis keys (docs/billing.md, Budgets and limits).

Every limit that applies must hold: the key's, its user's, and the user's group's (GroupLimits, for
each user of the group: a group limit is an allowance per user). A limit with a `model` applies to
the models it names. Limits of one owner sharing a window and model (an *identity*) share one usage
hash per window, with a field per measure:

  {u<user>}:bw:<owner>:<identity>:<start>   a calendar window (expires some time after its end)
  {u<user>}:bw:<owner>:<identity>           the open rolling window (field `s`: its start)

`<owner>` is `k<token id>`, `u` (the user) or `g:<group>`; `<identity>` is the window, or
`<window>@<model>`; fields `s` (start, epoch s), `q` quota, `r` requests, `t` tokens. Every key lives
under the user's hash tag, so the admission and settlement scripts stay on one Redis Cluster slot.

A window a request counted in is carried as `[owner, identity, start, end]` (epoch seconds) by its
reservation, its settlement record and a task's charge, so that whatever closes it (settlement,
refund, sweep, the worker) moves that very window.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from api.services import redis_keys
from api.services.budgets.limits import CALENDAR, MEASURES, Limit
from api.services.budgets.windows import Bounds

HOUR = 3600
DAY = 86400
NO_CAP = -1


def grace(length: int) -> int:
    """Seconds a window's hash outlives its end: a request admitted in it settles there (longer ones
    settle into the database only), and a console can read the window that just ended."""
    return HOUR + min(length, DAY)


def owner_kind(part: str) -> str:
    return "key" if part.startswith("k") else "group" if part.startswith("g:") else "user"


def owner_ref(part: str, user_id: int) -> str:
    """The owner's id as the database keeps it: the key's id, the user's id, the group's name."""
    kind = owner_kind(part)
    return part[1:] if kind == "key" else part[2:] if kind == "group" else str(user_id)


def window_of(identity: str) -> str:
    return identity.split("@", 1)[0]


def rolling_seconds(identity: str) -> int:
    window = window_of(identity)
    return 0 if window in CALENDAR else int(window[:-1]) * HOUR


@dataclass(frozen=True, slots=True)
class Rule:
    """One owner's limits of one identity that apply to a request."""

    part: str
    identity: str
    window: str
    model: str
    rolling: int  # seconds; 0 = a calendar window
    caps: tuple[int, int, int]  # quota, requests, tokens; NO_CAP where no limit counts that measure
    limits: tuple[Limit, ...]


@dataclass(slots=True)
class Counted:
    """A window a request is to count in (start 0: a rolling window, its start read by the script)."""

    rule: Rule
    key: str
    start: int
    end: int
    expire: int  # calendar: the hash's expiry (epoch s); rolling: its grace after the end

    def wire(self) -> list[object]:
        return [self.rule.part, self.rule.identity, self.start, self.end]


def rules(parts: Sequence[tuple[str, Sequence[Limit]]], model: str) -> tuple[Rule, ...]:
    """The rules of the owners' limits that apply to `model`, one per (owner, identity)."""
    out: list[Rule] = []
    for part, limits in parts:
        grouped: dict[str, list[Limit]] = {}
        for limit in limits:
            if limit.applies_to(model):
                grouped.setdefault(limit.identity, []).append(limit)
        for identity, same in grouped.items():
            caps = [NO_CAP, NO_CAP, NO_CAP]
            for limit in same:
                i = MEASURES.index(limit.measure)
                caps[i] = limit.amount if caps[i] == NO_CAP else min(caps[i], limit.amount)
            first = same[0]
            out.append(Rule(part, identity, first.window, first.model, first.rolling_hours * HOUR,
                            (caps[0], caps[1], caps[2]), tuple(same)))
    return tuple(out)


class Planner:
    """The rules of each (key, user, group, model) and the windows of each (user, rules) now, cached:
    a request with limits costs two dictionary lookups until a window turns.

    The limits are the cached tuples of api.services.budgets.limits.stored (one object per distinct
    text), keyed here by identity; each entry keeps its tuples alive, so an id is never reused while
    its entry stands."""

    def __init__(self) -> None:
        self._rules: dict[tuple[object, ...], tuple[tuple[Rule, ...], tuple[object, ...]]] = {}
        self._windows: dict[tuple[object, ...], tuple[float, float, list[Counted], tuple[Rule, ...]]] = {}
        self.bounds = Bounds()

    def rules_for(self, token_id: int, token_limits: tuple[Limit, ...], user_limits: tuple[Limit, ...],
                  group: str, group_limits: tuple[Limit, ...], model: str) -> tuple[Rule, ...]:
        if not (token_limits or user_limits or group_limits):
            return ()
        cache_key = (token_id, id(token_limits), id(user_limits), group, id(group_limits), model)
        hit = self._rules.get(cache_key)
        if hit is not None:
            return hit[0]
        parts: list[tuple[str, Sequence[Limit]]] = []
        if token_id and token_limits:
            parts.append((f"k{token_id}", token_limits))
        if user_limits:
            parts.append(("u", user_limits))
        if group_limits:
            parts.append((f"g:{group}", group_limits))
        found = rules(parts, model)
        if len(self._rules) > 8192:
            self._rules.clear()
        self._rules[cache_key] = (found, (token_limits, user_limits, group_limits))
        return found

    def windows(self, store: redis_keys.Prefixed, user_id: int, found: tuple[Rule, ...], now: float,
                tz_name: str) -> list[Counted]:
        """The windows of these rules at `now` (the same list until the first of them turns; not to
        be changed by the caller)."""
        cache_key = (store.prefix, user_id, id(found), tz_name)
        hit = self._windows.get(cache_key)
        if hit is not None and hit[3] is found and hit[0] <= now < hit[1]:
            return hit[2]
        out: list[Counted] = []
        since, until = -math.inf, math.inf  # while every calendar window holds `now`
        for rule in found:
            if rule.rolling:
                out.append(Counted(rule, window_key(store, user_id, rule.part, rule.identity, 0), 0, 0,
                                   grace(rule.rolling)))
            else:
                start, end = self.bounds.of(rule.window, now, tz_name)
                since, until = max(since, start), min(until, end)
                out.append(Counted(rule, window_key(store, user_id, rule.part, rule.identity, start), start, end,
                                   end + grace(end - start)))
        if len(self._windows) > 65536:
            self._windows.clear()
        self._windows[cache_key] = (since, until, out, found)
        return out


def window_key(store: redis_keys.Prefixed, user_id: int, part: str, identity: str, start: int) -> str:
    """The usage hash of a window (`start` ignored for a rolling window: one open at a time)."""
    if rolling_seconds(identity):
        return redis_keys.user_key(store, user_id, "bw", part, identity)
    return redis_keys.user_key(store, user_id, "bw", part, identity, start)
