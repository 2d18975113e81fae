"""The relay pipeline, top to bottom (docs/billing.md is the contract it follows):

1. who      the API key and its owner (or the console session for /pg), a pinned channel
2. what     the body (JSON or multipart), the model, the group
3. may they IP allow-list, model limits, group, sensitive words, a price for the model
4. where    the first channel from the in-process index
5. admit    rate limits + pre-charge of user and key: one Redis call (services/quota.py)
6. relay    adaptor → upstream → client; a failed attempt moves to a channel not tried yet
7. settle   the exact amount, or refund everything when nothing was produced; the record goes to
            the workers through Redis (services/settlement.py)

Adaptors (api/upstream/providers) only translate; this module owns I/O and retries, api.relay.streaming
the streamed answers, api.relay.settling the end of a request, api.relay.job the request's state.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Mapping
from typing import Any, cast

import aiohttp
import orjson
from aiohttp import web

from api import keys
from api.bodies import read_body
from api.channels import keys as channel_keys
from api.channels.index import ChannelInfo
from api.i18n import language, translate
from api.middlewares import REDIS_DOWN, RETRY_AFTER
from api.relay import affinity, responses_support
from api.relay.auth import UserInfo, parse_key
from api.relay.disconnects import client_gone
from api.relay.failure_log import log_failure
from api.relay.forms import read_form
from api.relay.inbound.base import Inbound
from api.relay.job import Caller, Form, Job, Outcome, answer_headers, refuse
from api.relay.modes import MODES, Billing, text_field
from api.relay.settling import settle
from api.relay.state import RelayState, relay_state
from api.relay.streaming import produced_usage, relay_stream, usage_quota
from api.relay.validate import Invalid, check_body
from api.services.billing import pricing
from api.services.billing.quota import BalanceUnavailable, Charge, Limits, QuotaRefused, RateLimited
from api.services.billing.records import encode_reservation
from api.services.billing.settlement import RequestFacts, new_settlement_id
from api.services.configuration.capabilities import table_of
from api.services.configuration.options import OptionsService
from api.services.configuration.sensitive import find_sensitive, prompt_texts
from api.services.params import id_value
from api.services.store import Store
from api.upstream import call as upstream_call
from api.upstream import catalogue, client
from api.upstream.base import (
    Adaptor,
    AnswerReader,
    AudioMixin,
    RelayMeta,
    RelayMode,
    TokenUsage,
    UpstreamContext,
    json_object,
)
from api.upstream.errors import ChannelCannotServe, RelayError, should_disable_for_error, should_retry_error
from api.upstream.registry import build_adaptor
from api.upstream.tokenizer import count_off_loop, count_response, count_speech_input, count_text
from api.web.net import client_ip
from models.enums import Role, TokenStatus, UserStatus

log = logging.getLogger("api.relay")


# -- 1. who ---------------------------------------------------------------------------------------


async def key_caller(request: web.Request, state: RelayState) -> Caller:
    key, pinned_text = parse_key(request)
    if not key:
        raise refuse(request, 401, "relay_no_key", "missing_api_key", "invalid_request_error")
    token = await state.auth.token(key)
    if token is None:
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    if token.status != TokenStatus.ENABLED:
        message = {int(TokenStatus.EXPIRED): "relay_key_expired",
                   int(TokenStatus.EXHAUSTED): "relay_key_exhausted"}.get(int(token.status), "relay_key_disabled")
        raise refuse(request, 401, message, message.removeprefix("relay_"), "invalid_request_error")
    if token.expired_time != -1 and token.expired_time < time.time():
        raise refuse(request, 401, "relay_key_expired", "key_expired", "invalid_request_error")
    user = await state.auth.user(token.user_id)
    if user is None or user.deleted:
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    if user.status != UserStatus.ENABLED:
        raise refuse(request, 403, "relay_user_banned", "user_banned")
    ip = client_ip(request)
    if not token.ip_allowed(ip):
        raise refuse(request, 403, "relay_ip_forbidden", "ip_not_allowed", ip=ip)
    pinned = None
    if pinned_text:
        if user.role < Role.ADMIN:
            raise refuse(request, 403, "relay_pin_forbidden", "channel_pin_forbidden")
        pinned_id = id_value(pinned_text)
        pinned = state.index.get(pinned_id) if pinned_id is not None else None
        if pinned is None:
            raise refuse(request, 403, "relay_pinned_unavailable", "channel_unavailable", id=pinned_text)
        if pinned.keys:  # a multi-key channel pinned by an administrator: its first enabled key, named
            index, first_key, _ = pinned.keys[0]
            pinned = pinned.with_key(index, first_key)
    return Caller(user, token, pinned)


# -- 2. what --------------------------------------------------------------------------------------


async def read_input(request: web.Request, mode: RelayMode) -> tuple[dict[str, Any], Form | None]:
    if MODES[mode].multipart:
        return await read_form(request)
    raw = await read_body(request)
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise refuse(request, 400, "relay_invalid_body", "invalid_request_body", "invalid_request_error")
    return body, None


def requested_model(request: web.Request, mode: RelayMode, body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None or model == "":
        model = request.match_info.get("model") or MODES[mode].default_model
        if model and not MODES[mode].multipart:
            body["model"] = model
    if not isinstance(model, str) or not model.strip():
        raise refuse(request, 400, "relay_model_required", "model_required", "invalid_request_error")
    return model.strip()


def usable_group(request: web.Request, options: OptionsService, user: UserInfo, wanted: str) -> str:
    """The key's group (or the playground's choice) if the user may use it, else the user's group."""
    if not wanted or wanted == user.group:
        return user.group
    if wanted not in (options.get_json("UserUsableGroups") or {}):
        raise refuse(request, 403, "relay_group_disabled", "group_not_usable", group=wanted)
    if wanted not in (options.get_json("GroupRatio") or {}):
        raise refuse(request, 403, "relay_group_deprecated", "group_deprecated", group=wanted)
    return wanted


