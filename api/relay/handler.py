"""The relay pipeline for the OpenAI modes and the clients' own formats (docs/billing.md is the
contract it follows):

1. who      the API key and its owner (api/relay/caller.py; the console session for /pg), a pinned channel
2. what     the body (JSON or multipart), its parameters, the model
3. may they the group, the model limits, sensitive words, a price for the model
4. where    some channel serves the model (the index in this process)
5. admit    rate limits + pre-charge of user and key: one Redis call (api/relay/admission.py)
6. relay    adaptor → upstream → client; a failed attempt moves to a channel not tried yet
            (api/relay/attempts.py: the one loop over channels, a Route per kind of request)
7. settle   the exact amount (api/relay/billing.py: one strategy per kind), or everything back when
            nothing was produced; the record goes to the workers through Redis (api/relay/settling.py)

Steps 2 (the group) to 7, the failure log and the metrics are the lifecycle's (api/relay/lifecycle.py),
the same for tasks (api/relay/tasks) and Realtime sessions with their own Flow. This module reads the
request, gives the lifecycle its Flow (CHAT_FLOW) and makes one attempt; api.relay.streaming relays the
streamed answers, api.relay.job holds the request's state. Adaptors (api/upstream/providers) only translate.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from api.bodies import read_body
from api.channels.index import ChannelInfo
from api.relay import billing, fallbacks, kept_reasoning, responses_support
from api.relay.admission import check_sensitive
from api.relay.answers import READERS
from api.relay.attempts import Route
from api.relay.caller import Caller
from api.relay.forms import read_form
from api.relay.image_stream import relay_events
from api.relay.inbound.base import Inbound
from api.relay.job import Form, Job, Outcome
from api.relay.lifecycle import Flow, serve
from api.relay.modes import MODES
from api.relay.refusals import refuse
from api.relay.state import relay_state
from api.relay.streaming import relay_stream
from api.relay.validate import Invalid, check_body
from api.services.billing.request_facts import answer_ms
from api.services.configuration.capability_lookup import table_of
from api.services.model_name import ModelName
from api.upstream import call as upstream_call
from api.upstream import catalogue, client
from api.upstream.base import Adaptor, AnswerReader, RelayMeta, RelayMode, UpstreamContext
from api.upstream.errors import ChannelCannotServe
from api.upstream.registry import build_adaptor
from api.web.header_values import header_list

log = logging.getLogger("api.relay")


# -- 2. what --------------------------------------------------------------------------------------


async def read_input(request: web.Request, mode: RelayMode) -> tuple[dict[str, Any], Form | None]:
    if (shape := MODES[mode].form) is not None:
        return await read_form(request, shape)
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


# -- 3. may they, 4. where, 5. admit, 6. relay, 7. settle: the lifecycle (api/relay/lifecycle.py) ------


async def run(request: web.Request, mode: RelayMode, route: str, caller: Caller,
              inbound: Inbound | None = None) -> web.StreamResponse:
    state = relay_state(request)
    body, form = (inbound.openai, None) if inbound is not None else await read_input(request, mode)
    job = Job(request, state, state.options, mode, route, caller, body, form, inbound=inbound)
    return (await serve(job, CHAT_FLOW)).response


def read(job: Job) -> None:
    """The body's parameters checked (a problem is a 400 naming the field), then its model named."""
    request, mode, body, form = job.request, job.mode, job.body, job.form
    try:
        if form is None:
            check_body(body, MODES[mode].check)
        elif (check_form := MODES[mode].check_form) is not None:
            check_form(body, form)
    except Invalid as bad:
        refused = refuse(request, 400, "relay_invalid_param", "invalid_parameter", "invalid_request_error",
                         param=bad.param, problem=bad.problem)
        refused.param = bad.param
        raise refused from None
    job.name = ModelName(requested_model(request, mode, body))


# -- 6. one attempt ---------------------------------------------------------------------------------


