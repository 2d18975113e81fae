"""Billing: settlement records from Redis into the database (see api.services.settlement)."""
from __future__ import annotations

import asyncio
import logging

import dramatiq

from api.services.reservations import close_orphans
from api.services.settlement import apply_pending, users_with_pending
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)


async def _send_mail(to: str, subject: str, html: str) -> None:
    await asyncio.to_thread(send, "mail.send", to, subject, html)


@dramatiq.actor(actor_name="billing.apply", queue_name="billing", max_retries=20, min_backoff=200,
                max_backoff=30_000)
async def apply(user_ids: list[int]) -> None:
    """Apply the pending settlements of these users; idempotent (a record applies once)."""
    context = ctx()
    for user_id in user_ids:
        await apply_pending(context.store, context.options, int(user_id), _send_mail)


@dramatiq.actor(actor_name="billing.sweep", queue_name="billing", max_retries=3)
async def sweep(sent_at: float = 0, sender: str = "") -> None:
    """Reservations whose process died (closed: checkpointed output charged, the rest returned),
    then every user with records still waiting (a lost billing.apply, a process that died)."""
    context = ctx()
    await close_orphans(context.store, context.options.get_int("QuotaPerUnit"))
    for user_id in await users_with_pending(context.store):
        await apply_pending(context.store, context.options, user_id, _send_mail)
