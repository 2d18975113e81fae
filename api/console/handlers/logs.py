"""Usage logs: everyone's (admin), one's own, their statistics, and clearing old ones (root)."""
from __future__ import annotations

from aiohttp import web

from api.console.auth import admin_required, root_required, the_user, user_required
from api.errors import ApiError
from api.response import ok
from api.services import logs
from api.services.logs import LogFilter
from api.services.paging import read_page
from api.services.params import query_int
from api.web import audit


def read_filter(request: web.Request, *, admin: bool) -> LogFilter:
    """The query's filters; username and channel only for the admin routes, the own id otherwise."""
    q = request.query
    return LogFilter(
        log_type=query_int(request.query, "type", 0),
        user_id=None if admin else the_user(request).id,
        username=q.get("username", "").strip() if admin else "",
        token_name=q.get("token_name", "").strip(),
        model_name=q.get("model_name", "").strip(),
        start=query_int(request.query, "start_timestamp", 0),
        end=query_int(request.query, "end_timestamp", 0),
        channel=query_int(request.query, "channel", 0) if admin else 0,
    )


async def _page(request: web.Request, *, admin: bool) -> web.Response:
    page = read_page(request.query, first=1)
    rows, total = await logs.page_logs(read_filter(request, admin=admin), page.offset, page.size)
    links = await logs.refund_links(rows)
    return ok(page.envelope([logs.log_dict(r, admin=admin, links=links) for r in rows], total))


@admin_required
async def list_all_logs(request: web.Request) -> web.Response:
    return await _page(request, admin=True)


@user_required
async def list_own_logs(request: web.Request) -> web.Response:
    return await _page(request, admin=False)


@admin_required
async def all_logs_stat(request: web.Request) -> web.Response:
    return ok(await logs.stat(read_filter(request, admin=True)))


@user_required
async def own_logs_stat(request: web.Request) -> web.Response:
    return ok(await logs.stat(read_filter(request, admin=False)))


@root_required
async def delete_old_logs(request: web.Request) -> web.Response:
    target = query_int(request.query, "target_timestamp", 0)
    if target <= 0:
        raise ApiError("log_target_time_required")
    deleted = await logs.delete_before(target)
    await audit.record(request, "log.delete", "log", "", None, {"before_timestamp": target, "deleted": deleted})
    return ok(deleted)
