"""Billing: settlement records from Redis into the database (see api.services.billing.settlement).

No message waits on another: the users of a message are applied a few at a time, a user whose
billing lock is held elsewhere (or whose transaction failed) is sent again a moment later on its
own (one such retry per user at a time), so one user's stuck records never hold a worker thread,
nor the other users of the batch, nor the queue behind it.
"""
from __future__ import annotations

import asyncio
import logging

import dramatiq

from api.services import redis_keys
from api.services.billing.reservations import close_orphans
from api.services.billing.settlement import apply_users, users_with_pending
from api.services.budgets import durable
from api.services.queues import Queue
from api.services.store import Store
from workers.actors.budget import after_settlement
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)
RETRY_DELAY_MS = 2_000  # a user left for later is tried again this much later
SETTLING_AT_ONCE = 4  # settlement transactions of a worker process at a time (its pool holds 5 connections)
_gate: asyncio.Semaphore | None = None


def gate() -> asyncio.Semaphore:
    """The process's settlement slots, shared by its messages (made on the worker's event loop)."""
    global _gate
    if _gate is None:
        _gate = asyncio.Semaphore(SETTLING_AT_ONCE)
    return _gate


async def _send_mail(to: str, subject: str, html: str) -> None:
    await asyncio.to_thread(send, "mail.send", to, subject, html)


async def retry_later(store: Store, user_ids: list[int], delay_ms: int = RETRY_DELAY_MS) -> list[int]:
    """One delayed billing.apply for those of these users that have no retry on its way already;
    returns them. (A retry lost with its worker is left to billing.sweep.)"""
    async with store.redis.pipeline(transaction=False) as pipe:
        for user_id in user_ids:
            pipe.set(redis_keys.billing_retry(store, user_id), "1", nx=True, px=delay_ms)
        marked = await pipe.execute()
    due = [user_id for user_id, fresh in zip(user_ids, marked, strict=True) if fresh]
    if due:
        await asyncio.to_thread(send, "billing.apply", due, delay_ms=delay_ms)
    return due


@dramatiq.actor(actor_name="billing.apply", queue_name=Queue.BILLING, max_retries=20, min_backoff=200,
                max_backoff=30_000)
async def apply(user_ids: list[int]) -> None:
    """Apply the pending settlements of these users; idempotent (a record applies once)."""
    context = ctx()
    with durable.watching() as windows:  # the budget windows the records added to, for their soft alerts
        outcome = await apply_users(context.store, context.options, [int(u) for u in user_ids], _send_mail,
                                    timeout=context.settings.db_transaction_timeout, gate=gate())
    if windows:
        await after_settlement(context, windows)
    if outcome.later:
        await retry_later(context.store, outcome.later)


@dramatiq.actor(actor_name="billing.sweep", queue_name=Queue.BILLING, max_retries=3)
async def sweep(sent_at: float = 0, sender: str = "") -> None:
    """Reservations whose process died (closed: checkpointed output charged, the rest returned),
    then every user with records still waiting (a lost billing.apply, a process that died); a user
    left out now (locked elsewhere, the database away) waits for the next sweep or message."""
    context = ctx()
    await close_orphans(context.store, context.options.get_int("QuotaPerUnit"))
    outcome = await apply_users(context.store, context.options, await users_with_pending(context.store),
                                _send_mail, timeout=context.settings.db_transaction_timeout, gate=gate())
    if outcome.later:
        log.info("sweep: %d users left for later", len(outcome.later))
