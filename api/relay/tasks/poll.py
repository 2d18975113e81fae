"""Polling unfinished tasks, as worker jobs: no master node, any number of workers.

A poll claims a batch of unfinished rows by lease (`lease_until`, `lease_owner`): PostgreSQL and
MySQL with `FOR UPDATE SKIP LOCKED`, SQLite with one conditional UPDATE (SQLite runs one writer at a
time), so two workers never hold the same task; a worker that dies leaves leases that expire after
LEASE_SECONDS. The batch is grouped by channel, each channel fetched in one call, and each row
updated only while its lease is still held. A task that fails upstream, times out (TASK_TIMEOUT
after its submission) or whose channel is gone is refunded (api.relay.tasks.billing: once per task,
whatever happens to the worker); the lease is renewed just before, so no other worker acts on the
task meanwhile. Leases of rows still unfinished are released at the end of the batch.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from tortoise import connections
from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.models import Model
from tortoise.transactions import in_transaction

from api.relay.tasks.billing import Refund, TaskCharge, refund
from api.relay.tasks.relay import call
from api.relay.tasks.video_shape import properties
from api.services.store import Store
from api.upstream.errors import mask_secrets
from api.upstream.registry import TASK_ADAPTORS, VIDEO_ADAPTORS
from api.upstream.task_base import FAILURE, FINAL, SUCCESS, VIDEO_PLATFORM, TaskAdaptor, TaskUpdate
from models import Channel, Midjourney, Task, keyring

log = logging.getLogger(__name__)
LEASE_SECONDS = 120
BATCH = 500
FETCH_TIMEOUT = 15.0
FETCH_CONCURRENCY = 8  # one-task fetches of one channel at a time
DONE = "100%"
TASK_TIMEOUT = 3600  # seconds: a task not finished an hour after its submission fails (and is refunded)


@dataclass(frozen=True, slots=True)
class Table:
    model: type[Model]
    platform: str  # "mj": the midjourney table; else the task table's platform
    id_field: str  # the upstream's task id column
    time_unit: int  # submit_time units per second (milliseconds for drawings)
    adaptors: Mapping[int, type[TaskAdaptor]] = field(default_factory=lambda: TASK_ADAPTORS)  # by channel type
    own_ids: bool = False  # the id column holds the gateway's id; the upstream's is properties' `upstream_id`

    @property
    def name(self) -> str:
        return self.model._meta.db_table

    def upstream_id(self, row: Any) -> str:
        if self.own_ids:
            value = properties(row).get("upstream_id")
            return value if isinstance(value, str) else ""
        return str(getattr(row, self.id_field) or "")


MIDJOURNEY = Table(Midjourney, "mj", "mj_id", 1000)
SUNO = Table(Task, "suno", "task_id", 1)
VIDEO = Table(Task, VIDEO_PLATFORM, "task_id", 1, VIDEO_ADAPTORS, own_ids=True)
TABLES = {"mj": MIDJOURNEY, "suno": SUNO, VIDEO_PLATFORM: VIDEO}


@dataclass(slots=True)
class PollResult:
    claimed: int = 0
    updated: int = 0
    failed: int = 0
    refunded: list[int] = field(default_factory=list)  # row ids refunded by this poll
    users: set[int] = field(default_factory=set)  # whose refund records wait for the workers


def new_owner() -> str:
    return f"{os.getpid()}-{os.urandom(6).hex()}"


# -- leases ---------------------------------------------------------------------------------------


def _where(table: Table) -> tuple[str, list[Any]]:
    """Unfinished rows of the table's platform: the condition and its parameters (after `now`)."""
    if table.model is Task:
        return "progress <> {} AND lease_until < {} AND platform = {}", [DONE, None, table.platform]
    return "progress <> {} AND lease_until < {}", [DONE, None]


