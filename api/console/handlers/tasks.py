"""Drawing (Midjourney) and async task lists: everyone's (admin) or one's own, read-only.

`p` is 0-based, as the console's drawing and task screens send it. Drawing timestamps are in
milliseconds, async task timestamps in seconds (both against submit_time).
"""
from __future__ import annotations

from aiohttp import web

from api import keys
from api.console.auth import admin_required, the_user, user_required
from api.response import ok
from api.services import tasks
from api.services.paging import read_page
from api.services.params import query_int
from api.services.tasks import MjFilter, TaskFilter


def _text(request: web.Request, name: str) -> str:
    return request.query.get(name, "").strip()


def mj_filter(request: web.Request, *, admin: bool) -> MjFilter:
    """The query's filters; the channel only for admins, the caller's own id otherwise."""
    return MjFilter(
        user_id=None if admin else the_user(request).id,
        channel_id=query_int(request.query, "channel_id", 0) if admin else 0,
        mj_id=_text(request, "mj_id"),
        start=query_int(request.query, "start_timestamp", 0),
        end=query_int(request.query, "end_timestamp", 0),
    )


def task_filter(request: web.Request, *, admin: bool) -> TaskFilter:
    return TaskFilter(
        user_id=None if admin else the_user(request).id,
        channel_id=query_int(request.query, "channel_id", 0) if admin else 0,
        task_id=_text(request, "task_id"),
        platform=_text(request, "platform"),
        status=_text(request, "status"),
        action=_text(request, "action"),
        start=query_int(request.query, "start_timestamp", 0),
        end=query_int(request.query, "end_timestamp", 0),
    )


async def _mj_page(request: web.Request, *, admin: bool) -> web.Response:
    page = read_page(request.query, first=0)
    rows, total = await tasks.page_mj(mj_filter(request, admin=admin), page.offset, page.size)
    forward = request.config_dict[keys.OPTIONS].get_bool("MjForwardUrlEnabled")
    return ok(page.envelope([tasks.mj_dict(r, admin=admin, forward=forward) for r in rows], total))


async def _task_page(request: web.Request, *, admin: bool) -> web.Response:
    page = read_page(request.query, first=0)
    rows, total = await tasks.page_tasks(task_filter(request, admin=admin), page.offset, page.size)
    return ok(page.envelope([tasks.task_dict(r, admin=admin) for r in rows], total))


@admin_required
async def list_all_mj(request: web.Request) -> web.Response:
    return await _mj_page(request, admin=True)


@user_required
async def list_own_mj(request: web.Request) -> web.Response:
    return await _mj_page(request, admin=False)


@admin_required
async def list_all_tasks(request: web.Request) -> web.Response:
    return await _task_page(request, admin=True)


@user_required
async def list_own_tasks(request: web.Request) -> web.Response:
    return await _task_page(request, admin=False)
