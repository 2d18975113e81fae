"""Keeping channels healthy: testing them with the automatic disable/enable rules, one at a time
(the API, a probe) or all of them (a scheduled run), under single-flight locks.

The parts: one test (api/channels/channel_test.py), what its result means (verdicts.py), the
backoff of automatically disabled channels (probes.py), root's summary mail (status_mail.py);
balances and model lists are api/channels/queries.py, and the relay's per-request error-rate
window is api/channels/health.py (this is the active side: it sends requests to the providers
itself). The same functions serve the API (one channel, answered inline) and the workers (all
channels, probing, scheduled runs); every I/O dependency is passed in `Deps`.

Redis keys (all under the deployment prefix):
  lock:channel_test_all / lock:channel_balance_all / lock:channel_test:<id>   single-flight locks
  channel:probe              hash id → "attempts:next_at" (probes.py)
  channel:notify             list of pending status changes for root's summary mail (status_mail.py)
  channel:notify:throttle    set while a summary was mailed recently
  sched:<name>               last run (unix seconds) of a periodic job
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from api.channels import admin as channel_service
from api.channels import keys as channel_keys
from api.channels.channel_test import TestResult, is_testable, record_test, run_test, test_timeout
from api.channels.error_rules import should_disable_for_error
from api.channels.index import fingerprint
from api.channels.monitor_deps import Deps as Deps
from api.channels.probes import probe_failed, schedule_probe
from api.channels.status_mail import flush_notifications, note_status_change
from api.channels.test_outcome import parse_other_info
from api.channels.verdicts import DISABLE, ENABLE, is_too_slow, verdict
from api.services import locks, redis_keys
from api.services.store import Store
from models import Channel, keyring
from models.enums import ChannelStatus

log = logging.getLogger(__name__)

TEST_CONCURRENCY = 5  # channels tested (or balances queried) at once by one run
RUN_LOCK_TTL = 600  # seconds; a run refreshes it after every channel, a dead run frees it


@dataclass
class RunSummary:
    tested: int = 0
    succeeded: int = 0
    skipped: int = 0
    disabled: list[int] = field(default_factory=list)
    enabled: list[int] = field(default_factory=list)


# -- locks and periodic runs -----------------------------------------------------------------------

_CLAIM_RUN = """
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) - last >= tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', 30 * 86400)
  return 1
end
return 0
"""


def lock_key(store: Store, name: str, *parts: object) -> str:
    return redis_keys.lock(store, name, *parts)


async def refresh(store: Store, key: str, token: str, ttl: int = RUN_LOCK_TTL) -> bool:
    """A channel run's lock, extended after every channel."""
    return await locks.refresh(store, key, token, ttl)


async def claim_run(store: Store, name: str, interval_seconds: float, now: float | None = None) -> bool:
    """True (and the run recorded) when the periodic job `name` last ran `interval_seconds` ago or more."""
    now = time.time() if now is None else now
    key = redis_keys.run_claim(store, name)
    return bool(await store.redis.eval(_CLAIM_RUN, 1, key, int(now), int(interval_seconds)))


# -- one channel: test, verdict, and what follows --------------------------------------------------

async def apply_verdict(deps: Deps, channel: Channel, decision: tuple[str, str] | None) -> str | None:
    """Carry out a verdict; returns DISABLE/ENABLE when the channel really changed."""
    if decision is None:
        return None
    action, reason = decision
    if action == DISABLE:
        if not await channel_service.auto_disable(channel.id, reason, deps.events):
            return None
        await schedule_probe(deps.store, channel.id, 0)
    else:
        if not await channel_service.auto_enable(channel.id, deps.events):
            return None
        await deps.store.redis.hdel(redis_keys.channel_probes(deps.store), str(channel.id))
    await note_status_change(deps.store, action, channel, reason)
    log.info("channel %s (#%d) automatically %sd%s", channel.name, channel.id, action,
             f": {reason}" if reason else "")
    return action


class ChannelBusy(Exception):
    """Another process is testing this channel right now."""


