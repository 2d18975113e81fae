"""Task submissions through the relay pipeline: the key, its group and model limits, the price, the
reservation (limits and balance in one Redis call), a channel, the upstream, then the charge settled
in full when the upstream took the task (or the reservation returned when it did not) and the task
row written for the pollers. Follow-up actions go to the channel of the task they act on, which
must be the caller's own.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from api import keys
from api.bodies import read_body
from api.channels.index import ChannelInfo
from api.i18n import language, translate
from api.relay.failure_log import log_failure
from api.relay.handler import (
    admit,
    check_model_allowed,
    check_served,
    first_channel,
    new_facts,
    price_of,
    usable_group,
)
from api.relay.job import Caller, Job
from api.relay.state import RelayState, relay_state
from api.relay.tasks.base import TaskAdaptor, Upstream
from api.relay.tasks.billing import TaskCharge
from api.relay.tasks.bodies import Check, type_problem
from api.relay.tasks.midjourney import MidjourneyAdaptor
from api.relay.tasks.suno import SunoAdaptor
from api.services.billing import pricing
from api.services.billing.records import SettlementRecord
from api.upstream import call as upstream
from api.upstream import catalogue
from api.upstream.base import RelayMode, UpstreamRequest
from api.upstream.errors import RelayError
from models import Midjourney, Task

log = logging.getLogger("api.relay")
SUBMIT_TIMEOUT = 60.0  # seconds for an upstream to take a task
MAX_ANSWER = 4 * 1024 * 1024

# The task protocols (a catalogue row's `task`) and their adaptors.
PROTOCOLS: dict[str, type[TaskAdaptor]] = {
    "midjourney": MidjourneyAdaptor,
    "midjourney-plus": MidjourneyAdaptor,
    "suno": SunoAdaptor,
}
ADAPTORS: dict[int, type[TaskAdaptor]] = {
    number: PROTOCOLS[row.task] for number, row in catalogue.CATALOGUE.items() if row.task in PROTOCOLS
}


def types_of(*protocols: str) -> frozenset[int]:
    """The channel types that speak one of these task protocols."""
    return frozenset(number for number, row in catalogue.CATALOGUE.items() if row.task in protocols)


def task_error(request: web.Request, status: int, message_key: str, code: str, /, **params: object) -> RelayError:
    """A refusal by the gateway itself, shaped by the route's error class (Midjourney's or Suno's)."""
    return RelayError.local_error(status, translate(message_key, language(request), **params), code,
                                  "invalid_request_error" if status < 500 else "new_api_error")


_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")  # \u0000 escaped in JSON (not an escaped backslash + "u0000")


async def json_body(request: web.Request, fields: Mapping[str, Check] | None = None) -> dict[str, Any]:
    """The request's JSON object, its known `fields` of their types; no NUL anywhere (PostgreSQL
    cannot keep one, and no task field needs one)."""
    raw = await read_body(request)
    try:
        body = orjson.loads(raw) if raw and not (b"\\u0000" in raw and _JSON_NUL.search(raw)) else None
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise task_error(request, 400, "relay_invalid_body", "invalid_request_body")
    problem = type_problem(body, fields) if fields is not None else ""
    if problem:
        raise task_error(request, 400, "relay_task_invalid", "invalid_request", reason=problem)
    return body


def path_id(request: web.Request) -> str:
    """The task id in the path; "" for one no task can have (a NUL, longer than the column)."""
    task_id = request.match_info["id"]
    return "" if "\x00" in task_id or len(task_id) > 191 else task_id


async def origin_channel(request: web.Request, row: Any, task_id: str) -> ChannelInfo:
    """The channel that ran a task (follow-ups and image seeds go to it)."""
    channel = relay_state(request).index.get(row.channel_id)
    if channel is None:
        raise task_error(request, 503, "relay_task_channel_gone", "channel_unavailable", id=task_id)
    return channel


