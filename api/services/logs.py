"""Usage logs, their statistics, and the hourly dashboard aggregates (QuotaData).

Rows are written elsewhere (the relay's settlement worker, top-ups, management actions); this module
reads them, and names what a non-consumption row says (`log_event`). Queries filter on the indexed
columns of models.Log (each `(column, created_at)`) and order by `created_at` then id, so a page of
a large table is an index range scan.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from tortoise.functions import Count, Sum
from tortoise.queryset import QuerySet

from api.errors import ApiError
from models import Log, QuotaData
from models.enums import LogType

RATE_WINDOW = 60  # seconds of consume logs behind rpm and tpm
DELETE_BATCH = 5000
MAX_SELF_DATA_SPAN = 30 * 24 * 3600
DEFAULT_DATA_SPAN = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class LogFilter:
    log_type: int = 0  # 0 = all
    user_id: int | None = None
    username: str = ""
    token_name: str = ""
    model_name: str = ""
    start: int = 0
    end: int = 0
    channel: int = 0

    def apply(self, query: QuerySet[Log], *, with_type: bool = True, with_time: bool = True) -> QuerySet[Log]:
        if with_type and self.log_type:
            query = query.filter(type=self.log_type)
        if self.user_id is not None:
            query = query.filter(user_id=self.user_id)
        if self.username:
            query = query.filter(username=self.username)
        if self.token_name:
            query = query.filter(token_name=self.token_name)
        if self.model_name:
            query = query.filter(model_name=self.model_name)
        if self.channel:
            query = query.filter(channel_id=self.channel)
        if with_time and self.start:
            query = query.filter(created_at__gte=self.start)
        if with_time and self.end:
            query = query.filter(created_at__lte=self.end)
        return query


def log_event(event: str, extra: Mapping[str, Any] | None = None, **params: Any) -> str:
    """A log row's `other` naming what happened and its values (plus `extra` fields beside them):
    the console writes the sentence in the reader's language from these; `content` keeps an
    English sentence for API clients and for rows written before."""
    return orjson.dumps({**(extra or {}), "event": event, "params": params}).decode()


def log_dict(row: Log, *, admin: bool) -> dict[str, Any]:
    """The wire shape; a plain user never sees the channel nor `other.admin_info`."""
    item = {
        "id": row.id,
        "user_id": row.user_id,
        "created_at": row.created_at,
        "type": row.type,
        "content": row.content,
        "username": row.username,
        "token_name": row.token_name,
        "token_id": row.token_id,
        "model_name": row.model_name,
        "quota": row.quota,
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "use_time": row.use_time,
        "is_stream": row.is_stream,
        "group": row.group,
        "other": row.other if admin else _without_admin_info(row.other),
    }
    if admin:
        item["channel"] = row.channel_id
    return item


def _without_admin_info(other: str) -> str:
    if "admin_info" not in other:
        return other
    try:
        data = orjson.loads(other)
    except orjson.JSONDecodeError:
        return ""
    if isinstance(data, dict):
        data.pop("admin_info", None)
        return orjson.dumps(data).decode()
    return other


async def page_logs(flt: LogFilter, offset: int, limit: int) -> tuple[list[Log], int]:
    query = flt.apply(Log.all())
    rows = await query.order_by("-created_at", "-id").offset(offset).limit(limit)
    return rows, await query.count()


async def stat(flt: LogFilter, now: int | None = None) -> dict[str, int]:
    """quota: consume logs matching the filter; rpm/tpm: consume logs of the last 60 seconds."""
    now = int(time.time()) if now is None else now
    consume = flt.apply(Log.filter(type=int(LogType.CONSUME)), with_type=False)
    totals = await consume.annotate(total=Sum("quota")).values("total")
    recent = flt.apply(Log.filter(type=int(LogType.CONSUME), created_at__gte=now - RATE_WINDOW), with_type=False,
                       with_time=False)
    rates = await recent.annotate(requests=Count("id"), prompt=Sum("prompt_tokens"),
                                  completion=Sum("completion_tokens")).values("requests", "prompt", "completion")
    quota = _first(totals, "total")
    return {
        "quota": quota,
        "rpm": _first(rates, "requests"),
        "tpm": _first(rates, "prompt") + _first(rates, "completion"),
    }


def _first(rows: Sequence[Mapping[str, Any]], name: str) -> int:
    if not rows or rows[0].get(name) is None:
        return 0
    return int(rows[0][name])


async def delete_before(timestamp: int) -> int:
    """Delete logs older than `timestamp` in batches (short transactions on a large table)."""
    deleted = 0
    while True:
        ids = await Log.filter(created_at__lt=timestamp).order_by("id").limit(DELETE_BATCH).values_list("id", flat=True)
        if not ids:
            return deleted
        deleted += await Log.filter(id__in=list(ids)).delete()


# -- dashboard data --------------------------------------------------------------------------------
def data_range(start: int, end: int, *, max_span: int | None, now: int | None = None) -> tuple[int, int]:
    now = int(time.time()) if now is None else now
    end = end or now
    start = start or end - DEFAULT_DATA_SPAN
    if start > end:
        raise ApiError("data_range_invalid")
    if max_span is not None and end - start > max_span:
        raise ApiError("data_range_too_long", days=max_span // 86400)
    return start, end


async def quota_data(start: int, end: int, *, user_id: int | None = None, username: str = "",
                     by_user: bool = False) -> list[dict]:
    """Per (model, hour) sums of count, quota and token_used in [start, end]; `by_user`: per
    (user, model, hour), each row naming its `username` (the admin dashboard's per-user view)."""
    query = QuotaData.filter(created_at__gte=start, created_at__lte=end)
    if user_id is not None:
        query = query.filter(user_id=user_id)
    if username:
        query = query.filter(username=username)
    keys = ("username", "model_name", "created_at") if by_user else ("model_name", "created_at")
    rows = await (query.annotate(c=Sum("count"), q=Sum("quota"), t=Sum("token_used"))
                  .group_by(*keys)
                  .order_by("created_at", "model_name", *keys[:-2])
                  .values(*keys, "c", "q", "t"))
    return [{**({"username": r["username"]} if by_user else {}), "model_name": r["model_name"],
             "created_at": r["created_at"], "count": int(r["c"] or 0), "quota": int(r["q"] or 0),
             "token_used": int(r["t"] or 0)} for r in rows]
