"""Where a request goes, after its admission: its first channel (the session's pin when it holds,
else the index's choice), one attempt on it, and after a failure the next channel or key never
tried before in this request — one loop for every request the relay serves. What an attempt is,
which channels can take the request and what a failure means come with the request's `Route`
(the OpenAI modes and the clients' formats: api.relay.handler.CHAT; tasks: api.relay.tasks.relay).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from api import keys
from api.channels import keys as channel_keys
from api.channels.error_rules import should_disable_for_error, should_retry_error
from api.channels.index import ChannelInfo
from api.i18n import language, translate
from api.middlewares import REDIS_DOWN
from api.relay import affinity
from api.relay.job import Job, Outcome
from api.relay.refusals import refuse
from api.services.store import Store
from api.upstream.errors import ChannelCannotServe, RelayError

log = logging.getLogger("api.relay")


def _any_channel(channel: ChannelInfo) -> bool:
    return True


def _same_key(channel: ChannelInfo) -> ChannelInfo:
    return channel


def retry_by_status(job: Job, channel: ChannelInfo, err: RelayError, left: int) -> bool:
    """The relay's rule (AutomaticRetryStatusCodes, a pinned channel never moves)."""
    return should_retry_error(err, channel.type, pinned=job.caller.pinned is not None, remaining=left,
                              ranges=job.options.get("AutomaticRetryStatusCodes"))


def as_is(job: Job, channel: ChannelInfo, err: RelayError) -> Exception:
    return err


def client_error(job: Job, channel: ChannelInfo, err: RelayError) -> Exception:
    """The upstream's error as the client sees it: status_code_mapping applied, 429 reworded; the
    gateway's own refusals as they are."""
    if err.local:
        return err
    message = err.message
    if err.status == 429:
        message = translate("relay_upstream_busy", language(job.request))
    return RelayError(channel.client_status(err.status), message, err.type, err.code, err.param)


@dataclass(frozen=True, slots=True)
class Route:
    """How a request tries channels.

    attempt      one attempt on one channel: the outcome, or a RelayError (ChannelCannotServe: the
                 channel cannot take this request at all — it moves on without using up a retry)
    serves       which channels can take it (the index knows the model; this knows the protocol)
    keyed        the key a channel uses for it (a multi-key channel's choice, or a fixed one)
    retry        whether a failed attempt moves to another channel, given the retries left
    final_error  what the client gets when no attempt succeeded
    unserved     what the client gets when the last channel could not take the request at all
    counts       whether failures count towards the channel's health and automatic disabling
    """

    attempt: Callable[[Job, ChannelInfo], Awaitable[Outcome]]
    serves: Callable[[ChannelInfo], bool] = _any_channel
    keyed: Callable[[ChannelInfo], ChannelInfo] = _same_key
    retry: Callable[[Job, ChannelInfo, RelayError, int], bool] = retry_by_status
    final_error: Callable[[Job, ChannelInfo, RelayError], Exception] = client_error
    unserved: Callable[[Job, ChannelInfo, RelayError], Exception] = as_is
    counts: bool = True


def first_channel(job: Job, route: Route) -> ChannelInfo:
    if job.caller.pinned is not None:
        return job.caller.pinned
    if job.charge is not None and job.charge.pin:
        job.pin = affinity.Pin.parse(job.charge.pin)
    channel = pick(job, route)
    if channel is None:  # its channels went in the meantime (or every key of theirs): refunded
        raise refuse(job.request, 503, "relay_no_channel", "no_available_channel", model=job.model, group=job.group)
    return channel


def pick(job: Job, route: Route, exclude: Collection[int] = (),
         exclude_keys: Collection[tuple[int, str]] = ()) -> ChannelInfo | None:
    """The next channel and key for the request (api/channels/index.py) that the route can use."""
    state = job.state
    skipped = list(exclude)
    while True:
        channel = state.index.pick(job.group, job.model, skipped, pin=job.pin, busy=state.load,
                                   least_busy=job.options.get_bool("ChannelLeastBusyEnabled"),
                                   exclude_keys=exclude_keys)
        if channel is None:
            return None
        if route.serves(channel):
            return route.keyed(channel)
        skipped.append(channel.id)  # a channel that cannot run this request (a task of another protocol)