# -- 3. may they ----------------------------------------------------------------------------------


def check_model_allowed(job: Job) -> None:
    token = job.caller.token
    if token is not None and token.model_limits is not None and job.model not in token.model_limits:
        raise refuse(job.request, 403, "relay_model_forbidden", "model_not_allowed", model=job.model)


def check_sensitive(job: Job) -> None:
    options = job.options
    if not (options.get_bool("CheckSensitiveEnabled") and options.get_bool("CheckSensitiveOnPromptEnabled")):
        return
    if find_sensitive(prompt_texts(job.body), options.get("SensitiveWords")):
        raise refuse(job.request, 400, "relay_sensitive", "sensitive_words_detected")


def price_of(job: Job) -> pricing.Price:
    try:
        return pricing.resolve_configured(job.options, job.model, job.group)
    except pricing.PriceNotConfigured:
        raise refuse(job.request, 400, "relay_price_missing", "model_price_error", model=job.model) from None


# -- 4. where, 5. admit ---------------------------------------------------------------------------


async def check_served(job: Job) -> None:
    """Some channel serves (group, model) — before anything is charged (the channel is chosen after
    the admission, which reads the session's pin)."""
    index = job.state.index
    if job.caller.pinned is not None or index.has(job.group, job.model):
        return
    if await index.refresh_after_miss() and index.has(job.group, job.model):
        return
    raise refuse(job.request, 503, "relay_no_channel", "no_available_channel", model=job.model, group=job.group)


def first_channel(job: Job) -> ChannelInfo:
    if job.caller.pinned is not None:
        return job.caller.pinned
    if job.charge is not None and job.charge.pin:
        job.pin = affinity.Pin.parse(job.charge.pin)
    channel = pick(job)
    if channel is None:  # its channels went in the meantime (or every key of theirs): refunded
        raise refuse(job.request, 503, "relay_no_channel", "no_available_channel", model=job.model, group=job.group)
    return channel


def pick(job: Job, exclude: Collection[int] = (), exclude_keys: Collection[tuple[int, str]] = ()) -> ChannelInfo | None:
    """The next channel and key for the request (api/channels/index.py)."""
    state = job.state
    return state.index.pick(job.group, job.model, exclude, pin=job.pin, busy=state.load,
                            least_busy=job.options.get_bool("ChannelLeastBusyEnabled"), exclude_keys=exclude_keys)


def find_session(job: Job) -> None:
    """The request's session and where its pin is kept (api/relay/affinity.py); the admission reads it."""
    pins, options = job.state.pins, job.options
    if pins is None or job.caller.pinned is not None or not options.get_bool("ChannelAffinityEnabled"):
        return
    native = job.inbound.body if job.inbound is not None else job.body
    session = affinity.session_of(job.request, job.mode, native, job.body, options.get_int("ChannelAffinityTTLSeconds"))
    if session is not None:
        job.session = session
        job.pin_key = pins.key(job.caller.user.id, job.group, job.model, session)


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


