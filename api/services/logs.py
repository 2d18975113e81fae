"""Usage logs, their statistics, and the hourly dashboard aggregates (QuotaData).

Rows are written elsewhere (the relay's settlement worker, top-ups, management actions, failed relay
calls: api.services.error_logs); this module reads them, and names what a non-consumption row says
(`log_event`). Queries filter on the indexed columns of models.Log (each `(column, created_at)`) and
order by `created_at` then id, so a page of a large table is an index range scan.

Refunds. A failed task's charge given back is a system row whose request id is its refund id
(`task-refund:<platform>:<task row id>`, api.relay.tasks.billing.refund_id) and whose stored quota
is the amount returned. On the wire (and in the "consumed" statistic) it is a cost of minus that
amount, like the refund's settlement record in the dashboard's aggregates: consumption and refunds
add up to what the user paid, on the log page as on the dashboard. A page's refund rows name the
consumption row they give back (`refund_of`), and that row names its refund (`refunded`), linked
through the task row (its `billing.settlement_id` is the charge's request id).
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from tortoise.expressions import Q
from tortoise.functions import Count, Sum
from tortoise.queryset import QuerySet

from api.errors import ApiError
from api.services.columns import text_filter
from models import Log, Midjourney, QuotaData, Task
from models.enums import LogType

RATE_WINDOW = 60  # seconds of consume logs behind rpm and tpm
DELETE_BATCH = 5000
MAX_SELF_DATA_SPAN = 30 * 24 * 3600
DEFAULT_DATA_SPAN = 7 * 24 * 3600
# The dashboard's sums per row: requests, cost, tokens, and the prompt cache's part (input tokens, the
# cached ones among them, and what the cache saved against the full input price).
SUMMED_DATA = ("count", "quota", "token_used", "prompt_tokens", "cache_tokens", "saved_quota")
RETAINED_TYPES = (int(LogType.CONSUME), int(LogType.ERROR))  # the types LogRetentionDays deletes
REFUND_ID_PREFIX = "task-refund:"  # the request id of a task's refund row (api.relay.tasks.billing.refund_id)
MIDJOURNEY_PLATFORM = "mj"  # a refund id's platform for the midjourney table; any other: the task table
ADMIN_ONLY_OTHER = ("admin_info", "channel_id", "channel_name", "channel_type", "key_index")  # what a user never sees


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
        for name in ("username", "token_name", "model_name"):  # beyond its column a name matches no row
            value = getattr(self, name)
            if value:
                query = query.filter(text_filter(Log, name, value))
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


def is_refund(row: Log) -> bool:
    return row.type == LogType.SYSTEM and (row.request_id or "").startswith(REFUND_ID_PREFIX)


@dataclass(frozen=True, slots=True)
class RefundLinks:
    """A page's refunds and the charges they give back, by log id."""

    refunded: Mapping[int, int]  # consumption row → its refund row
    refund_of: Mapping[int, int]  # refund row → the consumption row it gives back


NO_LINKS = RefundLinks({}, {})


def log_dict(row: Log, *, admin: bool, links: RefundLinks = NO_LINKS) -> dict[str, Any]:
    """The wire shape; a plain user never sees the channel nor `other`'s administrator fields. A
    refund row's quota is negative (the charge given back) and says `refund_of`; a charge that was
    given back says `refunded` (the refund row's id)."""
    refund = is_refund(row)
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
        "quota": -row.quota if refund else row.quota,
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "use_time": row.use_time,
        "is_stream": row.is_stream,
        "group": row.group,
        "other": row.other if admin else _without_admin_info(row.other),
    }
    if admin:
        item["channel"] = row.channel_id
    if refund:
        item["refund_of"] = links.refund_of.get(row.id, 0)
    elif row.id in links.refunded:
        item["refunded"] = links.refunded[row.id]
    return item


def _without_admin_info(other: str) -> str:
    if not any(name in other for name in ADMIN_ONLY_OTHER):
        return other
    try:
        data = orjson.loads(other)
    except orjson.JSONDecodeError:
        return ""
    if isinstance(data, dict):
        for name in ADMIN_ONLY_OTHER:
            data.pop(name, None)
        return orjson.dumps(data).decode()
    return other


def _task_id(row: Log) -> str:
    """The upstream task id a consumption row charged for ("" for a plain request)."""
    if row.type != LogType.CONSUME or '"task_id"' not in row.other:
        return ""
    try:
        data = orjson.loads(row.other)
    except orjson.JSONDecodeError:
        return ""
    task_id = data.get("task_id") if isinstance(data, dict) else None
    return task_id if isinstance(task_id, str) else ""


def _refund_target(row: Log) -> tuple[str, int] | None:
    """(platform, task row id) of a refund row."""
    platform, _, row_id = (row.request_id or "").removeprefix(REFUND_ID_PREFIX).rpartition(":")
    return (platform, int(row_id)) if platform and row_id.isdigit() else None


