"""Chains of models (README, Fallbacks): when every channel of the model asked for failed in a way
the chain names, the next model of the chain is tried, in the same request, before anything
reached the client.

Where a chain comes from, first found: the client's own (OpenRouter's `models`, LiteLLM's
`fallbacks`), a named route the operator defined (`ModelRoutes`: the name stands for its models), the
operator's chain for the model or a pattern of it (`ModelFallbacks`). The lifecycle's steps it wraps:

stick     with FallbackStickySeconds, a session that fell back lately starts on the model that answered
          it (api/relay/fallback_sticky.py): one Redis GET before the admission; the model asked for
          comes next in its chain
admit     the model asked for has no channel at all (`unavailable`): the next one is admitted instead
attempts  relay_with_retries over the model's channels; its last error classified
          (api/relay/fallback_errors.py); when the chain takes that reason, the next model is priced,
          its reservation topped up atomically if it is dearer (api/services/billing/top_up.py), and
          its channels tried. The log row's `other.fallback` says what was asked and why each model
          was passed over; the answer's model is the one that answered (X-Gateway-Model). A request
          that fell back and was answered makes its session stick to that model (or, answered by
          the model tried first, ends the stickiness).

A request without a chain costs a few dictionary reads: nothing else changes for it.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any

from api import keys
from api.channels.index import ChannelInfo
from api.middlewares import REDIS_DOWN
from api.relay import billing
from api.relay.admission import admission, new_facts, price_of, session_for, worst_case
from api.relay.attempts import Route, pick, relay_with_retries
from api.relay.fallback_errors import reason_of
from api.relay.job import Chain, Job, Outcome
from api.services.billing import pricing
from api.services.billing.records import encode_reservation
from api.services.billing.top_up import TopUpRefused, top_up
from api.services.configuration import fallback_rules as rules
from api.services.model_name import ModelName
from api.upstream.base import RelayMode
from api.upstream.errors import RelayError

log = logging.getLogger("api.relay")
CLIENT_FIELDS = ("models", "route", "fallbacks")  # OpenRouter's, LiteLLM's


# -- the request's chain -----------------------------------------------------------------------------


def chain_of(job: Job) -> Chain | None:
    """The request's chain, or None (the client's fields taken out of the body either way)."""
    body, inbound = job.body, job.inbound
    client: list[str] | None = None
    if job.mode == RelayMode.CHAT:  # chat completions, and the Messages and Responses formats
        if "models" in body or "fallbacks" in body or "route" in body:
            client = _client_models(body)
        if inbound is not None and ("models" in inbound.body or "fallbacks" in inbound.body
                                    or "route" in inbound.body):
            client = _client_models(inbound.body) or client
    if job.form is not None or job.task:
        return None
    if client:
        models = [m for m in dict.fromkeys(client) if m != job.model][:rules.MAX_MODELS]
        return Chain(job.model, models, frozenset(rules.DEFAULT_ON), "client") if models else None
    options = job.options
    routes = rules.table(rules.ROUTES, options.get(rules.ROUTES))
    if routes:
        route = routes.exact.get(job.model)
        if route is not None and route.applies(job.group):
            asked = job.model
            rename(job, route.models[0])
            return Chain(asked, list(route.models[1:]), route.on, "route")
    entry = rules.table(rules.FALLBACKS, options.get(rules.FALLBACKS)).find(job.model, job.group)
    if entry is None:
        return None
    return Chain(job.model, [m for m in entry.models if m != job.model], entry.on, "operator")


def _client_models(body: dict[str, Any]) -> list[str] | None:
    """The client's fallback models, taken out of its body (never sent upstream)."""
    models, route, fallbacks = (body.pop(name, None) for name in CLIENT_FIELDS)
    del route  # "fallback" is OpenRouter's only routing, and what `models` does here
    found: list[str] = []
    for given in (models, fallbacks):
        if isinstance(given, list):
            found += [m.strip() for m in given if isinstance(m, str) and m.strip()]
    return found or None


def rename(job: Job, model: str) -> None:
    """The request from now on asks for `model`: routed, priced, answered and billed under it."""
    job.name = ModelName(model)
    if "model" in job.body:
        job.body["model"] = model
    if job.inbound is not None and "model" in job.inbound.body:
        job.inbound.body["model"] = model


def next_model(job: Job, chain: Chain, reason: str) -> str | None:
    """The next model of the chain that may serve the request, passing over (and saying so) those the
    key may not use, that have no price or no channel in the group."""
    if reason not in chain.on:
        return None
    while chain.models:
        model = chain.models.pop(0)
        why = unusable(job, chain, model)
        if not why:
            return model
        chain.passed.append({"model": model, "skipped": why})
        log.info("request %s: fallback model %s skipped (%s)", job.request.get(keys.REQUEST_ID), model, why)
    return None


def unusable(job: Job, chain: Chain, model: str) -> str:
    """Why the request may not go to `model` of its chain, or ""."""
    token = job.caller.token
    if chain.source != "route" and token is not None and token.model_limits is not None \
            and model not in token.model_limits:  # a key that may use a route may use its models
        return "not_allowed"
    if not job.state.index.has(job.group, model):
        return "no_channel"
    try:
        pricing.resolve_configured(job.options, model, job.group)
    except pricing.PriceNotConfigured:
        return "no_price"
    return ""


def passed_over(job: Job, chain: Chain, reason: str, err: RelayError | None, to: str) -> None:
    entry: dict[str, Any] = {"model": job.model, "reason": reason}
    if err is not None:
        entry.update(status=err.status, code=str(err.code or err.type or ""))
    chain.passed.append(entry)
    job.state.metrics.fallback(job.model, to, reason)


