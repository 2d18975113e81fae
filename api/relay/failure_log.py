"""The error log row of a relayed call that failed for good (api.services.error_logs writes it).

Which failures: every RelayError the pipeline answers once the key is known and the request names
its model: no price configured, no channel, a group or model the key may not use, a balance too
low, a conversion the channel cannot do, the upstream's 4xx/5xx after the retries, a server
stopping. Not written:
- requests without a valid key (refused before the pipeline: an anonymous client cannot fill the
  table), and bodies the gateway cannot read or that name no model (refused before the model is
  known: the client's own malformed request, answered with a 400 that says why);
- rate-limit refusals (the limit doing its job: a flood of them is what it is for);
- beyond ERRORS_PER_KEY_MINUTE rows per key and minute (api.services.error_logs).

The row is queued in the background once the error is answered: the request never waits on it.
What the client chose (the model's name above all, of any length) is cut to the log's columns as
the row is made (api.services.error_logs.ErrorRow), so no request can queue a row the database
refuses.
"""
from __future__ import annotations

import logging
import time
import weakref

from api import keys
from api.relay.job import Job
from api.services.billing.request_facts import new_settlement_id
from api.services.error_logs import SEND, SEND_DELAY_MS, ErrorLogQueue, ErrorRow
from api.services.store import Store
from api.upstream.errors import RelayError

log = logging.getLogger("api.relay")
NOT_LOGGED_CODES = frozenset({"rate_limit_exceeded"})
_queues: weakref.WeakKeyDictionary[Store, ErrorLogQueue] = weakref.WeakKeyDictionary()


def log_failure(job: Job, err: RelayError) -> None:
    """Queue the error row of this failed request (off the request path)."""
    if not job.model or err.code in NOT_LOGGED_CODES:
        return
    job.state.spawn(_queue(job, error_row(job, err)))


def error_row(job: Job, err: RelayError) -> ErrorRow:
    caller, facts, request = job.caller, job.facts, job.request
    client_request_id = request.get(keys.REQUEST_ID, "")
    channel = job.upstream if facts is not None and facts.channel_id else None  # the channel last tried
    token = caller.token
    return ErrorRow(
        request_id=facts.request_id if facts is not None else new_settlement_id(client_request_id),
        user_id=caller.user.id, username=caller.user.username, token_id=token.id if token else 0,
        token_name=token.name if token else f"playground-{job.group}", model=job.model, group=job.group,
        status=err.status, message=job.mask(err.message), error_type=str(err.type or ""),
        error_code=str(err.code or ""), channel_id=channel.id if channel else 0,
        channel_name=channel.name if channel else "", channel_type=channel.type if channel else 0,
        used_channels=list(facts.used_channels) if facts is not None else [], is_stream=job.is_stream,
        use_time=int(time.monotonic() - job.started), path=request.path, client_request_id=client_request_id,
        fallback=dict(facts.routing.get("fallback") or {}) if facts is not None else {})


async def _queue(job: Job, row: ErrorRow) -> None:
    store = job.state.quota.store
    queue = _queues.get(store)
    if queue is None:
        queue = _queues[store] = ErrorLogQueue(store)
    try:
        if await queue.push(row) == SEND:
            await job.request.config_dict[keys.JOBS].send("logs.write_errors", delay_ms=SEND_DELAY_MS)
    except Exception as exc:  # Redis away: the client has its answer; the row is not kept
        log.warning("error log row of request %s not queued: %r", row.client_request_id, exc)
