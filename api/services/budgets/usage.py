"""What each limit of an owner holds now, read live from Redis (for the console's usage bars and the
read APIs): a key's limits, a user's, a group's (for one of its users).

`used` is what the window's hash holds: the settled charges plus the reservations of the requests
still running. A rolling window that is not open holds nothing (`window_start` and `resets_at` are
None: the next request opens it). While a user's balance is not in Redis (lost, not yet reloaded
by a request) their windows are read from the database instead (models.BudgetUsage), without the
pending records.

`read_usage` answers any number of owners (a page of keys, a page of users) in one Redis round trip
and, for the users whose balance is not loaded, one query.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from api.services import redis_keys
from api.services.budgets.durable import part_of
from api.services.budgets.limits import Limit, group_limits, stored
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from api.services.store import Store
from models import BudgetUsage

FIELD = {"quota": "q", "requests": "r", "tokens": "t"}


class LimitUsage(TypedDict):
    index: int  # the limit's place in its owner's list
    owner: str  # key | user | group
    window: str
    measure: str  # quota | requests | tokens
    model: str  # "" = every model
    limit: int
    used: int
    soft: int  # percent, 0 = none
    window_start: int | None  # epoch seconds
    resets_at: int | None


Limits = str | Sequence[Limit]


@dataclass(frozen=True, slots=True)
class Holder:
    """One owner's limits, counted for one user: `kind` key | user | group, `ref` the key's id, the
    user's id, the group's name."""

    user_id: int
    kind: str
    ref: str
    limits: Sequence[Limit]


def key_holder(user_id: int, token_id: int, limits: Limits) -> Holder:
    return Holder(user_id, "key", str(token_id), _limits(limits))


def user_holder(user_id: int, limits: Limits) -> Holder:
    return Holder(user_id, "user", str(user_id), _limits(limits))


def group_holder(user_id: int, group: str, group_limits_option: str) -> Holder:
    return Holder(user_id, "group", group, group_limits(group_limits_option).get(group, ()) if group else ())


@dataclass(frozen=True, slots=True)
class _Read:
    slot: int  # the holder's place
    holder: Holder
    index: int
    limit: Limit
    key: str
    start: int | None  # a calendar window's bounds; None for a rolling one
    end: int | None


async def read_usage(store: Store, holders: Sequence[Holder], *, time_zone: str = "UTC",
                     now: float | None = None) -> list[list[LimitUsage]]:
    """Per holder (in order), each of its limits with what its current window holds."""
    now = time.time() if now is None else now
    reads: list[_Read] = []
    for slot, holder in enumerate(holders):
        part = part_of(holder.kind, holder.ref)
        for index, limit in enumerate(holder.limits):
            if limit.rolling_hours:
                key = window_key(store, holder.user_id, part, limit.identity, 0)
                reads.append(_Read(slot, holder, index, limit, key, None, None))
            else:
                first, after = bounds(limit.window, now, time_zone)
                key = window_key(store, holder.user_id, part, limit.identity, first)
                reads.append(_Read(slot, holder, index, limit, key, first, after))
    out: list[list[LimitUsage]] = [[] for _ in holders]
    if not reads:
        return out
    users = sorted({r.holder.user_id for r in reads})
    async with store.redis.pipeline(transaction=False) as pipe:
        for user_id in users:
            pipe.exists(redis_keys.quota(store, user_id))
        for read in reads:
            pipe.hmget(read.key, "s", "q", "r", "t")
        answers = await pipe.execute()
    loaded = {user_id for user_id, found in zip(users, answers, strict=False) if found}
    hashes: list[list[Any]] = answers[len(users):]
    missing = [u for u in users if u not in loaded]
    if missing:
        rows = await _open_rows(missing, now)
        hashes = [values if read.holder.user_id in loaded else _row_values(rows, read)
                  for read, values in zip(reads, hashes, strict=True)]
    for read, values in zip(reads, hashes, strict=True):
        out[read.slot].append(_entry(read, values, now))
    return out


async def usage_of(store: Store, *, user_id: int, user_limits: Limits = "", group: str = "",
                   group_limits_option: str = "", token_id: int = 0, token_limits: Limits = "",
                   time_zone: str = "UTC", now: float | None = None) -> list[LimitUsage]:
    """Every limit that holds for a key (token_id, its limits) and its user (their limits, their group
    and the GroupLimits option's text), in that order, with what its current window holds.
    `*_limits` are the stored texts (Token.limits, User.limits) or parsed limits."""
    holders = [key_holder(user_id, token_id, token_limits)] if token_id else []
    holders.append(user_holder(user_id, user_limits))
    if group:
        holders.append(group_holder(user_id, group, group_limits_option))
    return [entry for entries in await read_usage(store, holders, time_zone=time_zone, now=now) for entry in entries]


def room(entry: LimitUsage) -> float:
    """What is left of a limit, relative to it: 0 at (or over) the limit, 1 untouched."""
    if entry["limit"] <= 0:
        return 0.0
    return max(0.0, (entry["limit"] - entry["used"]) / entry["limit"])


def binding(entries: Sequence[LimitUsage]) -> LimitUsage | None:
    """The limit that binds first: the least room left relative to its limit (of two alike, the
    one that resets last: it binds longer); None without limits."""
    if not entries:
        return None
    return min(entries, key=lambda e: (room(e), -(e["resets_at"] or 2**62)))


def _limits(value: Limits) -> Sequence[Limit]:
    return stored(value) if isinstance(value, str) else value


def _entry(read: _Read, values: Sequence[Any], now: float) -> LimitUsage:
    held = dict(zip(("s", "q", "r", "t"), values, strict=True))
    limit = read.limit
    used = int(held[FIELD[limit.measure]] or 0)
    start, end = read.start, read.end
    if limit.rolling_hours:
        opened = int(held["s"]) if held["s"] else None
        if opened is not None and opened + limit.rolling_hours * 3600 > now:
            start, end = opened, opened + limit.rolling_hours * 3600
        else:
            start, end, used = None, None, 0
    return LimitUsage(index=read.index, owner=read.holder.kind, window=limit.window, measure=limit.measure,
                      model=limit.model, limit=limit.amount, used=used, soft=limit.soft, window_start=start,
                      resets_at=end)


RowKey = tuple[int, str, str, str]  # user, owner kind, owner id, identity


async def _open_rows(user_ids: Sequence[int], now: float) -> dict[RowKey, list[dict[str, Any]]]:
    """The open windows' rows of these users, by owner and identity (one query)."""
    rows = await BudgetUsage.filter(user_id__in=list(user_ids), window_end__gt=int(now)).values(
        "user_id", "owner_kind", "owner_id", "identity", "window_start", "quota", "requests", "tokens")
    out: dict[RowKey, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault((int(row["user_id"]), row["owner_kind"], row["owner_id"], row["identity"]), []).append(row)
    return out


def _row_values(rows: dict[RowKey, list[dict[str, Any]]], read: _Read) -> list[Any]:
    """A window's (start, quota, requests, tokens) from its row: a calendar window's current one, the
    latest open rolling window."""
    found = [r for r in rows.get((read.holder.user_id, read.holder.kind, read.holder.ref, read.limit.identity), ())
             if read.start is None or r["window_start"] == read.start]
    row = max(found, key=lambda r: r["window_start"]) if found else None
    return [row["window_start"], row["quota"], row["requests"], row["tokens"]] if row else [None] * 4
