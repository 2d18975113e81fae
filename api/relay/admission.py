"""Admission, shared by every request the relay serves (chat and the other OpenAI modes, the
clients' own formats, tasks): may the caller use the group and the model, at what price, is some
channel there for it, and then the rate limits and the pre-charge of user and key in one Redis call
(services/billing/quota.py), the reservation renewed by this process until the settlement.

1. who (the key: api.relay.caller.key_caller) and 2. what (the body, the model) come before;
the attempts (api/relay/attempts.py) and the settlement (api/relay/settling.py) after.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from api import keys
from api.relay import affinity, billing, kept_reasoning
from api.relay.auth import UserInfo
from api.relay.budgets import budget_rules, budget_windows
from api.relay.job import Job
from api.relay.modes import MODES, Billing
from api.relay.quota_refusals import PRE_CHARGE_REFUSALS, refusal_of
from api.relay.refusals import refuse
from api.relay.streaming import produced_usage
from api.services.billing import pricing
from api.services.billing.quota import Charge, Limits
from api.services.billing.records import encode_reservation
from api.services.billing.request_facts import RequestFacts, new_settlement_id
from api.services.configuration.capability_lookup import table_of
from api.services.configuration.options import OptionsService
from api.services.configuration.sensitive import find_sensitive, prompt_texts
from api.upstream.tokenizer import count_off_loop


async def admission(job: Job) -> None:
    """The price, a channel that serves the model, the prompt counted, the amount to reserve, the
    request's facts and session, then limits and pre-charge (the group and the model's
    permission are checked before, by the caller)."""
    job.price = price_of(job)
    await check_served(job)
    count = MODES[job.mode].count_prompt
    job.prompt_tokens = await count_off_loop(count, job.body, job.request.content.total_bytes) if not job.task else 0
    job.pre = billing.pre(job)
    job.facts = new_facts(job)
    find_session(job)
    job.charge = await admit(job)


# -- may they -----------------------------------------------------------------------------------------


def usable_group(request: web.Request, options: OptionsService, user: UserInfo, wanted: str) -> str:
    """The key's group (or the playground's choice) if the user may use it, else the user's group."""
    if not wanted or wanted == user.group:
        return user.group
    if wanted not in (options.get_json("UserUsableGroups") or {}):
        raise refuse(request, 403, "relay_group_disabled", "group_not_usable", group=wanted)
    if wanted not in (options.get_json("GroupRatio") or {}):
        raise refuse(request, 403, "relay_group_deprecated", "group_deprecated", group=wanted)
    return wanted


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


# -- is it served --------------------------------------------------------------------------------------


async def check_served(job: Job) -> None:
    """Some channel serves (group, model) — before anything is charged (the channel is chosen after
    the admission, which reads the session's pin)."""
    index = job.state.index
    if job.caller.pinned is not None or index.has(job.group, job.model):
        return
    if await index.refresh_after_miss() and index.has(job.group, job.model):
        return
    raise refuse(job.request, 503, "relay_no_channel", "no_available_channel", model=job.model, group=job.group)


def find_session(job: Job) -> None:
    """The request's session and where its pin is kept (api/relay/affinity.py); the admission reads it."""
    pins = job.state.pins
    session = job.session or session_for(job)
    if session is not None and pins is not None:
        job.session = session
        job.pin_key = pins.key(job.caller.user.id, job.group, job.model, session)


def session_for(job: Job) -> affinity.Session | None:
    """The conversation the request belongs to, when affinity is on (also read by a chain's
    stickiness before the admission, api/relay/fallbacks.py)."""
    options = job.options
    if job.state.pins is None or job.caller.pinned is not None or job.task \
            or not options.get_bool("ChannelAffinityEnabled"):
        return None
    native = job.inbound.body if job.inbound is not None else job.body
    return affinity.session_of(job.request, job.mode, native, job.body, options.get_int("ChannelAffinityTTLSeconds"))


# -- admit --------------------------------------------------------------------------------------------