async def claim(table: Table, owner: str, now: int, limit: int = BATCH) -> list[Any]:
    """Lease up to `limit` unfinished rows (oldest first) that nobody holds; returns them."""
    conn = connections.get("default")
    dialect = conn.capabilities.dialect
    until = now + LEASE_SECONDS
    condition, params = _where(table)
    params = [now if p is None else p for p in params]
    if dialect == "postgres":
        marks = [f"${i}" for i in range(3, 3 + len(params))]
        sql = (f'UPDATE "{table.name}" SET lease_until = $1, lease_owner = $2 WHERE id IN (SELECT id FROM '
               f'"{table.name}" WHERE {condition.format(*marks)} ORDER BY id LIMIT {int(limit)} '
               f"FOR UPDATE SKIP LOCKED)")
        await conn.execute_query(sql, [until, owner, *params])
    elif dialect == "mysql":
        async with in_transaction() as tx:
            select = (f"SELECT id FROM `{table.name}` WHERE {condition.format(*['%s'] * len(params))} "
                      f"ORDER BY id LIMIT {int(limit)} FOR UPDATE SKIP LOCKED")
            _, rows = await tx.execute_query(select, params)
            ids = [int(r["id"]) for r in rows]
            if ids:
                await tx.execute_query(f"UPDATE `{table.name}` SET lease_until = %s, lease_owner = %s WHERE id IN "
                                       f"({', '.join(['%s'] * len(ids))})", [until, owner, *ids])
    else:  # SQLite: one statement, and one writer at a time
        marks = ["?"] * len(params)
        sql = (f'UPDATE "{table.name}" SET lease_until = ?, lease_owner = ? WHERE id IN (SELECT id FROM '
               f'"{table.name}" WHERE {condition.format(*marks)} ORDER BY id LIMIT {int(limit)}) '
               f"AND lease_until < ?")
        await conn.execute_query(sql, [until, owner, *params, now])
    return await table.model.filter(lease_owner=owner, lease_until=until).order_by("id")


async def release(table: Table, owner: str) -> None:
    await table.model.filter(lease_owner=owner).update(lease_until=0, lease_owner="")


async def _renew(table: Table, row: Any, owner: str, now: int) -> bool:
    """Hold the row for a full lease before acting on it for good; False when it is not ours."""
    return bool(await table.model.filter(id=row.id, lease_owner=owner).exclude(progress=DONE)
                .update(lease_until=now + LEASE_SECONDS))


# -- one task -------------------------------------------------------------------------------------


