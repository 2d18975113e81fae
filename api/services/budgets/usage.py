"""What each limit of an owner holds now, read live from Redis (for the console's usage bars and the
read APIs): the key's limits, its user's, and the user's group's.

`used` is what the window's hash holds: the settled charges plus the reservations of the requests
still running. A rolling window that is not open holds nothing (`window_start` and `resets_at` are
None: the next request opens it). While the user's balance is not in Redis (lost, not yet reloaded
by a request) the windows are read from the database instead (models.BudgetUsage), without the
pending records.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TypedDict

from api.services import redis_keys
from api.services.budgets.durable import part_of
from api.services.budgets.limits import Limit, group_limits, parse_limits
from api.services.budgets.plan import window_key
from api.services.budgets.windows import bounds
from api.services.store import Store
from models import BudgetUsage

FIELD = {"quota": "q", "requests": "r", "tokens": "t"}


class LimitUsage(TypedDict):
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


async def usage_of(store: Store, *, user_id: int, user_limits: Limits = "", group: str = "",
                   group_limits_option: str = "", token_id: int = 0, token_limits: Limits = "",
                   time_zone: str = "UTC", now: float | None = None) -> list[LimitUsage]:
    """Every limit that holds for a key (token_id, its limits) and its user (their limits, their group
    and the GroupLimits option's text), in that order, with what its current window holds.
    `*_limits` are the stored texts (Token.limits, User.limits) or parsed limits."""
    now = time.time() if now is None else now
    owners: list[tuple[str, str, Sequence[Limit]]] = []
    if token_id:
        owners.append(("key", str(token_id), _limits(token_limits)))
    owners.append(("user", str(user_id), _limits(user_limits)))
    if group:
        owners.append(("group", group, group_limits(group_limits_option).get(group, ())))
    plan: list[tuple[str, str, Limit, str, int | None, int | None]] = []
    for kind, ref, limits in owners:
        for limit in limits:
            part = part_of(kind, ref)
            if limit.rolling_hours:
                plan.append((kind, ref, limit, window_key(store, user_id, part, limit.identity, 0), None, None))
            else:
                first, after = bounds(limit.window, now, time_zone)
                plan.append((kind, ref, limit, window_key(store, user_id, part, limit.identity, first), first, after))
    if not plan:
        return []
    async with store.redis.pipeline(transaction=False) as pipe:
        pipe.exists(redis_keys.quota(store, user_id))
        for entry in plan:
            pipe.hmget(entry[3], "s", "q", "r", "t")
        loaded, *hashes = await pipe.execute()
    if not loaded:
        hashes = await _from_database(user_id, plan, now)
    out: list[LimitUsage] = []
    for (kind, _, limit, _, begin, ends), values in zip(plan, hashes, strict=True):
        held = dict(zip(("s", "q", "r", "t"), values, strict=True))
        used = int(held[FIELD[limit.measure]] or 0)
        start: int | None = begin
        end: int | None = ends
        if limit.rolling_hours:
            opened = int(held["s"]) if held["s"] else None
            if opened is not None and opened + limit.rolling_hours * 3600 > now:
                start, end = opened, opened + limit.rolling_hours * 3600
            else:
                start, end, used = None, None, 0
        out.append(LimitUsage(owner=kind, window=limit.window, measure=limit.measure, model=limit.model,
                              limit=limit.amount, used=used, soft=limit.soft, window_start=start, resets_at=end))
    return out


def _limits(value: Limits) -> Sequence[Limit]:
    return parse_limits(value) if isinstance(value, str) else value


async def _from_database(user_id: int, plan: Sequence[tuple[str, str, Limit, str, int | None, int | None]],
                         now: float) -> list[list[Any]]:
    rows = await BudgetUsage.filter(user_id=user_id, window_end__gt=int(now)).values(
        "owner_kind", "owner_id", "identity", "window_start", "quota", "requests", "tokens")
    out: list[list[Any]] = []
    for kind, ref, limit, _, start, _ in plan:
        found = [r for r in rows if (r["owner_kind"], r["owner_id"], r["identity"]) == (kind, ref, limit.identity)
                 and (start is None or r["window_start"] == start)]
        row = max(found, key=lambda r: r["window_start"]) if found else None
        out.append([row["window_start"], row["quota"], row["requests"], row["tokens"]] if row else [None] * 4)
    return out