def new_adaptor(job: Job, channel: ChannelInfo) -> Adaptor:
    name = job.name.mapped_to(channel.upstream_model(job.model))
    meta = RelayMeta(channel_id=channel.id, channel_type=channel.type, key=channel.key, base_url=channel.base_url,
                     other=channel.other, organization=channel.organization, name=name, mode=job.mode,
                     is_stream=job.is_stream, prompt_tokens=job.prompt_tokens,
                     inbound=job.inbound.name if job.inbound is not None else "",
                     capability=table_of(job.options.get("ModelCapabilities") or "")(name.sent))
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
    settings, http = state.settings, state.http
    adaptor = new_adaptor(job, channel)
    ctx = UpstreamContext(http, state.credentials)
    payload: dict[str, Any] | aiohttp.FormData
    native_headers: dict[str, str] = {}
    if job.form is not None:
        as_json = MODES[job.mode].form_body
        converted = as_json(adaptor, job.body, job.form.files) if as_json is not None else None
        payload = converted if converted is not None else upstream_form(adaptor, job.form)
    elif job.inbound is not None and native:
        payload, native_headers = adaptor.native_request(job.inbound.native_body(adaptor.meta.model),
                                                         job.inbound.native_headers(adaptor.request_headers()))
    else:
        payload = upstream_body(adaptor, job, await kept_reasoning.body_for(job, adaptor))
        if adaptor.prepares:
            ctx.allow_private_urls = job.options.get_bool("MediaFetchPrivateEnabled")
            await adaptor.prepare(payload, ctx)
    upstream = adaptor.build_request(job.mode, payload)
    if job.facts is not None:
        inbound_notices = job.inbound.notices if job.inbound is not None else []
        # Names the client chose among them (unknown fields, hosted tools' types): encoded and bounded, so the
        # header that tells them and the log's `other.dropped` can always be written.
        job.facts.dropped = header_list([*inbound_notices, *adaptor.meta.notices])
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
    if decoder is not None and MODES[job.mode].events:
        return await relay_events(job, resp, decoder)
    if decoder is not None:
        return await relay_stream(job, reader, resp, decoder, native, adaptor.native_frames if native else None)
    raw = await client.read_body(resp)
    if adaptor.completes:
        ctx.allow_private_urls = job.options.get_bool("MediaFetchPrivateEnabled")
        raw = await adaptor.complete(raw, ctx)
    if job.facts is not None:
        job.facts.first_response_ms = answer_ms(job.started, time.monotonic())
    return answer(job, reader, resp, raw, native)


CHAT = Route(attempt=attempt)  # the OpenAI modes and the clients' own formats
CHAT_FLOW = Flow(CHAT, fallbacks.relay_with_fallbacks, read=read, permits=(check_sensitive,),
                 admit=fallbacks.admit_chain, watched=True, settled=kept_reasoning.flush)


def upstream_body(adaptor: Adaptor, job: Job, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request converted for this adaptor (`body`: the request with reasoning state put back)."""
    convert = MODES[job.mode].convert
    assert convert is not None, f"{job.mode} sends a form"
    body = job.body if body is None else body
    if job.inbound is not None:
        body = job.inbound.for_channel(body, adaptor.meta.channel_type)
    return convert(adaptor, body)


def upstream_form(adaptor: Adaptor, form: Form) -> aiohttp.FormData:
    convert = MODES[adaptor.meta.mode].form_fields
    assert convert is not None, f"{adaptor.meta.mode} sends no form"
    data = aiohttp.FormData()
    for name, value in convert(adaptor, form.fields).items():
        data.add_field(name, value)
    for name, filename, content_type, content in form.files:
        data.add_field(name, content, filename=filename, content_type=content_type)
    return data


def answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes, native: bool = False) -> Outcome:
    """A complete (non-streamed) upstream answer → the client's answer and its usage, read as its mode's
    row says (api/relay/answers.py), and the amount to settle (api/relay/billing.py)."""
    response, usage = READERS[MODES[job.mode].reading](job, adaptor, resp, raw, native)
    return Outcome(response, usage, billing.final(job, usage))