async def finish_failed(table: Table, store: Store, row: Any, owner: str, reason: str, now: int,
                        fields: dict[str, Any] | None = None) -> bool:
    """FAILURE, 100 %, and the charge back to user and key (once). True when this call refunded."""
    if not await _renew(table, row, owner, now):
        return False
    done = False
    if row.quota > 0:
        item = Refund(table.platform, row.id, getattr(row, table.id_field), row.action, row.user_id, row.token_id,
                      row.channel_id, row.quota, row.submit_time // table.time_unit, reason)
        done = await refund(store, item, TaskCharge.loads(row.billing))
    values = {**(fields or {}), "status": FAILURE, "progress": DONE, "fail_reason": reason[:1000],
              "finish_time": (fields or {}).get("finish_time") or now * table.time_unit}
    values = {k: v for k, v in values.items() if k in table.model._meta.fields_map}
    await table.model.filter(id=row.id, lease_owner=owner).update(**values)
    return done


async def apply_update(table: Table, store: Store, row: Any, update: TaskUpdate, owner: str, now: int) -> bool:
    """The upstream's view of a task onto its row (only what changed); True when it was refunded."""
    fields = {k: v for k, v in update.fields.items() if k in table.model._meta.fields_map}
    if update.status == FAILURE:
        reason = fields.get("fail_reason") or "the task failed upstream"
        return await finish_failed(table, store, row, owner, reason, now, fields)
    if update.status == SUCCESS:
        fields["progress"] = DONE
        fields["finish_time"] = fields.get("finish_time") or now * table.time_unit
    elif fields.get("progress") == DONE:
        fields.pop("progress")  # 100 % is for finished tasks: an unfinished one stays in the poll
    changed = {k: v for k, v in fields.items() if v != getattr(row, k) and not (v in ("", 0) and k != "status")}
    if changed:
        await table.model.filter(id=row.id, lease_owner=owner).exclude(progress=DONE).update(**changed)
    return False


# -- a batch ----------------------------------------------------------------------------------------


async def poll(table: Table, store: Store, http: aiohttp.ClientSession, *, owner: str | None = None,
               now: int | None = None, limit: int = BATCH) -> PollResult:
    """Claim a batch, fetch it channel by channel (concurrently), apply, release."""
    owner = owner or new_owner()
    now = int(time.time()) if now is None else now
    rows = await claim(table, owner, now, limit)
    result = PollResult(claimed=len(rows))
    if not rows:
        return result
    try:
        by_channel: dict[int, list[Any]] = defaultdict(list)
        for row in rows:
            by_channel[row.channel_id].append(row)
        channels = {c.id: c for c in await Channel.filter(id__in=list(by_channel))}
        await asyncio.gather(*(_poll_channel(table, store, http, channels.get(cid), batch, owner, now, result)
                               for cid, batch in by_channel.items()))
    finally:
        await release(table, owner)
    return result


async def _poll_channel(table: Table, store: Store, http: aiohttp.ClientSession, channel: Channel | None,
                        rows: list[Any], owner: str, now: int, result: PollResult) -> None:
    waiting: dict[str, Any] = {}
    for row in rows:
        task_id = table.upstream_id(row)
        if channel is None or channel.type not in table.adaptors or not task_id:
            why = ("the task's channel no longer exists" if channel is None or channel.type not in table.adaptors
                   else "the task has no upstream id")
            await _fail(table, store, row, owner, why, now, result)
        elif now - row.submit_time // table.time_unit > TASK_TIMEOUT:
            await _fail(table, store, row, owner, "the upstream task timed out (over 1 hour)", now, result)
        else:
            waiting[task_id] = row
    if not waiting or channel is None:
        return
    key = keyring.primary(channel.key, channel.channel_info)
    adaptor = table.adaptors[channel.type](channel.base_url or "", key, channel.other or "")
    batches = [list(waiting)] if adaptor.batched else [[task_id] for task_id in waiting]
    gate = asyncio.Semaphore(FETCH_CONCURRENCY)
    fetched = await asyncio.gather(*(_fetch(http, adaptor, ids, channel.type, gate) for ids in batches),
                                   return_exceptions=True)
    updates: list[TaskUpdate] = []
    for ids, got in zip(batches, fetched, strict=True):
        if isinstance(got, BaseException):  # the upstream is down or answers nonsense: try again at the next poll
            log.warning("fetching %d %s tasks from channel %s failed: %s", len(ids), table.platform, channel.id,
                        mask_secrets(str(got), key, channel.base_url or ""))
        else:
            updates.extend(got)
    for update in updates:
        row = waiting.get(update.task_id)
        if row is None:
            continue
        if update.status in FINAL:
            result.updated += 1
            if update.status == FAILURE:
                result.failed += 1
        try:
            refunded = await apply_update(table, store, row, update, owner, now)
        except (OperationalError, IntegrityError, ValueError, OverflowError) as exc:  # this row only: the batch goes on
            log.warning("updating %s task %s (row %s) failed: %r", table.platform, update.task_id, row.id, exc)
            continue
        if refunded:
            result.refunded.append(row.id)
            result.users.add(row.user_id)


async def _fetch(http: aiohttp.ClientSession, adaptor: TaskAdaptor, ids: list[str], channel_type: int,
                 gate: asyncio.Semaphore) -> list[TaskUpdate]:
    async with gate:
        status, raw = await call(http, adaptor.fetch(ids), adaptor.fetch_timeout or FETCH_TIMEOUT, channel_type,
                                 adaptor.answer_limit, adaptor)
    return adaptor.read_fetched(ids, status, raw)


async def _fail(table: Table, store: Store, row: Any, owner: str, reason: str, now: int,
                result: PollResult) -> None:
    result.failed += 1
    if await finish_failed(table, store, row, owner, reason, now):
        result.refunded.append(row.id)
        result.users.add(row.user_id)
