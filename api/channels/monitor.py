"""Keeping channels healthy: tests, automatic disable/enable, probing, root summaries (balances and
model lists: api/services/channel_queries.py).

(api/services/channel_health.py is the relay's per-request error-rate window; this module is the
active side: it sends requests to the providers itself.)

A test is one minimal chat request sent through the channel's own adaptor (the same translation the
relay uses), bounded by ChannelTestTimeoutSeconds. The same functions serve the API (one channel,
answered inline) and the workers (all channels, probing, scheduled runs); every I/O dependency is
passed in `Deps`, so nothing here knows which process it runs in.

Redis keys (all under the deployment prefix):
  lock:channel_test_all / lock:channel_balance_all / lock:channel_test:<id>   single-flight locks
  channel:probe              hash id → "attempts:next_at" (backoff of automatically disabled channels)
  channel:notify             list of pending status changes for root's summary mail
  channel:notify:throttle    set while a summary was mailed recently
  sched:<name>               last run (unix seconds) of a periodic job
"""
from __future__ import annotations

import asyncio
import html
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import orjson

from api.channels import admin as channel_service
from api.channels import keys as channel_keys
from api.channels.form import model_mapping_of, split_list
from api.channels.test_outcome import note_test_outcome, parse_other_info
from api.i18n import translate
from api.services import locks, redis_keys
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from api.services.store import Store
from api.upstream import call as upstream_call
from api.upstream import catalogue, client
from api.upstream.base import (
    RelayMeta,
    RelayMode,
)
from api.upstream.errors import RelayError, mask_secrets, should_disable_for_error
from api.upstream.registry import build_adaptor, is_relayable
from models import Channel, User, keyring
from models.enums import ChannelStatus, Role

log = logging.getLogger(__name__)

Sender = Callable[..., Awaitable[Any]]  # send(actor_name, *args): enqueue a worker job

TEST_CONCURRENCY = 5  # channels tested (or balances queried) at once by one run
FALLBACK_TEST_MODEL = "gpt-3.5-turbo"
RUN_LOCK_TTL = 600  # seconds; a run refreshes it after every channel, a dead run frees it
PROBE_BASE_DELAY = 60  # seconds before the first probe of an automatically disabled channel
PROBE_MAX_DELAY = 3600  # the backoff doubles per failed probe up to this
NOTIFY_THROTTLE = 600  # at most one summary mail to root per this many seconds
DISABLE, ENABLE = "disable", "enable"
ACCEPT_IDENTITY = {"Accept-Encoding": "identity"}  # the API's shared session does not decompress


@dataclass
class Deps:
    store: Store
    options: OptionsService
    events: EventBus | None
    http: aiohttp.ClientSession
    send: Sender | None = None


@dataclass
class TestResult:
    success: bool
    message: str
    elapsed: float  # seconds
    model: str = ""
    error: RelayError | None = None
    timed_out: bool = False
    timeout: float = 0.0

    @property
    def seconds(self) -> float:
        return round(self.elapsed, 3)


@dataclass
class RunSummary:
    tested: int = 0
    succeeded: int = 0
    skipped: int = 0
    disabled: list[int] = field(default_factory=list)
    enabled: list[int] = field(default_factory=list)


def failure_kind(err: RelayError) -> str:
    """What failed, in words: client.send's "do request failed: <what_failed>" without its prefix."""
    return err.message.removeprefix("do request failed: ")


def test_timeout(options: OptionsService) -> float:
    return max(1.0, options.get_float("ChannelTestTimeoutSeconds"))


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


# -- one test --------------------------------------------------------------------------------------

def is_testable(channel: Channel) -> bool:
    """Task channels and types without an adaptor are skipped by test runs (a manual test says why)."""
    return is_relayable(channel.type)


def pick_model(channel: Channel, requested: str = "") -> tuple[str, str]:
    """(model asked, model sent upstream): query, else test_model, else the first model; mapping applied."""
    model = requested.strip() or channel.test_model.strip()
    if not model:
        models = split_list(channel.models)
        model = models[0] if models else FALLBACK_TEST_MODEL
    return model, model_mapping_of(channel).get(model, model)