def _int_field(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pre_amount(job: Job) -> int:
    options, price = job.options, job.price
    assert price is not None
    per_unit = options.get_int("QuotaPerUnit")
    if MODES[job.mode].billing == Billing.IMAGES:
        return pricing.image_quota(price, job.body.get("size"), job.body.get("quality"), _int_field(job.body, "n"),
                                   quota_per_unit=per_unit)
    max_tokens = _int_field(job.body, "max_tokens") or _int_field(job.body, "max_completion_tokens")
    return pricing.pre_charge_quota(price, job.prompt_tokens, max_tokens,
                                    pre_consumed_quota=options.get_int("PreConsumedQuota"), quota_per_unit=per_unit)


LIMIT_OPTIONS = tuple(f"RateLimit{who}{what}" for who in ("User", "Token", "Group")
                      for what in ("RPM", "TPM", "Concurrency"))
_limits_cache: dict[tuple[str, ...], Limits] = {}


def limits_of(options: OptionsService) -> Limits:
    """The nine limit options, parsed once per distinct set of raw values."""
    raw = tuple(options.get(name) for name in LIMIT_OPTIONS)
    limits = _limits_cache.get(raw)
    if limits is None:
        if len(_limits_cache) > 64:
            _limits_cache.clear()
        limits = _limits_cache[raw] = Limits(*(options.get_int(name) for name in LIMIT_OPTIONS))
    return limits


def progress(job: Job) -> tuple[int, int]:
    """(output tokens produced so far, channel): the checkpoint of the request's reservation."""
    produced = job.produced
    if produced is None:
        stream = job.stream
        produced = produced_usage(stream, job.prompt_tokens).completion_tokens if stream is not None and stream.events \
            else 0
    return produced, job.facts.channel_id if job.facts is not None else 0


async def admit(job: Job) -> Charge:
    """Limits and pre-charge in one Redis call; the reservation is renewed by this process until
    its settlement (a process that dies leaves it to the sweep)."""
    caller, facts = job.caller, job.facts
    assert facts is not None
    try:
        charge = await job.state.quota.pre_charge(
            settlement_id=facts.request_id, user_id=caller.user.id,
            token_id=caller.token.id if caller.token else 0, token_limited=caller.token_limited,
            pre=job.pre, group=job.group, limits=limits_of(job.options),
            reservation=encode_reservation(facts, job.pre, job.prompt_tokens), pin_key=job.pin_key,
            pin_ttl_ms=job.session.ttl * 1000 if job.session is not None else 0)
        job.state.keeper.hold(facts.request_id, caller.user.id, lambda: progress(job))
        return charge
    except RateLimited as exc:
        raise refuse(job.request, 429, "relay_rate_limited", "rate_limit_exceeded", "rate_limit_error",
                     headers={"Retry-After": str(exc.retry_after)}, scope=exc.scope, limit=exc.limit,
                     seconds=exc.retry_after) from None
    except QuotaRefused as exc:
        if exc.reason == "key_exhausted":
            raise refuse(job.request, 401, "relay_key_exhausted", "key_exhausted", "invalid_request_error") from None
        if exc.reason == "key_insufficient":
            raise refuse(job.request, 403, "relay_key_insufficient", "pre_consume_token_quota_failed",
                         remain=exc.remain, pre=exc.pre) from None
        raise refuse(job.request, 403, "relay_user_insufficient", "insufficient_user_quota",
                     "insufficient_user_quota", remain=exc.remain, pre=exc.pre) from None
    except BalanceUnavailable:
        raise refuse(job.request, 503, "relay_internal", "balance_unavailable") from None


# -- the pipeline -----------------------------------------------------------------------------------


async def run(request: web.Request, mode: RelayMode, route: str, caller: Caller,
              inbound: Inbound | None = None) -> web.StreamResponse:
    state = relay_state(request)
    options = state.options if state.options is not None else request.config_dict[keys.OPTIONS]
    body, form = (inbound.openai, None) if inbound is not None else await read_input(request, mode)
    job = Job(request, state, options, mode, route, caller, body, form, inbound=inbound)
    # The key's group, or the playground's `group` field (not an OpenAI field: never sent upstream).
    wanted = caller.token.group if caller.token else str(body.pop("group", "") or "")
    status, label = 500, "-"
    try:
        if form is None:
            try:
                check_body(mode, body)
            except Invalid as bad:
                refused = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error",
                                 param=bad.param, problem=bad.problem)
                refused.param = bad.param
                raise refused from None
        job.model = requested_model(request, mode, body)
        job.group = usable_group(request, options, caller.user, wanted)
        check_model_allowed(job)
        check_sensitive(job)
        job.price = price_of(job)
        await check_served(job)
        label = job.model
        job.prompt_tokens = await count_off_loop(MODES[mode].count_prompt, body, request.content.total_bytes)
        job.pre = pre_amount(job)
        job.facts = new_facts(job)
        find_session(job)
        job.charge = await admit(job)
        outcome: Outcome | None = None
        try:
            job.channel = first_channel(job)
            try:
                with state.disconnects.watch(request):  # a client that leaves cancels the upstream call
                    outcome = await relay_with_retries(job)
            except asyncio.CancelledError:
                if not state.disconnects.server_stopped(request):
                    raise
                # The server stops before the answer came: refunded, 503.
                raise refuse(request, 503, "service_unavailable", "service_unavailable",
                             headers={"Retry-After": str(RETRY_AFTER)}) from None
            if not job.is_stream and client_gone(request):
                # The answer came after its client left: nothing was delivered (docs/billing.md, Refunds).
                outcome.produced = False
                if job.facts is not None:
                    job.facts.incomplete = "the client went away"
        finally:
            await asyncio.shield(_settle_task(job, outcome or job.partial))
        status = outcome.response.status
        return outcome.response
    except RelayError as err:
        status = err.status
        state.metrics.error(route, label, job.channel.id if job.channel else 0, err.code and str(err.code) or err.type)
        log_failure(job, err)
        raise
    finally:
        frt = job.facts.first_response_ms / 1000 if job.facts and job.facts.first_response_ms else None
        state.metrics.request_done(route, label, job.facts.channel_id if job.facts else 0, status,
                                   time.monotonic() - job.started, job.is_stream, frt)


