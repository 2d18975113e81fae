"""The audit log: queued entries into the database (api.services.audit_queue), and its retention."""
from __future__ import annotations

import asyncio
import logging
import time

import dramatiq

from api.services import redis_keys
from api.services.audit import SEND_DELAY_MS
from api.services.audit_queue import purge_before, write_pending
from api.services.queues import Queue
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)
PURGE_EVERY = 3600  # seconds between two retention runs, whatever the scheduler's tick


@dramatiq.actor(actor_name="audit.write", queue_name=Queue.AUDIT, max_retries=20, min_backoff=1_000,
                max_backoff=60_000)
async def write(sent_at: float = 0.0, sender: str = "") -> None:
    """Write the waiting entries (idempotent; sent by the first entry after a drain and by the
    scheduler's sweep, whose arguments it ignores)."""
    written, more = await write_pending(ctx().store)
    if more:
        await asyncio.to_thread(send, "audit.write", delay_ms=SEND_DELAY_MS)
    if written:
        log.debug("wrote %d audit entries", written)


@dramatiq.actor(actor_name="audit.purge", queue_name=Queue.AUDIT, max_retries=0, time_limit=1_800_000)
async def purge(sent_at: float = 0.0, sender: str = "") -> None:
    """Entries older than AuditRetentionDays deleted (0: kept for ever), at most once per PURGE_EVERY."""
    c = ctx()
    days = c.options.get_int("AuditRetentionDays")
    if days <= 0:
        return
    if not await c.store.redis.set(redis_keys.run_claim(c.store, "audit.purge"), str(int(time.time())), nx=True,
                                   ex=PURGE_EVERY):
        return
    deleted = await purge_before(int(time.time()) - days * 86400)
    if deleted:
        log.info("deleted %d audit entries older than %d days", deleted, days)