def logged(chain: Chain, answered: str) -> dict[str, Any]:
    """The log's `other.fallback`."""
    return {"requested": chain.asked, "answered": answered, "source": chain.source, "passed": list(chain.passed)}


# -- admit -------------------------------------------------------------------------------------------


async def admit_chain(job: Job) -> None:
    """The admission of the request's model, or of the first of its chain that has a channel."""
    chain = job.chain = chain_of(job)
    if chain is None:
        return await admission(job)
    chain.first = job.model
    if job.options.get_int(rules.STICKY) > 0:
        await stick(job, chain)
    while True:
        try:
            await admission(job)
            break
        except RelayError as err:
            if job.charge is not None or err.code != "no_available_channel":
                raise
            following = next_model(job, chain, rules.UNAVAILABLE)
            if following is None:
                raise
            passed_over(job, chain, rules.UNAVAILABLE, err, following)
            rename(job, following)
            chain.moved = True
    if chain.passed and job.facts is not None:
        job.facts.routing["fallback"] = logged(chain, job.model)


# -- attempts ----------------------------------------------------------------------------------------


async def relay_with_fallbacks(job: Job, route: Route) -> Outcome:
    """relay_with_retries over the model's channels, then over each next model's the chain allows."""
    chain = job.chain
    if chain is None:
        return await relay_with_retries(job, route)
    keeping = _keeping(route, chain)
    while True:
        chain.last = None
        try:
            outcome = await relay_with_retries(job, keeping)
        except RelayError as err:
            raw = chain.last or err
            reason = reason_of(raw)
            following = next_model(job, chain, reason) if reason else None
            if following is None or not await _move(job, chain, reason or "", raw, following):
                _note(job, chain)
                raise
            job.channel = pick(job, route)  # the model's own channels (a session's pin was the other model's)
            if job.channel is None:  # they went in the meantime
                _note(job, chain)
                raise
            continue
        if chain.moved and chain.sticky_key and outcome.produced:
            await remember(job, chain)
        return outcome


def _keeping(route: Route, chain: Chain) -> Route:
    """The route whose final error keeps the upstream's own (before status_code_mapping)."""
    final = route.final_error

    def keep(job: Job, channel: ChannelInfo, err: RelayError) -> Exception:
        chain.last = err
        return final(job, channel, err)

    return dataclasses.replace(route, final_error=keep)


async def _move(job: Job, chain: Chain, reason: str, err: RelayError, model: str) -> bool:
    """The request moved to `model`: priced, its reservation topped up when dearer (False: the
    balance cannot cover it, or the reservation is not the one admitted)."""
    charge, facts = job.charge, job.facts
    assert charge is not None and facts is not None
    asked, price = job.model, job.price
    rename(job, model)
    job.price = price_of(job)
    pre = billing.pre(job)
    fresh = new_facts(job)
    fresh.request_id, fresh.started, fresh.routing = facts.request_id, facts.started, facts.routing
    fresh.used_channels = list(facts.used_channels)
    try:
        await top_up(job.state.quota.store, charge, pre, encode_reservation(fresh, max(pre, charge.pre),
                                                                              job.prompt_tokens), worst_case(job))
    except TopUpRefused as refused:
        log.info("request %s: fallback from %s to %s not tried (%s)", facts.request_id, asked, model, refused.reason)
        rename(job, asked)
        job.price = price
        return False
    job.pre, job.facts = charge.pre, fresh
    job.name = ModelName(asked)  # said under the model passed over
    passed_over(job, chain, reason, err, model)
    job.name = ModelName(model)
    job.pin = None
    chain.moved = True
    if job.session is not None and job.state.pins is not None:
        job.pin_key = job.state.pins.key(job.caller.user.id, job.group, model, job.session)
    fresh.routing["fallback"] = logged(chain, model)
    return True


def _note(job: Job, chain: Chain) -> None:
    """A chain that ended in failure: its error row says what was passed over."""
    if chain.passed and job.facts is not None:
        job.facts.routing["fallback"] = logged(chain, "")


# -- stickiness (FallbackStickySeconds) --------------------------------------------------------------


async def stick(job: Job, chain: Chain) -> None:
    """A session that fell back lately starts on the model that answered it, while that model is still
    in the request's chain and usable; the model asked for comes next, then the rest of the chain."""
    sticky = job.state.sticky
    session = job.session = session_for(job)
    if sticky is None or session is None:
        return
    chain.sticky_key = sticky.key(job.caller.user.id, job.group, chain.asked, session)
    try:
        model = await sticky.read(chain.sticky_key)
    except REDIS_DOWN:
        return  # the admission says what Redis does
    if model is None or model == job.model or model not in chain.models or unusable(job, chain, model):
        return
    chain.models = [job.model, *(m for m in chain.models if m != model)][:rules.MAX_MODELS]
    chain.passed.append({"model": job.model, "skipped": "sticky"})
    job.state.metrics.fallback(job.model, model, "sticky")
    rename(job, model)


async def remember(job: Job, chain: Chain) -> None:
    """The session fell back and this model answered: its next requests start here, for
    FallbackStickySeconds (back on the model tried first: it starts there again)."""
    sticky = job.state.sticky
    assert sticky is not None
    seconds = job.options.get_int(rules.STICKY)
    try:
        if job.model == chain.first or seconds <= 0:
            await sticky.clear(chain.sticky_key)
        else:
            await sticky.write(chain.sticky_key, job.model, seconds)
    except REDIS_DOWN as exc:
        log.info("fallback stickiness not written (%s)", exc)
