"""Reading the audit log: who may see which entries, the list's filters, its pages and its exports.

Visibility: root sees every entry. An admin sees the entries whose target is a user whose role was
below theirs when the entry was made (users they may manage), and the entries on anything else
(channels, options, codes …) made by someone of a lower role than theirs (a user's own 2FA
change, a burst of failed logins on an account that names nobody). Another admin's or root's
changes to channels and options are root's to read, as is everything about admins and root.

Exports (NDJSON, CSV) are the list's entries under the same filters and the same visibility,
newest first, at most MAX_EXPORT rows, read in id-keyed batches (no OFFSET scan) so that a large
export streams. A CSV cell that a spreadsheet would read as a formula (starting with = + - @, a
tab or a carriage return) is prefixed with a single quote.
"""
from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from tortoise.expressions import Q
from tortoise.queryset import QuerySet

from api.services.columns import text_filter
from models import AuditEntry, User
from models.enums import Role

EXPORT_BATCH = 500
MAX_EXPORT = 100_000  # entries in one export at most
CSV_COLUMNS = ("id", "created_at", "actor_id", "actor_name", "actor_role", "actor_ip", "action", "target_type",
               "target_id", "target_role", "before", "after")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class AuditFilter:
    actor_id: int = 0
    actor: str = ""  # the actor's username at the time (exact)
    action: str = ""  # the action, or its beginning ("channel." every channel action)
    target_type: str = ""
    target_id: str = ""
    start: int = 0  # unix seconds, inclusive
    end: int = 0

    def apply(self, query: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
        if self.actor_id:
            query = query.filter(actor_id=self.actor_id)
        if self.actor:
            query = query.filter(text_filter(AuditEntry, "actor_name", self.actor))
        if self.action:
            query = query.filter(text_filter(AuditEntry, "action", self.action, "startswith"))
        if self.target_type:
            query = query.filter(text_filter(AuditEntry, "target_type", self.target_type))
        if self.target_id:
            query = query.filter(text_filter(AuditEntry, "target_id", self.target_id))
        if self.start:
            query = query.filter(created_at__gte=self.start)
        if self.end:
            query = query.filter(created_at__lte=self.end)
        return query


def visible_to(viewer: User) -> Q:
    """The entries `viewer` may read (see the module)."""
    if viewer.role >= Role.ROOT:
        return Q()
    return Q(target_role__lt=viewer.role) | (Q(target_role__isnull=True) & Q(actor_role__lt=viewer.role))


def entry_dict(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id, "entry_id": entry.entry_id, "created_at": entry.created_at,
        "actor_id": entry.actor_id, "actor_name": entry.actor_name, "actor_role": entry.actor_role,
        "actor_ip": entry.actor_ip, "action": entry.action, "target_type": entry.target_type,
        "target_id": entry.target_id, "target_role": entry.target_role,
        "before": orjson.loads(entry.before) if entry.before else None,
        "after": orjson.loads(entry.after) if entry.after else None,
    }


def _query(viewer: User, where: AuditFilter) -> QuerySet[AuditEntry]:
    return where.apply(AuditEntry.filter(visible_to(viewer)))


async def page(viewer: User, where: AuditFilter, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    query = _query(viewer, where)
    total = await query.count()
    rows = await query.order_by("-id").offset(offset).limit(limit)
    return [entry_dict(r) for r in rows], total


async def each_entry(viewer: User, where: AuditFilter, limit: int = MAX_EXPORT) -> AsyncIterator[dict[str, Any]]:
    """The export's entries, newest first, in id-keyed batches."""
    below: int | None = None
    sent = 0
    while sent < limit:
        query = _query(viewer, where)
        if below is not None:
            query = query.filter(id__lt=below)
        rows = await query.order_by("-id").limit(min(EXPORT_BATCH, limit - sent))
        for row in rows:
            yield entry_dict(row)
        sent += len(rows)
        if len(rows) < EXPORT_BATCH:
            return
        below = rows[-1].id


def ndjson_line(entry: dict[str, Any]) -> bytes:
    return orjson.dumps(entry) + b"\n"


def safe_cell(value: Any) -> str:
    """A CSV cell no spreadsheet runs as a formula."""
    if value is None:
        text = ""
    elif isinstance(value, dict | list):
        text = orjson.dumps(value).decode()
    else:
        text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_line(cells: list[Any] | tuple[Any, ...]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([safe_cell(c) for c in cells])
    return out.getvalue().encode()


def csv_row(entry: dict[str, Any]) -> bytes:
    return csv_line([entry[c] for c in CSV_COLUMNS])