def _settle_task(job: Job, outcome: Outcome | None) -> asyncio.Task:
    """Settlement runs as its own task: a cancelled request still settles or refunds."""
    return asyncio.get_running_loop().create_task(settle(job, outcome))


def new_facts(job: Job) -> RequestFacts:
    caller, price = job.caller, job.price
    assert price is not None
    token = caller.token
    return RequestFacts(
        request_id=new_settlement_id(job.request.get(keys.REQUEST_ID, "")), user_id=caller.user.id,
        username=caller.user.username, token_id=token.id if token else 0,
        token_name=token.name if token else f"playground-{job.group}", token_limited=caller.token_limited,
        group=job.group, model=job.model, mode=str(job.mode), is_stream=job.is_stream,
        model_ratio=price.model_ratio, completion_ratio=price.completion_ratio, group_ratio=price.group_ratio,
        model_price=price.model_price, cache_ratio=price.cache_ratio, cache_creation_ratio=price.cache_creation_ratio,
        cache_creation_1h_ratio=price.cache_creation_1h_ratio,
        started=time.time(), inbound=job.inbound.name if job.inbound is not None else "")


def about_the_key(err: RelayError) -> bool:
    """An upstream error about the credential rather than the channel: another key of a multi-key
    channel may serve where this one was refused (a down upstream fails every key alike)."""
    return err.status in (401, 402, 403, 429) or err.type in {
        "insufficient_quota", "authentication_error", "permission_error", "rate_limit_error"}


