"""Error log rows of failed relay calls: from Redis into the database (api.services.error_logs)."""
from __future__ import annotations

import asyncio
import logging

import dramatiq

from api.services.error_logs import SEND_DELAY_MS, write_pending
from api.services.queues import Queue
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)


@dramatiq.actor(actor_name="logs.write_errors", queue_name=Queue.LOGS, max_retries=10, min_backoff=1_000,
                max_backoff=60_000)
async def write_errors() -> None:
    """Write the waiting rows (idempotent: a row already in the table is skipped)."""
    written, more = await write_pending(ctx().store)
    if more:  # a flood: the rest in the next message, after the other queues' messages of the moment
        await asyncio.to_thread(send, "logs.write_errors", delay_ms=SEND_DELAY_MS)
    if written:
        log.debug("wrote %d error log rows", written)