def keep_pin(job: Job, channel: ChannelInfo) -> None:
    """After a success: record whether the session's pin held; a new or moved pin is written after
    the settlement (api/relay/settling.py), off the answer's path."""
    session, state = job.session, job.state
    if session is None or job.facts is None or state.pins is None:
        return
    keyed = channel.multi and channel.cache_per_key and channel.key_mode == "affinity"
    served = affinity.Pin(channel.id, channel.fingerprint if keyed else "")
    outcome = affinity.HIT if job.pin == served else affinity.MOVED if job.pin is not None else affinity.NEW
    job.facts.routing.update(session_source=session.source, affinity=outcome)
    state.metrics.pinned(outcome, session.source)
    if outcome != affinity.HIT:
        job.new_pin = served


def about_the_key(err: RelayError) -> bool:
    """An upstream error about the credential rather than the channel: another key of a multi-key
    channel may serve where this one was refused (a down upstream fails every key alike)."""
    return err.status in (401, 402, 403, 429) or err.type in {
        "insufficient_quota", "authentication_error", "permission_error", "rate_limit_error"}


async def relay_with_retries(job: Job, route: Route) -> Outcome:
    """Attempts on channels (or keys of a multi-key channel) never tried before in this request,
    never a disabled one, starting with `job.channel`."""
    state, options = job.state, job.options
    retries = 0 if job.caller.pinned else options.get_int("RetryTimes")
    channel = job.channel
    assert channel is not None and job.facts is not None
    tried: list[int] = []  # the channel of each attempt
    out: set[int] = set()  # channels this request will not try again
    keys_out: set[tuple[int, str]] = set()  # keys of multi-key channels the same
    while True:
        tried.append(channel.id)
        job.facts.channel_id, job.facts.used_channels = channel.id, list(tried)
        job.upstream = channel
        job.name = job.facts.name = job.name.mapped_to(channel.upstream_model(job.model))
        current, started = channel, time.monotonic()
        state.load.begin(current.id, current.fingerprint)
        try:
            outcome = await route.attempt(job, channel)
        except ChannelCannotServe as err:
            out.add(channel.id)
            following = None if job.caller.pinned else pick(job, route, out, keys_out)
            if following is None:
                raise route.unserved(job, channel, err) from None
            retries += 1  # not a failed attempt: it does not use up a retry
            channel = following
            continue
        except RelayError as err:
            if err.local:
                raise
            err.message = job.mask(err.message)
            if route.counts:
                note_failure(job, channel, err)
            if channel.multi and about_the_key(err):
                keys_out.add((channel.id, channel.fingerprint))
            else:
                out.add(channel.id)
            if route.retry(job, channel, err, retries - (len(tried) - 1)):
                following = pick(job, route, out, keys_out)
                if following is not None:
                    state.metrics.retry(job.route, job.model)
                    channel = following
                    continue
            raise route.final_error(job, channel, err) from None
        finally:
            state.load.end(current.id, current.fingerprint)
        state.health.record_success(channel.id, options)
        first_byte = job.facts.first_response_ms
        if first_byte:
            state.load.observe(channel.id, job.started + first_byte / 1000 - started)
        if channel.multi:
            job.facts.routing["key_index"] = channel.key_index
        keep_pin(job, channel)
        return outcome


def note_failure(job: Job, channel: ChannelInfo, err: RelayError) -> None:
    state = job.state
    state.metrics.error(job.route, job.model, channel.id, str(err.code or err.type))
    log.info("channel %s failed for %s (request %s): %s %s", channel.id, job.model,
             job.request.get(keys.REQUEST_ID), err.status, err.message[:200])
    reason = state.health.record_failure(channel.id, channel.type, channel.auto_ban, err, job.options)
    jobs = job.request.config_dict[keys.JOBS]
    if channel.multi:
        state.spawn(_note_key_failure(job.request.config_dict[keys.STORE], channel, err))
    if reason and channel.multi and should_disable_for_error(err, channel.type):
        # the key's credential was refused: that key goes, the channel keeps its other keys
        state.index.disable_key_locally(channel.id, channel.fingerprint)
        state.spawn(jobs.send("relay.disable_channel_key", channel.id, channel.fingerprint,
                              f"key #{channel.key_index}: {reason}"[:500]))
    elif reason:
        state.index.disable_locally(channel.id)  # this process stops now; the worker tells the others
        state.health.forget(channel.id)
        state.spawn(jobs.send("relay.disable_channel", channel.id, reason))


async def _note_key_failure(store: Store, channel: ChannelInfo, err: RelayError) -> None:
    try:
        await channel_keys.record_key_failure(store, channel.id, channel.key, f"status {err.status}: {err.message}")
    except REDIS_DOWN as exc:
        log.info("key failure not counted (%s)", exc)
