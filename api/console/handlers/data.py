"""Dashboard data: hourly usage aggregates per model (QuotaData): requests, cost, tokens, and the
prompt cache's share of the input and what it saved (services.logs.SUMMED_DATA)."""
from __future__ import annotations

from aiohttp import web

from api.console.auth import admin_required, the_user, user_required
from api.response import ok
from api.services import logs
from api.services.params import query_int


@admin_required
async def all_quota_data(request: web.Request) -> web.Response:
    q = request.query
    start, end = logs.data_range(query_int(q, "start_timestamp", 0), query_int(q, "end_timestamp", 0), max_span=None)
    username = request.query.get("username", "").strip()
    by_user = request.query.get("by_user", "") in ("1", "true")
    return ok(await logs.quota_data(start, end, username=username, by_user=by_user))


@user_required
async def own_quota_data(request: web.Request) -> web.Response:
    q = request.query
    start, end = logs.data_range(query_int(q, "start_timestamp", 0), query_int(q, "end_timestamp", 0),
                                 max_span=logs.MAX_SELF_DATA_SPAN)
    return ok(await logs.quota_data(start, end, user_id=the_user(request).id))
