"""Read-only lists of drawing (Midjourney) and async (Suno, ...) tasks for the console.

Rows are written by the relay and the task pollers; this module only reads them. Drawing tasks keep
`submit_time` in milliseconds, async tasks in seconds: each filter compares its bounds with the row's
own unit. Lists are newest first (by id, the insertion order), and a plain user's view never carries
the channel id.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from tortoise.queryset import QuerySet

from api.services.columns import text_filter
from api.services.task_callbacks import public_properties
from models import Midjourney, Task

# Internal bookkeeping of the pollers, never sent.
_HIDDEN = {"lease_until", "lease_owner", "billing"}


@dataclass(frozen=True, slots=True)
class MjFilter:
    user_id: int | None = None  # None: everyone's (admin)
    channel_id: int = 0
    mj_id: str = ""
    start: int = 0  # milliseconds, against submit_time
    end: int = 0

    def apply(self, query: QuerySet[Midjourney]) -> QuerySet[Midjourney]:
        if self.user_id is not None:
            query = query.filter(user_id=self.user_id)
        if self.channel_id:
            query = query.filter(channel_id=self.channel_id)
        if self.mj_id:
            query = query.filter(text_filter(Midjourney, "mj_id", self.mj_id))
        if self.start:
            query = query.filter(submit_time__gte=self.start)
        if self.end:
            query = query.filter(submit_time__lte=self.end)
        return query


@dataclass(frozen=True, slots=True)
class TaskFilter:
    user_id: int | None = None
    channel_id: int = 0
    task_id: str = ""
    platform: str = ""
    status: str = ""
    action: str = ""
    start: int = 0  # seconds, against submit_time
    end: int = 0

    def apply(self, query: QuerySet[Task]) -> QuerySet[Task]:
        if self.user_id is not None:
            query = query.filter(user_id=self.user_id)
        if self.channel_id:
            query = query.filter(channel_id=self.channel_id)
        for name in ("task_id", "platform", "status", "action"):
            value = getattr(self, name)
            if value:  # beyond its column a value matches no row
                query = query.filter(text_filter(Task, name, value))
        if self.start:
            query = query.filter(submit_time__gte=self.start)
        if self.end:
            query = query.filter(submit_time__lte=self.end)
        return query


def _wire(row: Midjourney | Task, *, admin: bool) -> dict[str, Any]:
    item = {name: getattr(row, name) for name in row._meta.fields_db_projection if name not in _HIDDEN}
    if not admin:
        item.pop("channel_id", None)
    return item


def mj_dict(row: Midjourney, *, admin: bool, forward: bool = False) -> dict[str, Any]:
    """`forward` (option MjForwardUrlEnabled): the image through the gateway's /mj/image, a path on
    the console's own origin, so the browser never needs to reach the upstream's image host."""
    item = _wire(row, admin=admin)
    if "properties" in item:  # a row stored before callbacks were stripped on the way in
        item["properties"] = public_properties(row.properties or "")
    if forward and row.image_url and row.mj_id:
        item["image_url"] = f"/mj/image/{row.mj_id}"
    return item


def task_dict(row: Task, *, admin: bool) -> dict[str, Any]:
    item = _wire(row, admin=admin)
    if row.platform == "video" and not admin:  # a user knows a video by the gateway's id only
        item.pop("data", None)
        try:
            props = orjson.loads(row.properties) if row.properties else {}
        except orjson.JSONDecodeError:
            props = {}
        if isinstance(props, dict):
            props.pop("upstream_id", None)
            item["properties"] = orjson.dumps(props).decode()
    return item


async def page_mj(flt: MjFilter, offset: int, limit: int) -> tuple[list[Midjourney], int]:
    query = flt.apply(Midjourney.all())
    rows = await query.order_by("-id").offset(offset).limit(limit)
    return rows, await query.count()


async def page_tasks(flt: TaskFilter, offset: int, limit: int) -> tuple[list[Task], int]:
    query = flt.apply(Task.all())
    rows = await query.order_by("-id").offset(offset).limit(limit)
    return rows, await query.count()