def test_request(model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": False}
    if model.startswith(("o1", "o3", "o4")):
        body["max_completion_tokens"] = 16
    else:
        body["max_tokens"] = 1
    return body


def _meta(channel: Channel, requested: str = "", upstream: str = "", key: str | None = None) -> RelayMeta:
    """One attempt's view of the channel: `key`, else its key (a multi-key channel's first enabled one)."""
    key = key if key is not None else keyring.primary(channel.key, channel.channel_info)
    return RelayMeta(channel_id=channel.id, channel_type=channel.type, key=key,
                     base_url=channel.base_url, other=channel.other,
                     organization=channel.openai_organization, requested_model=requested,
                     upstream_model=upstream, mode=RelayMode.CHAT)


async def run_test(http: aiohttp.ClientSession, channel: Channel, requested: str, timeout: float,
                   lang: str = "en", key: str | None = None) -> TestResult:
    """Send the minimal request through the channel's adaptor (the relay's own seam: conversion,
    signing or token exchange, transport) with `key` (default: the channel's key, a multi-key
    channel's first enabled one) and judge the answer; never raises for upstream trouble."""
    model, upstream = pick_model(channel, requested)
    retired = catalogue.provider(channel.type).retired
    if retired is not None:
        return TestResult(False, translate("channel_type_retired", lang, type=catalogue.label(channel.type, lang),
                                           reason=retired[0], reason_zh=retired[1]), 0.0, model, timeout=timeout)
    adaptor = build_adaptor(_meta(channel, model, upstream, key))
    secret = adaptor.meta.key
    if not adaptor.supports(RelayMode.CHAT):
        unsupported = translate("channel_test_unsupported", lang, type=catalogue.label(channel.type, lang))
        return TestResult(False, unsupported, 0.0, model, timeout=timeout)
    started = time.monotonic()
    try:
        request = adaptor.build_request(RelayMode.CHAT, adaptor.convert_request(test_request(model)))
        _, raw = await upstream_call.call_whole(http, request, aiohttp.ClientTimeout(total=timeout), client.MAX_BODY,
                                                caller=upstream_call.TEST, channel_type=channel.type, adaptor=adaptor)
        data = adaptor.decode_body(raw)
        if "error" in data and not data.get("choices"):
            raise adaptor.convert_error(500, raw)
        answer, usage = adaptor.convert_response(data)
    except RelayError as err:
        elapsed = time.monotonic() - started
        if err.code == "upstream_timeout":
            return TestResult(False, translate("channel_test_timeout", lang, seconds=f"{timeout:g}"), timeout, model,
                              timed_out=True, timeout=timeout)
        if err.code == "do_request_failed" and err.status == 500:
            message = translate("channel_test_request_failed", lang, error=failure_kind(err))
            return TestResult(False, mask_secrets(message, secret), elapsed, model, timeout=timeout)
        err.message = mask_secrets(err.message, secret)
        return TestResult(False, err.message, elapsed, model, error=err, timeout=timeout)
    elapsed = time.monotonic() - started
    if usage is None and not answer.get("choices"):
        return TestResult(False, translate("channel_test_no_usage", lang), elapsed, model, timeout=timeout)
    return TestResult(True, "", elapsed, model, timeout=timeout)


async def record_test(channel_id: int, result: TestResult) -> None:
    """response_time (ms) and test_time: measurements only, so no invalidation event is sent."""
    await Channel.filter(id=channel_id).update(response_time=int(result.elapsed * 1000), test_time=int(time.time()))
    await note_test_outcome(channel_id, result.success, result.message)


def is_too_slow(result: TestResult, threshold: float) -> bool:
    """Over ChannelDisableThreshold seconds (0 = no limit), a timeout at least that long included."""
    return threshold > 0 and (result.elapsed > threshold or (result.timed_out and result.timeout >= threshold))


def verdict(channel: Channel, result: TestResult, options: OptionsService) -> tuple[str, str] | None:
    """(DISABLE|ENABLE, reason) per AutomaticDisable/EnableChannelEnabled and ChannelDisableThreshold.

    A manually disabled channel (status 2) is never touched.
    """
    threshold = options.get_float("ChannelDisableThreshold")
    too_slow = is_too_slow(result, threshold)
    if channel.status == ChannelStatus.ENABLED:
        if not channel.auto_ban or not options.get_bool("AutomaticDisableChannelEnabled"):
            return None
        if result.error is not None and should_disable_for_error(result.error, channel.type):
            return DISABLE, result.message
        if too_slow:
            reason = result.message if result.timed_out else (
                f"response time {result.elapsed:.2f}s is over the threshold of {threshold:g}s")
            return DISABLE, reason
    elif channel.status == ChannelStatus.AUTO_DISABLED:
        if options.get_bool("AutomaticEnableChannelEnabled") and result.success and not too_slow:
            return ENABLE, ""
    return None


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
    if decision is not None and decision[0] == DISABLE and enabled and result.error is not None \
            and should_disable_for_error(result.error, channel.type):
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
            await channel_keys.set_key_status(channel.id, channel_keys.fingerprint(key), keyring.ENABLED,
                                              only_from=(keyring.AUTO,), events=deps.events)
    return decision


# -- runs over many channels -----------------------------------------------------------------------

async def bounded(items: Iterable[Any], worker: Callable[[Any], Awaitable[None]], limit: int) -> None:
    """Run `worker` over `items`, at most `limit` at a time."""
    queue: asyncio.Queue = asyncio.Queue()
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


# -- probing automatically disabled channels -------------------------------------------------------

def probe_delay(attempts: int) -> int:
    return min(PROBE_MAX_DELAY, PROBE_BASE_DELAY * 2 ** max(0, attempts))


def _probe_state(raw: str | None) -> tuple[int, float]:
    if not raw:
        return 0, 0.0
    attempts, _, next_at = raw.partition(":")
    try:
        return int(attempts), float(next_at)
    except ValueError:
        return 0, 0.0


async def probe_state(store: Store, channel_id: int) -> tuple[int, float]:
    """(failed probes so far, unix time of the next probe); (0, 0.0) = probe at once."""
    return _probe_state(await store.redis.hget(redis_keys.channel_probes(store), str(channel_id)))


async def schedule_probe(store: Store, channel_id: int, attempts: int, now: float | None = None) -> None:
    now = time.time() if now is None else now
    await store.redis.hset(redis_keys.channel_probes(store), str(channel_id),
                           f"{attempts}:{now + probe_delay(attempts):.0f}")


async def probe_failed(store: Store, channel_id: int, now: float | None = None) -> None:
    attempts, _ = await probe_state(store, channel_id)
    await schedule_probe(store, channel_id, attempts + 1, now)


async def due_probes(deps: Deps, now: float | None = None) -> list[int]:
    """Automatically disabled channels whose next probe is due; each is pushed back by its current
    backoff at once, so the next tick does not send it again while its probe is queued."""
    now = time.time() if now is None else now
    if not deps.options.get_bool("AutomaticEnableChannelEnabled"):
        return []
    probe_key = redis_keys.channel_probes(deps.store)
    disabled = [c for c in await Channel.filter(status=ChannelStatus.AUTO_DISABLED).order_by("id")
                if is_testable(c)]
    states = await deps.store.redis.hgetall(probe_key)
    stale = set(states) - {str(c.id) for c in disabled}
    if stale:
        await deps.store.redis.hdel(probe_key, *stale)
    due: list[int] = []
    for channel in disabled:
        attempts, next_at = _probe_state(states.get(str(channel.id)))
        if next_at <= now:
            due.append(channel.id)
            await deps.store.redis.hset(probe_key, str(channel.id), f"{attempts}:{now + probe_delay(attempts):.0f}")
    return due


# -- root's summary mail ---------------------------------------------------------------------------

async def note_status_change(store: Store, action: str, channel: Channel, reason: str) -> None:
    item = {"action": action, "id": channel.id, "name": channel.name, "reason": reason[:300], "time": int(time.time())}
    await store.redis.rpush(redis_keys.channel_notices(store), orjson.dumps(item))


def summary_mail(items: list[dict[str, Any]], system_name: str) -> tuple[str, str]:
    disabled = [i for i in items if i.get("action") == DISABLE]
    enabled = [i for i in items if i.get("action") == ENABLE]
    subject = f"{system_name}: {len(disabled)} channel(s) disabled, {len(enabled)} enabled"
    parts = []
    for title, group in (("Automatically disabled", disabled), ("Automatically enabled", enabled)):
        if not group:
            continue
        rows = "".join(
            f"<li>#{int(i['id'])} {html.escape(str(i.get('name', '')))} at "
            f"{datetime.fromtimestamp(int(i.get('time', 0)), UTC):%Y-%m-%d %H:%M:%S} UTC"
            + (f": {html.escape(str(i['reason']))}" if i.get("reason") else "") + "</li>"
            for i in group)
        parts.append(f"<h3>{title}</h3><ul>{rows}</ul>")
    return subject, "".join(parts)


async def flush_notifications(deps: Deps, throttle: int = NOTIFY_THROTTLE) -> bool:
    """Mail root one summary of the pending changes, at most once per `throttle` seconds; changes
    that arrive meanwhile wait for the next flush (the scheduler's channel.notify_root tick)."""
    store = deps.store
    key = redis_keys.channel_notices(store)
    if deps.send is None or not await store.redis.llen(key):
        return False
    if not await store.redis.set(redis_keys.channel_notice_throttle(store), "1", nx=True, ex=throttle):
        return False
    async with store.redis.pipeline(transaction=True) as pipe:
        pipe.lrange(key, 0, -1)
        pipe.delete(key)
        raw_items, _ = await pipe.execute()
    items = [orjson.loads(raw) for raw in raw_items]
    root = await User.filter(role=Role.ROOT, deleted_at=None).exclude(email="").order_by("id").first()
    if root is None:
        log.warning("%d channel status change(s) not mailed: root has no e-mail address", len(items))
        return False
    subject, body = summary_mail(items, deps.options.get("SystemName"))
    await deps.send("mail.send", root.email, subject, body)
    return True