async def test_and_apply(deps: Deps, channel: Channel, *, apply_rules: bool = True) -> tuple[TestResult, str | None]:
    """Test one channel under its single-flight lock, record the timing, apply the rules.
    Returns (result, change); ChannelBusy when another process is testing it right now."""
    timeout = test_timeout(deps.options)
    key = lock_key(deps.store, "channel_test", channel.id)
    token = await locks.acquire(deps.store, key, timeout + 30)
    if token is None:
        raise ChannelBusy(channel.id)
    try:
        result = await run_test(deps.http, channel, "", timeout)
        await record_test(channel.id, result)
        change = None
        if apply_rules:
            ring = keyring.load(channel.key, channel.channel_info)
            decision = verdict(channel, result, deps.options)
            if ring.multi:
                decision = await key_verdicts(deps, channel, ring, result, decision, timeout)
            change = await apply_verdict(deps, channel, decision)
    finally:
        await locks.release(deps.store, key, token)
    return result, change


async def key_verdicts(deps: Deps, channel: Channel, ring: keyring.Keyring, result: TestResult,
                       decision: tuple[str, str] | None, timeout: float) -> tuple[str, str] | None:
    """A multi-key channel: a credential refused disables the key tested, not the channel; each
    automatically disabled key is tested on its own and comes back when it answers (the channel
    follows its keys: api/channels/keys.py). Returns what is left of the channel's verdict."""
    enabled = ring.enabled()
    if (decision is not None and decision[0] == DISABLE and enabled and result.error is not None
            and should_disable_for_error(result.error, channel.type)):
        await channel_keys.set_key_status(channel.id, enabled[0], keyring.AUTO, reason=decision[1],
                                          only_from=(keyring.ENABLED,), events=deps.events)
        decision = None
    if decision is not None and decision[0] == ENABLE and (not enabled or parse_other_info(
            channel.other_info).get("status_reason") == channel_keys.ALL_KEYS_DISABLED):
        decision = None  # a channel without keys comes back with its first key (below), not before
    if not deps.options.get_bool("AutomaticEnableChannelEnabled"):
        return decision
    threshold = deps.options.get_float("ChannelDisableThreshold")
    for index, key in enumerate(ring.keys):
        if ring.status(index) != keyring.AUTO:
            continue
        probe = await run_test(deps.http, channel, "", timeout, key=key)
        if probe.success and not is_too_slow(probe, threshold):
            await channel_keys.set_key_status(channel.id, fingerprint(key), keyring.ENABLED,
                                              only_from=(keyring.AUTO,), events=deps.events)
    return decision


# -- runs over many channels -----------------------------------------------------------------------

async def bounded(items: Iterable[Any], worker: Callable[[Any], Awaitable[None]], limit: int) -> None:
    """Run `worker` over `items`, at most `limit` at a time."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def drain() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await worker(item)

    await asyncio.gather(*(drain() for _ in range(max(1, min(limit, queue.qsize())))))


async def test_all(deps: Deps, lock_token: str, concurrency: int = TEST_CONCURRENCY) -> RunSummary:
    """Test every (testable) channel with the automatic rules; keeps the run's lock alive."""
    summary = RunSummary()
    run_lock = lock_key(deps.store, "channel_test_all")
    channels = [c for c in await Channel.all().order_by("id") if is_testable(c)]

    async def one(channel: Channel) -> None:
        try:
            result, change = await test_and_apply(deps, channel)
        except ChannelBusy:
            summary.skipped += 1
            return
        summary.tested += 1
        summary.succeeded += int(result.success)
        if change == DISABLE:
            summary.disabled.append(channel.id)
        elif change == ENABLE:
            summary.enabled.append(channel.id)
        await refresh(deps.store, run_lock, lock_token)

    await bounded(channels, one, concurrency)
    await flush_notifications(deps)
    return summary


async def test_one(deps: Deps, channel_id: int) -> str | None:
    """Test one channel with the rules (a probe when it is automatically disabled); updates its backoff."""
    channel = await Channel.filter(id=channel_id).first()
    if channel is None or not is_testable(channel):
        return None
    try:
        _, change = await test_and_apply(deps, channel)
    except ChannelBusy:
        return None
    if channel.status == ChannelStatus.AUTO_DISABLED and change is None:
        await probe_failed(deps.store, channel_id)
    await flush_notifications(deps)
    return change