async def call(http: aiohttp.ClientSession, up: Upstream, timeout: float, channel_type: int = 0,
               ) -> tuple[int, bytes]:
    """One upstream call through the one upstream call (api/upstream/call.py: redirects not
    followed, timed and counted): (status, body up to MAX_ANSWER bytes). Whatever status comes,
    the task code reads the answer in its protocol. A failure raises aiohttp.ClientError, as the
    callers expect of a transport failure."""
    request = UpstreamRequest(up.url, dict(up.headers), up.data(), up.method)
    try:
        return await upstream.call_whole(http, request, aiohttp.ClientTimeout(total=timeout), MAX_ANSWER,
                                         caller=upstream.TASK, channel_type=channel_type)
    except RelayError as exc:
        raise aiohttp.ClientPayloadError(exc.message) from exc


@dataclass(slots=True)
class Submission:
    """One task to submit: what it is, where it goes below the platform prefix, and what it carries."""

    platform: str  # "mj" or "suno"
    action: str  # IMAGINE, UPSCALE, …, MUSIC, LYRICS
    model: str  # the priced model (mj_imagine, suno_music, …)
    path: str  # "/submit/imagine", "/submit/music", …
    body: dict[str, Any]
    types: frozenset[int]  # channel types that can run it
    origin: ChannelInfo | None = None  # a follow-up: the channel of the task it acts on
    prompt: str = ""
    # Per-channel fields: (channel, body, the submission's own id (its settlement id)) → the body sent.
    for_channel: Callable[[ChannelInfo, dict[str, Any], str], dict[str, Any]] | None = None


def task_quota(price: pricing.Price, options: Any) -> int:
    """A task's charge: its per-call price (ModelPrice × group ratio); a model priced by ratio only
    is charged what a request without usage would be (PreConsumedQuota tokens at its ratio)."""
    return pricing.pre_charge_quota(price, 0, None, pre_consumed_quota=options.get_int("PreConsumedQuota"),
                                    quota_per_unit=options.get_int("QuotaPerUnit"))


def task_key(channel: ChannelInfo) -> ChannelInfo:
    """A task is polled later with its channel's first enabled key (models.keyring.primary): a
    multi-key channel submits with that key too, so the upstream knows the task when asked."""
    if not channel.keys:
        return channel
    index, key, _ = channel.keys[0]
    return channel.with_key(index, key)


def _pick(state: RelayState, job: Job, types: frozenset[int], tried: list[int]) -> ChannelInfo | None:
    exclude = list(tried)
    while True:
        channel = state.index.pick(job.group, job.model, exclude=exclude)
        if channel is None or channel.type in types:
            return channel
        exclude.append(channel.id)  # a channel of a type that cannot run this action


async def submit(request: web.Request, caller: Caller, sub: Submission) -> tuple[dict[str, Any], Any]:
    """Run a submission: (the upstream's answer for the client, the task row written). Raises Refused
    (Midjourney's own refusal, answered as it is) or a RelayError when the upstream did not take it."""
    state = relay_state(request)
    options = state.options if state.options is not None else request.config_dict[keys.OPTIONS]
    job = Job(request, state, options, RelayMode.IMAGES, f"/{sub.platform}{sub.path}", caller, sub.body)
    job.model = sub.model
    try:
        return await _submit(request, caller, sub, job)
    except RelayError as err:
        log_failure(job, err)
        raise
    except Refused as refused:  # midjourney-proxy's own refusal: the operator sees it in the logs too
        answer = refused.answer
        log_failure(job, RelayError(400, str(answer.get("description") or answer.get("code")), "upstream_error",
                                    answer.get("code")))
        raise


