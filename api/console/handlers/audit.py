"""The audit log (admin and root): a page of entries and their exports, under the same filters and
the same visibility (api.services.audit_query). Read-only: no route edits or deletes an entry."""
from __future__ import annotations

import time

from aiohttp import web

from api.console.auth import admin_required, the_user
from api.errors import ApiError
from api.response import ok
from api.services import audit_query
from api.services.audit_query import CSV_COLUMNS, AuditFilter
from api.services.paging import read_page
from api.services.params import query_int

FORMATS = {"ndjson": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}


def read_filter(request: web.Request) -> AuditFilter:
    q = request.query
    return AuditFilter(
        actor_id=query_int(q, "actor_id", 0), actor=q.get("actor", "").strip(), action=q.get("action", "").strip(),
        target_type=q.get("target_type", "").strip(), target_id=q.get("target_id", "").strip(),
        start=query_int(q, "start_timestamp", 0), end=query_int(q, "end_timestamp", 0))


@admin_required
async def list_entries(request: web.Request) -> web.Response:
    """`p` from 1; filters actor_id, actor, action (its beginning), target_type, target_id,
    start_timestamp, end_timestamp."""
    page = read_page(request.query, first=1)
    items, total = await audit_query.page(the_user(request), read_filter(request), page.offset, page.size)
    return ok(page.envelope(items, total))


@admin_required
async def export_entries(request: web.Request) -> web.StreamResponse:
    """The filtered entries as a file: `format=ndjson` (one JSON object a line) or `csv`."""
    fmt = request.query.get("format", "ndjson").strip().lower()
    if fmt not in FORMATS:
        raise ApiError("invalid_param", name="format")
    where, viewer = read_filter(request), the_user(request)
    response = web.StreamResponse(headers={
        "Content-Type": FORMATS[fmt],
        "Content-Disposition": f'attachment; filename="audit-{int(time.time())}.{fmt}"',
        "Cache-Control": "no-store",
    })
    await response.prepare(request)
    if fmt == "csv":
        await response.write(audit_query.csv_line(CSV_COLUMNS))
    async for entry in audit_query.each_entry(viewer, where):
        await response.write(audit_query.csv_row(entry) if fmt == "csv" else audit_query.ndjson_line(entry))
    await response.write_eof()
    return response
