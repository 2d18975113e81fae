"""Task submissions through the relay's lifecycle (api/relay/lifecycle.py): admission (the key's group
and model limits, the price, the reservation: api/relay/admission.py), the attempts over channels of
the task's protocol (api/relay/attempts.py, with the task's own Route), then the settlement
(api/relay/settling.py): the charge settled in full when the upstream took the task and its row was
written for the pollers, or the reservation returned when it did not. Follow-up actions go to the
channel of the task they act on, which must be the caller's own. A task provider brings its adaptor
(api/upstream/task_base.py, named by its catalogue row) and nothing of this.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from api.bodies import read_body
from api.channels.index import ChannelInfo
from api.i18n import language, translate
from api.relay.attempts import Route
from api.relay.caller import Caller
from api.relay.job import Job, Outcome
from api.relay.lifecycle import Declined, Flow, serve
from api.relay.state import relay_state
from api.relay.tasks.billing import TaskCharge
from api.relay.tasks.bodies import Check, type_problem
from api.services.model_name import ModelName
from api.upstream import call as upstream
from api.upstream.base import RelayMode, TokenUsage, UpstreamRequest
from api.upstream.errors import ChannelCannotServe, RelayError
from api.upstream.registry import TASK_ADAPTORS
from api.upstream.task_base import Submitted, TaskAdaptor, keepable_id
from models import Midjourney, Task

log = logging.getLogger("api.relay")
SUBMIT_TIMEOUT = 60.0  # seconds for an upstream to take a task
MAX_ANSWER = 4 * 1024 * 1024

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
    return task_id if keepable_id(task_id) else ""


async def origin_channel(request: web.Request, row: Any, task_id: str) -> ChannelInfo:
    """The channel that ran a task (follow-ups and image seeds go to it)."""
    channel = relay_state(request).index.get(row.channel_id)
    if channel is None:
        raise task_error(request, 503, "relay_task_channel_gone", "channel_unavailable", id=task_id)
    return channel


def unanswered(err: RelayError) -> Exception:
    """A task call that got no answer (unreachable, timed out, cut, too large), as the task code reads one."""
    return aiohttp.ClientPayloadError(err.message)


async def call(http: aiohttp.ClientSession, up: UpstreamRequest, timeout: float, channel_type: int = 0,
               limit: int = MAX_ANSWER, adaptor: TaskAdaptor | None = None) -> tuple[int, bytes]:
    """One upstream call through the one upstream call (api/upstream/call.py: authorized by
    `adaptor`, redirects not followed, timed and counted): (status, body up to `limit` bytes).
    Whatever status comes, the task code reads the answer in its protocol. No answer raises
    aiohttp.ClientError, as the callers expect of a transport failure."""
    return await upstream.call_whole(http, up, aiohttp.ClientTimeout(total=timeout), limit, caller=upstream.TASK,
                                     channel_type=channel_type, adaptor=adaptor, unanswered=unanswered)


@dataclass(slots=True)
class Submission:
    """One task to submit: what it is, where it goes below the platform prefix, and what it carries."""

    platform: str  # "mj", "suno" or "video"
    action: str  # IMAGINE, UPSCALE, …, MUSIC, LYRICS
    model: str  # the priced model (mj_imagine, suno_music, …)
    path: str  # "/submit/imagine", "/submit/music", …
    body: dict[str, Any]
    types: frozenset[int]  # channel types that can run it
    origin: ChannelInfo | None = None  # a follow-up: the channel of the task it acts on
    prompt: str = ""
    # Per-channel fields: (channel, body, the submission's own id (its settlement id)) → the body sent.
    for_channel: Callable[[ChannelInfo, dict[str, Any], str], dict[str, Any]] | None = None
    task_id: str = ""  # the gateway's own id of the task (the client's); "": the upstream's id is the task's
    properties: dict[str, Any] = field(default_factory=dict)  # kept on the task row (what the answers show)
    adaptors: Mapping[int, type[TaskAdaptor]] | None = None  # the platform's adaptors by channel type (TASK_ADAPTORS)
    mode: RelayMode = RelayMode.TASK  # how it is billed: per call (TASK), or per second of video (VIDEO)


def task_key(channel: ChannelInfo) -> ChannelInfo:
    """A task is polled later with its channel's first enabled key (models.keyring.primary): a
    multi-key channel submits with that key too, so the upstream knows the task when asked."""
    if not channel.keys:
        return channel
    index, key, _ = channel.keys[0]
    return channel.with_key(index, key)


async def submit(request: web.Request, caller: Caller, sub: Submission) -> tuple[dict[str, Any], Any]:
    """Run a submission through the relay's lifecycle — admission, the attempts, the settlement, the
    failure log (submissions are not in the relay's metrics) — and answer (the upstream's answer for
    the client, the task row written). Raises Refused (Midjourney's own refusal, answered as it is) or
    a RelayError when the upstream did not take it."""
    state = relay_state(request)
    if sub.origin is not None:  # a follow-up goes to its task's channel, and nowhere else
        caller = Caller(caller.user, caller.token, task_key(sub.origin))
    job = Job(request, state, state.options, sub.mode, f"/{sub.platform}{sub.path}", caller, sub.body,
              name=ModelName(sub.model), task=sub.platform)
    answer, row = (await serve(job, Flow(task_route(sub), metered=False))).result
    return answer, row


class NotTaken(RelayError):
    """The upstream did not take the task: another channel may (5xx, unreachable), or none will."""

    def __init__(self, result: Submitted) -> None:
        super().__init__(502 if not result.answer else 400, result.reason or "the task was not taken", "upstream_error",
                         "task_submit_failed")
        self.result = result


class Busy(ChannelCannotServe):
    """The channel's queue is full: another channel is tried without using up a retry."""

    def __init__(self, result: Submitted) -> None:
        super().__init__(503, result.reason or "the channel is busy", "upstream_error", "task_submit_failed")
        self.result = result


def task_route(sub: Submission) -> Route:
    """How a submission tries channels: channels of its protocol, each with its first key; a task
    not taken moves on (busy: always; a failure another channel may not have: while retries are
    left); what the last channel said is the client's answer. A task channel's refusals are not
    counted against its health (they are mostly the prompt's)."""

    async def attempt(job: Job, channel: ChannelInfo) -> Outcome:
        if channel.type not in sub.types:  # an administrator's pinned channel of another protocol
            raise task_error(job.request, 503, "relay_no_channel", "no_available_channel", model=job.model,
                             group=job.group)
        facts, charge = job.facts, job.charge
        assert facts is not None and charge is not None
        adaptor = (sub.adaptors or TASK_ADAPTORS)[channel.type](channel.base_url, channel.key, channel.other)
        http = job.state.http
        try:
            body = sub.for_channel(channel, sub.body, facts.request_id) if sub.for_channel is not None else sub.body
            up = adaptor.submit(sub.path, body)
            status, raw = await call(http, up, SUBMIT_TIMEOUT, channel.type, adaptor.answer_limit, adaptor)
            result = adaptor.read_submit(status, raw)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.info("task channel %s unreachable for %s: %s", channel.id, sub.model, type(exc).__name__)
            result = adaptor.read_submit(502, b"")
            result.reason = translate("relay_task_unreachable", language(job.request))
        if not result.accepted:
            raise Busy(result) if result.busy else NotTaken(result)
        facts.task_id = sub.task_id or result.task_id
        price, caller = job.price, job.caller
        assert price is not None
        billing = TaskCharge(facts.request_id, charge.token_limited, job.group, job.model, price.group_ratio,
                             facts.model_price if facts.model_price is not None else -1, caller.user.username,
                             caller.token.name if caller.token else "", list(facts.windows)).dumps()
        # The row before the settlement: a process that dies in between leaves a task the user can
        # fetch (and the reservation, closed by the sweep), never a charge for a task it cannot see.
        row = await ROWS[adaptor.table](sub, caller, channel, result.task_id, charge.pre, billing, result.row)
        return Outcome(web.Response(), TokenUsage(), job.pre, result=(result.answer, row))

    def retry(job: Job, channel: ChannelInfo, err: RelayError, left: int) -> bool:
        return isinstance(err, NotTaken) and err.result.retry_elsewhere and left > 0

    def final(job: Job, channel: ChannelInfo, err: RelayError) -> Exception:
        if isinstance(err, NotTaken | Busy):
            protocol = (sub.adaptors or TASK_ADAPTORS).get(channel.type)
            return _refused(job.request, protocol, err.result.answer, err.result.reason)
        return err

    return Route(attempt, serves=lambda channel: channel.type in sub.types, keyed=task_key, retry=retry,
                 final_error=final, unserved=final, counts=False)


class Refused(Declined):
    """The upstream did not take the task: its own answer (a Midjourney code) goes back as it is, and the
    operator sees it in the error log too."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(str(answer))
        self.answer = answer
        self.error = RelayError(400, str(answer.get("description") or answer.get("code")), "upstream_error",
                                answer.get("code"))


def _refused(request: web.Request, protocol: type[TaskAdaptor] | None, answer: dict[str, Any],
             reason: str) -> Exception:
    if answer and protocol is not None and protocol.relays_refusal(answer):
        return Refused(answer)  # the upstream's own refusal (midjourney-proxy's queue full, banned prompt), as it is
    message = translate("relay_task_refused", language(request), reason=reason)
    return RelayError(502 if not answer else 400, message, "upstream_error", "task_submit_failed")


async def _insert_drawing(sub: Submission, caller: Caller, channel: ChannelInfo, task_id: str, quota: int,
                          billing: str, known: dict[str, Any]) -> Any:
    """A task of an adaptor whose table is "midjourney": a row of midjourney-proxy's shape."""
    token_id = caller.token.id if caller.token else 0
    fields: dict[str, Any] = {"code": 1, "status": "SUBMITTED", "progress": "0%", "description": "", **known}
    return await Midjourney.create(
        user_id=caller.user.id, token_id=token_id, action=sub.action, mj_id=task_id, prompt=sub.prompt,
        submit_time=int(time.time() * 1000), channel_id=channel.id, quota=quota, billing=billing, **fields)


async def _insert_task(sub: Submission, caller: Caller, channel: ChannelInfo, task_id: str, quota: int, billing: str,
                       known: dict[str, Any]) -> Any:
    """A task of the task table, under its platform."""
    now = time.time()
    token_id = caller.token.id if caller.token else 0
    properties = {**({"prompt": sub.prompt} if sub.prompt else {}), **sub.properties}
    if sub.task_id:  # the client knows the task by the gateway's id; the pollers ask by the upstream's
        properties["upstream_id"] = task_id
    return await Task.create(
        task_id=sub.task_id or task_id, platform=sub.platform, user_id=caller.user.id, token_id=token_id,
        channel_id=channel.id, quota=quota, action=sub.action, status="SUBMITTED", progress="0%", submit_time=int(now),
        properties=orjson.dumps(properties).decode() if properties else "", billing=billing)


# The row a taken task is written as, by its adaptor's `table`.
ROWS: dict[str, Callable[..., Awaitable[Any]]] = {"midjourney": _insert_drawing, "task": _insert_task}
