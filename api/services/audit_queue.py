"""The worker side of the audit log: queued entries (api.services.audit.push) into the table, none
lost and none written twice whatever dies when, and the retention of old entries.

An entry leaves the Redis list only once its row is committed. The writer holds the queue's lease
(`{audit}:lock`, renewed while it works, lapsing within LEASE of a writer's death) and, batch
after batch, reads the head of the list (LRANGE, nothing removed), writes the rows whose
`entry_id` is not in the table yet (one transaction; the unique index makes sure), then removes
exactly the entries it read (LTRIM, by a script that does it only while this writer still holds
the lease). So:
- killed before the commit: nothing was written, the entries are still at the head of the list;
- killed between the commit and the trim: the next writer reads them again and skips them (their
  ids are in the table);
- a writer whose lease lapsed under a stall trims nothing: whoever holds the lease now does.
An entry that cannot be read, or that the database refuses on its own, is set aside (writer
"audit", api.services.set_aside) and trimmed with the others: one entry never holds up the queue.
A database that is away fails the batch, which stays where it is for the message's retry.

Messages: the first entry after a drain asks for one (`{audit}:due`, as the error log does); the
scheduler also sends `audit.write` every SWEEP seconds, which writes what a lost message or a
killed worker left behind.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import cast

from tortoise.transactions import in_transaction

from api.services import locks, redis_keys
from api.services.audit import Entry
from api.services.row_insert import insert_each, insert_rows
from api.services.set_aside import set_aside
from api.services.store import Script, Store
from models import AuditEntry

log = logging.getLogger(__name__)
WRITER = "audit"
BATCH = 500  # entries per transaction
MAX_BATCHES = 40  # per message; the rest asks for another message
LEASE = 10.0  # seconds: how long a dead writer holds up the queue at most
WAIT = 30.0  # seconds a message waits for another writer's lease before it is retried
SWEEP = 30  # seconds between the scheduler's audit.write messages
PURGE_BATCH = 2000  # rows per DELETE of the retention job

# KEYS: the lease, the list. ARGV: the writer's token, how many entries it wrote from the head.
_TRIM = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
return 1
"""


class LeaseLost(Exception):
    """The writer's lease lapsed (a stall longer than LEASE): another writer goes on."""


@contextlib.asynccontextmanager
async def _lease(store: Store, wait: float) -> AsyncIterator[str]:
    """Hold the queue's lease while the block runs (renewed every LEASE/3); its token."""
    key = redis_keys.audit_lock(store)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while (token := await locks.acquire(store, key, LEASE)) is None:
        if loop.time() >= deadline:
            raise locks.LockBusy(f"{key} held by another writer for {wait:g} s")
        await asyncio.sleep(0.1)

    async def renew() -> None:
        while True:
            await asyncio.sleep(LEASE / 3)
            if not await locks.refresh(store, key, token, LEASE):
                return

    renewal = loop.create_task(renew())
    try:
        yield token
    finally:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await renewal
        with contextlib.suppress(Exception):
            await locks.release(store, key, token)


async def write_pending(store: Store, batch: int = BATCH, max_batches: int = MAX_BATCHES,
                        wait: float = WAIT) -> tuple[int, bool]:
    """Queued entries into the table → (rows written, whether entries are left for another message)."""
    rows_key = redis_keys.audit_rows(store)
    trim = Script(store.redis, _TRIM)
    written = 0
    async with _lease(store, wait) as token:
        await store.redis.delete(redis_keys.audit_due(store))  # from now on a new entry asks for a message
        for _ in range(max_batches):
            raw = await store.redis.lrange(rows_key, 0, batch - 1)
            if not raw:
                return written, False
            written += await _write_batch(store, raw)
            if not await trim(keys=[redis_keys.audit_lock(store), rows_key], args=[token, len(raw)]):
                raise LeaseLost("the audit queue's lease lapsed while writing; another writer goes on")
            if len(raw) < batch:
                return written, False
        return written, bool(await store.redis.llen(rows_key))


async def _write_batch(store: Store, raw: list[bytes]) -> int:
    """These queued entries into the table; those that cannot be read or written set aside."""
    pairs: list[tuple[bytes | str, Entry]] = []
    refused: list[tuple[str, bytes | str, BaseException]] = []
    for item in raw:
        try:
            entry = Entry.decode(item)
            entry.row()  # every column convertible
        except (ValueError, TypeError) as exc:  # not JSON, a field missing or of another type
            refused.append(("", item, exc))
            continue
        pairs.append((item, entry))
    written, failed = await insert_each(lambda some: _insert([entry for _, entry in some]), pairs)
    refused += [(entry.entry_id, item, exc) for (item, entry), exc in failed]
    await set_aside(store, WRITER, refused)
    return written


async def _insert(entries: list[Entry]) -> int:
    """New rows only: an entry whose id is in the table was written by a writer that died before it
    could trim it."""
    rows = {e.entry_id: e.row() for e in entries}
    async with in_transaction() as conn:
        done = set(cast(list[str], await AuditEntry.filter(entry_id__in=list(rows)).using_db(conn)
                        .values_list("entry_id", flat=True)))
        new = [row for entry_id, row in rows.items() if entry_id not in done]
        await insert_rows(conn, AuditEntry, new)
    return len(new)


async def purge_before(cutoff: int, batch: int = PURGE_BATCH, max_batches: int = 500) -> int:
    """Delete entries made before `cutoff` (unix seconds), in short id-range batches → how many."""
    deleted = 0
    for _ in range(max_batches):
        ids = await AuditEntry.filter(created_at__lt=cutoff).order_by("id").limit(batch).values_list("id", flat=True)
        if not ids:
            break
        deleted += await AuditEntry.filter(id__gte=ids[0], id__lte=ids[-1], created_at__lt=cutoff).delete()
        if len(ids) < batch:
            break
        await asyncio.sleep(0)
    return deleted