async def _submit(request: web.Request, caller: Caller, sub: Submission, job: Job) -> tuple[dict[str, Any], Any]:
    state = job.state
    options = job.options
    job.group = usable_group(request, options, caller.user, caller.token.group if caller.token else "")
    check_model_allowed(job)
    job.price = price_of(job)
    if sub.origin is not None:
        channel: ChannelInfo | None = sub.origin
    else:
        await check_served(job)
        job.channel = first_channel(job)
        channel = job.channel if job.channel.type in sub.types else _pick(state, job, sub.types, [job.channel.id])
        if channel is None:
            raise task_error(request, 503, "relay_no_channel", "no_available_channel", model=job.model,
                             group=job.group)
    assert channel is not None
    job.channel = channel = task_key(channel)
    job.pre = task_quota(job.price, options)
    job.facts = facts = new_facts(job)
    facts.mode = sub.platform
    job.charge = charge = await admit(job)
    http = state.http if state.http is not None else request.config_dict[keys.HTTP]
    retries = 0 if sub.origin is not None else options.get_int("RetryTimes")
    tried: list[int] = []
    settled = False
    try:
        while True:
            tried.append(channel.id)
            job.upstream = channel  # the error log names it, and masks with its key
            facts.channel_id, facts.used_channels = channel.id, list(tried)
            adaptor = ADAPTORS[channel.type](channel.base_url, channel.key)
            try:
                body = sub.for_channel(channel, sub.body, facts.request_id) if sub.for_channel is not None \
                    else sub.body
                status, raw = await call(http, adaptor.submit(sub.path, body), SUBMIT_TIMEOUT, channel.type)
                result = adaptor.read_submit(status, raw)
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.info("task channel %s unreachable for %s: %s", channel.id, sub.model, type(exc).__name__)
                result = adaptor.read_submit(502, b"")
                result.reason = translate("relay_task_unreachable", language(request))
            if result.accepted:
                break
            moves = sub.origin is None and (result.busy or (result.retry_elsewhere and len(tried) <= retries))
            following = _pick(state, job, sub.types, tried) if moves else None
            following = task_key(following) if following is not None else None
            if following is None:
                raise _refused(request, sub, result.answer, result.reason)
            channel = following
        facts.task_id = result.task_id
        price = job.price
        billing = TaskCharge(facts.request_id, charge.token_limited, job.group, job.model, price.group_ratio,
                             price.model_price if price.model_price is not None else -1, caller.user.username,
                             caller.token.name if caller.token else "").dumps()
        # The row first: a process that dies before the charge below leaves a task the user can
        # fetch (and the reservation, closed by the sweep), never a charge for a task it cannot see.
        row = await _insert(sub, caller, channel, result.task_id, charge.pre, billing, result.row)
        try:
            await state.quota.settle(charge, charge.pre, SettlementRecord.of(facts, charge.pre).encode(), 0)
        except BaseException:
            await row.delete()
            raise
        state.settlements.mark(charge.user_id)
        settled = True
        return result.answer, row
    finally:
        if not settled:
            await asyncio.shield(state.quota.refund(charge))
        state.keeper.release(charge.settlement_id)


class Refused(Exception):
    """The upstream did not take the task: its own answer (a Midjourney code) goes back as it is."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(str(answer))
        self.answer = answer


def _refused(request: web.Request, sub: Submission, answer: dict[str, Any], reason: str) -> Exception:
    if answer and sub.platform == "mj" and isinstance(answer.get("code"), int):
        return Refused(answer)  # midjourney-proxy's own refusal (queue full, banned prompt): HTTP 200, its code
    message = translate("relay_task_refused", language(request), reason=reason)
    return RelayError(502 if not answer else 400, message, "upstream_error", "task_submit_failed")


async def _insert(sub: Submission, caller: Caller, channel: ChannelInfo, task_id: str, quota: int, billing: str,
                  known: dict[str, Any]) -> Any:
    now = time.time()
    token_id = caller.token.id if caller.token else 0
    if sub.platform == "mj":
        fields: dict[str, Any] = {"code": 1, "status": "SUBMITTED", "progress": "0%", "description": "",
                                  **known}
        return await Midjourney.create(
            user_id=caller.user.id, token_id=token_id, action=sub.action, mj_id=task_id, prompt=sub.prompt,
            submit_time=int(now * 1000), channel_id=channel.id, quota=quota, billing=billing, **fields)
    return await Task.create(
        task_id=task_id, platform=sub.platform, user_id=caller.user.id, token_id=token_id, channel_id=channel.id,
        quota=quota, action=sub.action, status="SUBMITTED", progress="0%", submit_time=int(now),
        properties=orjson.dumps({"prompt": sub.prompt}).decode() if sub.prompt else "", billing=billing)