def _settlement_id(billing: str) -> str:
    try:
        data = orjson.loads(billing) if billing else None
    except orjson.JSONDecodeError:
        return ""
    value = data.get("settlement_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


async def refund_links(rows: Sequence[Log]) -> RefundLinks:
    """Which of these rows are refunds of which charges (either side may be on another page):
    through the task rows, at most three indexed queries, none for a page without tasks."""
    charges = {(row.user_id, tid) for row in rows if (tid := _task_id(row))}
    refunds = {row.id: target for row in rows if is_refund(row) and (target := _refund_target(row))}
    if not charges and not refunds:
        return NO_LINKS
    users = sorted({user for user, _ in charges} | {row.user_id for row in rows if row.id in refunds})
    task_ids = sorted({tid for _, tid in charges})
    mj_ids = [row_id for platform, row_id in refunds.values() if platform == MIDJOURNEY_PLATFORM]
    other_ids = [row_id for platform, row_id in refunds.values() if platform != MIDJOURNEY_PLATFORM]
    # (platform, task row id) → the charge's request id
    tasks: dict[tuple[str, int], str] = {}
    for model, id_field, row_ids in ((Midjourney, "mj_id", mj_ids), (Task, "task_id", other_ids)):
        if not task_ids and not row_ids:
            continue
        by_task_id: dict[str, Any] = {f"{id_field}__in": task_ids}
        condition = Q(**by_task_id) if task_ids else Q(id__in=row_ids)
        if task_ids and row_ids:
            condition |= Q(id__in=row_ids)
        columns = ("id", "billing", "platform") if model is Task else ("id", "billing")
        for task in await model.filter(condition, user_id__in=users).values(*columns):
            tasks[(task.get("platform", MIDJOURNEY_PLATFORM), task["id"])] = _settlement_id(task["billing"])
    wanted = ([f"{REFUND_ID_PREFIX}{platform}:{row_id}" for platform, row_id in tasks] +
              [sid for sid in tasks.values() if sid])
    if not wanted:
        return NO_LINKS
    by_request = {r["request_id"]: r["id"] for r in await Log.filter(request_id__in=wanted).values("id", "request_id")}
    refunded: dict[int, int] = {}
    refund_of: dict[int, int] = {}
    for (platform, row_id), sid in tasks.items():
        refund_row, charge_row = by_request.get(f"{REFUND_ID_PREFIX}{platform}:{row_id}"), by_request.get(sid)
        if refund_row is not None and charge_row is not None:
            refunded[charge_row], refund_of[refund_row] = refund_row, charge_row
    return RefundLinks(refunded, refund_of)


async def page_logs(flt: LogFilter, offset: int, limit: int) -> tuple[list[Log], int]:
    query = flt.apply(Log.all())
    rows = await query.order_by("-created_at", "-id").offset(offset).limit(limit)
    return rows, await query.count()


async def stat(flt: LogFilter, now: int | None = None) -> dict[str, int]:
    """quota: what the logs matching the filter consumed, net of the task refunds among them (as the
    dashboard counts it); rpm/tpm: consume logs of the last 60 seconds; fallbacks: the consume logs
    of requests another model of their chain answered (their `other.fallback`, api/relay/fallbacks.py)."""
    now = int(time.time()) if now is None else now
    consume = flt.apply(Log.filter(type=int(LogType.CONSUME)), with_type=False)
    refunds = flt.apply(Log.filter(type=int(LogType.SYSTEM), request_id__startswith=REFUND_ID_PREFIX),
                        with_type=False)
    spent = await consume.annotate(total=Sum("quota")).values("total")
    returned = await refunds.annotate(total=Sum("quota")).values("total")
    recent = flt.apply(Log.filter(type=int(LogType.CONSUME), created_at__gte=now - RATE_WINDOW), with_type=False,
                       with_time=False)
    rates = await recent.annotate(requests=Count("id"), prompt=Sum("prompt_tokens"),
                                  completion=Sum("completion_tokens")).values("requests", "prompt", "completion")
    fallbacks = await consume.filter(other__contains='"fallback":').count()
    return {
        "quota": _first(spent, "total") - _first(returned, "total"),
        "rpm": _first(rates, "requests"),
        "tpm": _first(rates, "prompt") + _first(rates, "completion"),
        "fallbacks": fallbacks,
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
                     by_user: bool = False) -> list[dict[str, Any]]:
    """Per (model, hour) sums of SUMMED_DATA in [start, end]; `by_user`: per (user, model, hour),
    each row naming its `username` (the admin dashboard's per-user view)."""
    query = QuotaData.filter(created_at__gte=start, created_at__lte=end)
    if user_id is not None:
        query = query.filter(user_id=user_id)
    if username:
        query = query.filter(text_filter(QuotaData, "username", username))
    keys = ("username", "model_name", "created_at") if by_user else ("model_name", "created_at")
    aliases = {f"sum_{name}": Sum(name) for name in SUMMED_DATA}  # an alias may not shadow its column
    rows = await (query.annotate(**aliases)
                  .group_by(*keys)
                  .order_by("created_at", "model_name", *keys[:-2])
                  .values(*keys, *aliases))
    return [{**({"username": r["username"]} if by_user else {}), "model_name": r["model_name"],
             "created_at": r["created_at"], **{name: int(r[f"sum_{name}"] or 0) for name in SUMMED_DATA}}
            for r in rows]