def new_facts(job: Job) -> RequestFacts:
    caller, price = job.caller, job.price
    assert price is not None
    token = caller.token
    return RequestFacts(
        request_id=new_settlement_id(job.request.get(keys.REQUEST_ID, "")), user_id=caller.user.id,
        username=caller.user.username, token_id=token.id if token else 0,
        token_name=token.name if token else f"playground-{job.group}", token_limited=caller.token_limited,
        group=job.group, name=job.name, mode=job.task or str(job.mode), is_stream=job.is_stream,
        model_ratio=price.model_ratio, completion_ratio=price.completion_ratio, group_ratio=price.group_ratio,
        model_price=billing.logged_price(job), cache_ratio=price.cache_ratio,
        cache_creation_ratio=price.cache_creation_ratio,
        cache_creation_1h_ratio=price.cache_creation_1h_ratio, image_ratio=price.image_ratio,
        image_output_ratio=price.image_output_ratio, started=time.time(),
        inbound=job.inbound.name if job.inbound is not None else "")


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
        produced = (produced_usage(stream, job.prompt_tokens).completion_tokens if stream is not None and stream.events
                    else 0)
    return produced, job.facts.channel_id if job.facts is not None else 0


def worst_case(job: Job) -> int:
    """The most the request may cost (api.services.billing.exposure): a chat or completion's prompt
    and its longest answer — `max_tokens` clamped to the model's output cap (ModelCapabilities
    applied), else the cap, times `n`; a request that asks for thinking may get a longer limit than
    its `max_tokens` (Claude's budget), so the cap bounds it. Other token-billed requests (embeddings,
    speech…) answer no billed text: their prompt. Tasks, images, transcriptions and Realtime
    responses: their pre-charge."""
    price, mode = job.price, MODES[job.mode]
    assert price is not None
    if job.task or mode.billing not in (Billing.TOKENS, Billing.SPEECH):
        return job.pre
    output: int | None = 0
    if mode.text:
        body = job.body
        cap = table_of(job.options.get("ModelCapabilities") or "")(job.model).max_output
        asked = _count(body, "max_tokens") or _count(body, "max_completion_tokens")
        if cap and any(name in body for name in THINKING):
            asked = None
        output = pricing.most_output_tokens(asked, cap, _count(body, "n") or 1)
    return pricing.worst_case_quota(price, job.prompt_tokens, output, job.pre)


THINKING = ("thinking", "reasoning_effort", "reasoning")  # the request's own thinking controls


def _count(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def admit(job: Job) -> Charge:
    """Limits, budgets and pre-charge in one Redis call; the reservation is renewed by this process
    until its settlement (a process that dies leaves it to the sweep)."""
    caller, facts = job.caller, job.facts
    assert facts is not None
    rules = budget_rules(job)
    windows = budget_windows(job, rules) if rules else []
    try:
        charge = await job.state.quota.pre_charge(
            settlement_id=facts.request_id, user_id=caller.user.id,
            token_id=caller.token.id if caller.token else 0, token_limited=caller.token_limited,
            pre=job.pre, group=job.group, limits=limits_of(job.options),
            reservation=encode_reservation(facts, job.pre, job.prompt_tokens, [w.wire() for w in windows]),
            pin_key=job.pin_key, pin_ttl_ms=job.session.ttl * 1000 if job.session is not None else 0,
            worst=worst_case(job), windows=windows, prompt_tokens=job.prompt_tokens,
            read=kept_reasoning.lookups(job))
        facts.windows = [w.wire() for w in charge.windows]
        job.state.keeper.hold(facts.request_id, caller.user.id, lambda: progress(job))
        return charge
    except PRE_CHARGE_REFUSALS as exc:
        refusal = refusal_of(exc, job.state.quota, job.state.metrics, job.options, caller.token, caller.user)
        raise refuse(job.request, refusal.status, refusal.message_key, refusal.code, refusal.error_type,
                     headers=refusal.headers, **refusal.params) from None