async def relay_with_retries(job: Job) -> Outcome:
    """Attempts on channels (or keys of a multi-key channel) never tried before in this request,
    never a disabled one."""
    state, options = job.state, job.options
    retries = 0 if job.caller.pinned else options.get_int("RetryTimes")
    ranges = options.get("AutomaticRetryStatusCodes")
    channel = job.channel
    assert channel is not None and job.facts is not None
    tried: list[int] = []  # the channel of each attempt
    out: set[int] = set()  # channels this request will not try again
    keys_out: set[tuple[int, str]] = set()  # keys of multi-key channels the same
    while True:
        tried.append(channel.id)
        job.facts.channel_id, job.facts.used_channels = channel.id, list(tried)
        job.upstream = channel
        job.facts.upstream_model = channel.upstream_model(job.model)
        current, started = channel, time.monotonic()
        state.load.begin(current.id, current.fingerprint)
        try:
            outcome = await attempt(job, channel)
        except ChannelCannotServe:
            out.add(channel.id)
            following = None if job.caller.pinned else pick(job, out, keys_out)
            if following is None:
                raise
            retries += 1  # not a failed attempt: it does not use up a retry
            channel = following
            continue
        except RelayError as err:
            if err.local:
                raise
            err.message = job.mask(err.message)
            note_failure(job, channel, err)
            if channel.multi and about_the_key(err):
                keys_out.add((channel.id, channel.fingerprint))
            else:
                out.add(channel.id)
            left = retries - (len(tried) - 1)
            if should_retry_error(err, channel.type, pinned=job.caller.pinned is not None, remaining=left,
                                  ranges=ranges):
                following = pick(job, out, keys_out)
                if following is not None:
                    state.metrics.retry(job.route, job.model)
                    channel = following
                    continue
            raise client_error(job, channel, err) from None
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


def client_error(job: Job, channel: ChannelInfo, err: RelayError) -> RelayError:
    """The upstream's error as the client sees it: status_code_mapping applied, 429 reworded."""
    message = err.message
    if err.status == 429:
        message = translate("relay_upstream_busy", language(job.request))
    return RelayError(channel.client_status(err.status), message, err.type, err.code, err.param)


# -- 6. one attempt ---------------------------------------------------------------------------------


def new_adaptor(job: Job, channel: ChannelInfo) -> Adaptor:
    upstream_model = channel.upstream_model(job.model)
    meta = RelayMeta(channel_id=channel.id, channel_type=channel.type, key=channel.key, base_url=channel.base_url,
                     other=channel.other, organization=channel.organization, requested_model=job.model,
                     upstream_model=upstream_model, mode=job.mode, is_stream=job.is_stream,
                     prompt_tokens=job.prompt_tokens, inbound=job.inbound.name if job.inbound is not None else "",
                     capability=table_of(job.options.get("ModelCapabilities") or "")(upstream_model))
    adaptor = build_adaptor(meta)
    if not adaptor.supports(job.mode):
        err = refuse(job.request, 501, "relay_unsupported_mode", "unsupported", "unsupported",
                     type=catalogue.label(channel.type))
        raise ChannelCannotServe(err.status, err.message, err.type, err.code, local=True)
    return adaptor


async def attempt(job: Job, channel: ChannelInfo) -> Outcome:
    """One attempt on one channel: in the client's own format when the channel speaks it, else
    converted. A native endpoint the upstream turns out not to have (404/405) is remembered, and
    the same channel serves the request converted at once, without a failure counted against it
    (api/relay/responses_support.py)."""
    try:
        return await attempt_on(job, channel, await responses_support.native_attempt(job, channel))
    except responses_support.NativeRouteMissing:
        return await attempt_on(job, channel, False)


