"""Task polling (Midjourney, Suno, videos): the scheduler sends one poll per platform; whichever worker takes
it claims a leased batch (api.relay.tasks.poll), so several workers poll side by side."""
from __future__ import annotations

import logging

import dramatiq

from api.relay.tasks.poll import TABLES, poll
from api.services.billing.settlement import apply_pending
from api.services.queues import Queue
from workers.context import ctx

log = logging.getLogger(__name__)


async def _poll(platform: str) -> None:
    context = ctx()
    result = await poll(TABLES[platform], context.store, context.http)
    if result.claimed:
        log.info("%s poll: %d tasks, %d finished, %d failed, %d refunded", platform, result.claimed, result.updated,
                 result.failed, len(result.refunded))
    for user_id in sorted(result.users):  # the refunds into the database now (the sweep would, later)
        await apply_pending(context.store, context.options, user_id)


@dramatiq.actor(actor_name="tasks.poll_midjourney", queue_name=Queue.TASKS, max_retries=0)
async def poll_midjourney(sent_at: float = 0, sender: str = "") -> None:
    await _poll("mj")


@dramatiq.actor(actor_name="tasks.poll_suno", queue_name=Queue.TASKS, max_retries=0)
async def poll_suno(sent_at: float = 0, sender: str = "") -> None:
    await _poll("suno")


@dramatiq.actor(actor_name="tasks.poll_video", queue_name=Queue.TASKS, max_retries=0)
async def poll_video(sent_at: float = 0, sender: str = "") -> None:
    await _poll("video")
