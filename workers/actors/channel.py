"""Channel health jobs: test all (the registered MCP servers too: api.mcp.health), test one,
balances, probing, root's summary mail.

The scheduler sends the periodic ones every minute or so with (sent_at, sender); each decides from
its interval option and its last run (kept in Redis) whether it is due, so the scheduler never reads
the database. The API sends test_all / update_balances with `run_token`: it already holds the run's
single-flight lock, which the actor releases when done.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import dramatiq

from api.channels import monitor, probes, queries, status_mail
from api.mcp import health
from api.services import locks
from api.services.queues import Queue
from workers.broker import send
from workers.context import ctx

log = logging.getLogger(__name__)
RUN_TIME_LIMIT = 3_600_000  # ms: a run over many channels, bounded per channel by the test timeout


async def _send(actor_name: str, *args: object) -> None:
    await asyncio.to_thread(send, actor_name, *args)


def _deps() -> monitor.Deps:
    c = ctx()
    return monitor.Deps(c.store, c.options, c.events, c.http, _send)


async def _run_locked(deps: monitor.Deps, lock_name: str, interval_option: str, job: str,
                      run_token: str, body: Callable[[monitor.Deps, str], Awaitable[None]]) -> None:
    """Manual (run_token given) or periodic (interval option > 0 and due) run under the lock."""
    store = deps.store
    lock = monitor.lock_key(store, lock_name)
    if run_token:
        if not await monitor.refresh(store, lock, run_token):
            log.warning("%s: the run's lock expired before it started; running anyway", job)
        token = run_token
    else:
        minutes = deps.options.get_int(interval_option)
        if minutes <= 0 or not await monitor.claim_run(store, job, minutes * 60):
            return
        acquired = await locks.acquire(store, lock, monitor.RUN_LOCK_TTL)
        if acquired is None:
            return  # a manual run is in progress
        token = acquired
    try:
        await body(deps, token)
    finally:
        await locks.release(store, lock, token)


@dramatiq.actor(actor_name="channel.test_all", queue_name=Queue.CHANNEL, max_retries=0, time_limit=RUN_TIME_LIMIT)
async def test_all(sent_at: float = 0.0, sender: str = "", run_token: str = "") -> None:
    async def body(deps: monitor.Deps, token: str) -> None:
        summary = await monitor.test_all(deps, token)
        log.info("tested %d channels (%d ok, %d busy); disabled %s, enabled %s", summary.tested,
                 summary.succeeded, summary.skipped, summary.disabled, summary.enabled)
        servers = await health.check_all(deps.options, deps.events)
        if servers.checked:
            log.info("checked %d MCP servers (%d failed); disabled %s, enabled %s", servers.checked,
                     len(servers.failed), servers.disabled, servers.enabled)

    await _run_locked(_deps(), "channel_test_all", "ChannelTestIntervalMinutes", "channel.test_all", run_token, body)


@dramatiq.actor(actor_name="channel.update_balances", queue_name=Queue.CHANNEL, max_retries=0,
                time_limit=RUN_TIME_LIMIT)
async def update_balances(sent_at: float = 0.0, sender: str = "", run_token: str = "") -> None:
    async def body(deps: monitor.Deps, token: str) -> None:
        updated = await queries.update_all_balances(deps, token)
        log.info("updated the balance of %d channels", updated)

    await _run_locked(_deps(), "channel_balance_all", "ChannelBalanceIntervalMinutes", "channel.update_balances",
                      run_token, body)


@dramatiq.actor(actor_name="channel.test_one", queue_name=Queue.CHANNEL, max_retries=0)
async def test_one(channel_id: int) -> None:
    """Test one channel with the automatic rules (probing an automatically disabled one)."""
    await monitor.test_one(_deps(), int(channel_id))


@dramatiq.actor(actor_name="channel.probe_disabled", queue_name=Queue.CHANNEL, max_retries=0)
async def probe_disabled(sent_at: float = 0.0, sender: str = "") -> None:
    """Send a test of each automatically disabled channel whose backoff has passed; bounded
    concurrency comes from the worker threads consuming channel.test_one."""
    for channel_id in await probes.due_probes(_deps()):
        await _send("channel.test_one", channel_id)


@dramatiq.actor(actor_name="channel.notify_root", queue_name=Queue.CHANNEL, max_retries=3)
async def notify_root(sent_at: float = 0.0, sender: str = "") -> None:
    """Mail root the status changes held back by the throttle."""
    await status_mail.flush_notifications(_deps())