async def attempt_on(job: Job, channel: ChannelInfo, native: bool) -> Outcome:
    state = job.state
    settings = state.settings if state.settings is not None else job.request.config_dict[keys.SETTINGS]
    adaptor = new_adaptor(job, channel)
    http = state.http if state.http is not None else job.request.config_dict[keys.HTTP]
    ctx = UpstreamContext(http, state.credentials)
    payload: dict[str, Any] | aiohttp.FormData
    native_headers: dict[str, str] = {}
    if job.form is not None:
        payload = upstream_form(adaptor, job.form)
    elif job.inbound is not None and native:
        payload, native_headers = adaptor.native_request(job.inbound.native_body(adaptor.meta.model),
                                                         job.inbound.native_headers(adaptor.request_headers()))
    else:
        payload = upstream_body(adaptor, job)
        if adaptor.prepares:
            ctx.allow_private_urls = job.options.get_bool("MediaFetchPrivateEnabled")
            await adaptor.prepare(payload, ctx)
    upstream = adaptor.build_request(job.mode, payload)
    if job.facts is not None:
        inbound_notices = job.inbound.notices if job.inbound is not None else []
        job.facts.dropped = ",".join(dict.fromkeys([*inbound_notices, *adaptor.meta.notices]))
    reader: AnswerReader = adaptor
    if job.inbound is not None and native:
        upstream.headers.update(native_headers)
        if job.inbound.native_path:
            upstream.url = adaptor.base_url + job.inbound.native_path
        reader = job.inbound.native_reader(adaptor)
    timeout = client.timeouts(job.is_stream, settings.relay_timeout, settings.streaming_timeout)

    async def learn(status: int, error: bytes) -> None:
        await responses_support.check_route(job, channel, status, error, native)

    resp = await upstream_call.call(http, upstream, timeout, caller=upstream_call.RELAY, channel_type=channel.type,
                                    adaptor=adaptor, ctx=ctx, on_error=learn)
    decoder = adaptor.stream_decoder(resp.content_type) if job.is_stream else None
    if decoder is not None:
        return await relay_stream(job, reader, resp, decoder, native, adaptor.native_frames if native else None)
    raw = await client.read_body(resp)
    if adaptor.completes:
        ctx.allow_private_urls = job.options.get_bool("MediaFetchPrivateEnabled")
        raw = await adaptor.complete(raw, ctx)
    if job.facts is not None:
        job.facts.first_response_ms = int((time.monotonic() - job.started) * 1000)
    return answer(job, reader, resp, raw, native)


def upstream_body(adaptor: Adaptor, job: Job) -> dict[str, Any]:
    convert = MODES[job.mode].convert
    assert convert is not None, f"{job.mode} sends a form"
    body = job.body
    if job.inbound is not None:
        body = job.inbound.for_channel(body, adaptor.meta.channel_type)
    return convert(adaptor, body)


def upstream_form(adaptor: Adaptor, form: Form) -> aiohttp.FormData:
    data = aiohttp.FormData()
    for name, value in cast(AudioMixin, adaptor).convert_transcription_fields(form.fields).items():
        data.add_field(name, value)
    for name, filename, content_type, content in form.files:
        data.add_field(name, content, filename=filename, content_type=content_type)
    return data


def answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes, native: bool = False) -> Outcome:
    """A complete (non-streamed) upstream answer → the client's answer, usage and exact quota."""
    spec, price, options = MODES[job.mode], job.price, job.options
    assert price is not None
    per_unit = options.get_int("QuotaPerUnit")
    headers = answer_headers(job)
    if spec.billing == Billing.SPEECH:
        text = text_field(job.body, "input")
        usage = TokenUsage(count_speech_input(text), 0)
        response = web.Response(body=raw, headers={**headers, "Content-Type": resp.headers.get(
            "Content-Type", "application/octet-stream")})
        return Outcome(response, usage, pricing.speech_quota(price, text, quota_per_unit=per_unit))
    if spec.billing == Billing.TRANSCRIPTION:
        text = text_field(json_object(raw), "text") if resp.content_type == "application/json" else \
            raw.decode("utf-8", "replace")
        usage = TokenUsage(0, count_text(text))
        response = web.Response(body=raw, headers={**headers, "Content-Type": resp.headers.get(
            "Content-Type", "application/json")})
        return Outcome(response, usage, pricing.transcription_quota(price, usage.completion_tokens,
                                                                    quota_per_unit=per_unit))
    assert spec.read is not None, f"{job.mode} answers are not JSON"
    out, reported = spec.read(adaptor, adaptor.decode_body(raw))
    if spec.billing == Billing.IMAGES:
        quota = pricing.image_quota(price, job.body.get("size"), job.body.get("quality"), _int_field(job.body, "n"),
                                    quota_per_unit=per_unit)
        return Outcome(json_response(out, headers), TokenUsage(0, 0), quota)
    if reported is not None:
        usage = reported
    elif spec.text:
        usage = TokenUsage(job.prompt_tokens, count_response(out))
    else:
        usage = TokenUsage(job.prompt_tokens, 0)
    if native:  # the client's own format from the upstream: relayed as it came
        response = web.Response(body=raw, headers=headers, content_type="application/json")
        return Outcome(response, usage, usage_quota(job, usage))
    if job.inbound is not None:
        out = job.inbound.render(out)
    return Outcome(json_response(out, headers), usage, usage_quota(job, usage))


def json_response(body: Any, headers: Mapping[str, str]) -> web.Response:
    return web.Response(body=orjson.dumps(body), headers=dict(headers), content_type="application/json")
