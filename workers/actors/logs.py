"""Log retention: consume and error logs older than LogRetentionDays are deleted in small id-range batches.

Each batch is one short DELETE bounded by an id range (found through the (type, created_at) index),
so the table is never locked for long and the relay's log writes interleave between batches.
"""
from __future__ import annotations

import asyncio
import logging
import time

import dramatiq

from api.services import redis_keys
from api.services.logs import RETAINED_TYPES
from api.services.queues import Queue
from models import Log
from workers.context import ctx

log = logging.getLogger(__name__)
BATCH = 2000  # rows per DELETE
MAX_BATCHES = 500  # per run; the next run continues
PURGE_EVERY = 3600  # seconds between two runs, whatever the scheduler's tick


async def purge_consume_logs(cutoff: int, batch: int = BATCH, max_batches: int = MAX_BATCHES) -> int:
    """Delete consume and error logs created before `cutoff` (unix seconds); returns how many were deleted."""
    deleted = 0
    for _ in range(max_batches):
        ids = (await Log.filter(type__in=RETAINED_TYPES, created_at__lt=cutoff).order_by("id").limit(batch)
               .values_list("id", flat=True))
        if not ids:
            break
        deleted += await Log.filter(id__gte=ids[0], id__lte=ids[-1], type__in=RETAINED_TYPES,
                                    created_at__lt=cutoff).delete()
        if len(ids) < batch:
            break
        await asyncio.sleep(0)  # let other coroutines of this worker (and their queries) in between
    return deleted


@dramatiq.actor(actor_name="logs.purge", queue_name=Queue.LOGS, max_retries=0, time_limit=1_800_000)
async def purge(sent_at: float = 0.0, sender: str = "") -> None:
    c = ctx()
    days = c.options.get_int("LogRetentionDays")
    if days <= 0:
        return
    # At most one run per PURGE_EVERY across all workers.
    if not await c.store.redis.set(redis_keys.run_claim(c.store, "logs.purge"), str(int(time.time())), nx=True,
                                   ex=PURGE_EVERY):
        return
    deleted = await purge_consume_logs(int(time.time()) - days * 86400)
    if deleted:
        log.info("deleted %d consume and error logs older than %d days", deleted, days)
