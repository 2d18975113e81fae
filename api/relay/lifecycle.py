"""The life of a relay request, one for every kind the relay serves (chat and the other OpenAI modes,
the clients' own formats, task submissions, Realtime sessions); docs/billing.md is its contract.

The caller knows who is calling (api/relay/caller.py) and what is asked: it builds the Job and names
its kind's Flow. From there the lifecycle owns the steps, in this order:

1. read        the kind's own reading of the request, if it has one (chat: the parameters, the model)
2. group       the key's group (or the playground's choice), if the user may use it
3. permission  the key's model limits, then the kind's own checks (chat: sensitive words)
4. admission   the price, a serving channel, the prompt, the rate limits and the reservation in one
               Redis call (api/relay/admission.py), after what the kind takes first (a Realtime
               session's place among the open ones)
5. channel     the first channel: the session's pin, else the index's choice (api/relay/attempts.py)
6. attempts    the kind's own, over its Route (by default api.relay.attempts.relay_with_retries)
7. settlement  in a finally: the exact amount, or the reservation back (api/relay/settling.py); a
               session that takes the outcome on (Realtime) settles its own
8. failure     the error log row of a request that failed for good (api/relay/failure_log.py)
9. metrics     the request counted and timed, its errors by kind (api/upstream/metrics.py)
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from api.middlewares import RETRY_AFTER
from api.relay.admission import admission, check_model_allowed, usable_group
from api.relay.attempts import Route, first_channel, relay_with_retries
from api.relay.disconnects import client_gone
from api.relay.failure_log import log_failure
from api.relay.job import Job, Outcome
from api.relay.refusals import refuse
from api.relay.settling import settle_shielded
from api.upstream.errors import RelayError

Check = Callable[[Job], None]


@dataclass(frozen=True, slots=True)
class Flow:
    """What a kind of request brings to the lifecycle; the rest is the lifecycle's.

    route     how it tries channels: one attempt on one channel, which channels, what a failure means
    attempts  the attempts over channels from `job.channel` on (a chain of models would wrap the default)
    read      the request's own checks before its group (chat: the body's parameters, the model named)
    permits   checks after the key's model limits (chat: sensitive words)
    admit     the admission (a kind that takes something of its own first wraps the default)
    watched   a client that leaves cancels the attempts (and a non-streamed answer that comes after it
              left is refunded); a server that stops before the answer answers 503, refunded
    session   what takes a successful outcome on and settles its own reservations (a Realtime
              session); without one, the lifecycle settles the outcome
    settled   what runs once the request is settled, whatever its outcome (chat: the answer's reasoning
              state kept, in the background, for a client that drops it)
    logged    whether a failure writes its error log row
    metered   whether the request is counted in the metrics (its errors by kind, its duration)
    """

    route: Route
    attempts: Callable[[Job, Route], Awaitable[Outcome]] = relay_with_retries
    read: Check | None = None
    permits: tuple[Check, ...] = ()
    admit: Callable[[Job], Awaitable[None]] = admission
    watched: bool = False
    session: Callable[[Job, Outcome], Awaitable[None]] | None = None
    settled: Callable[[Job], None] | None = None
    logged: bool = True
    metered: bool = True


class Declined(Exception):
    """A request the upstream turned down in its own words, answered as they are rather than as a relay
    error (midjourney-proxy's codes): `error` is what its error log row keeps."""

    error: RelayError


async def serve(job: Job, flow: Flow) -> Outcome:
    """The request from its group to its metrics (the steps above): the outcome of its attempts,
    settled; or the refusal or failure raised, after its reservation went back."""
    request, state, caller = job.request, job.state, job.caller
    # The key's group, or the playground's `group` field (not an OpenAI field: never sent upstream).
    wanted = caller.token.group if caller.token else str(job.body.pop("group", "") or "")
    status = 500
    try:
        if flow.read is not None:
            flow.read(job)
        job.group = usable_group(request, job.options, caller.user, wanted)
        check_model_allowed(job)
        for permit in flow.permits:
            permit(job)
        await flow.admit(job)
        outcome: Outcome | None = None
        try:
            job.channel = first_channel(job, flow.route)
            if not flow.watched:
                outcome = await flow.attempts(job, flow.route)
            else:
                try:
                    with state.disconnects.watch(request):  # a client that leaves cancels the upstream call
                        outcome = await flow.attempts(job, flow.route)
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
            if outcome is None or flow.session is None:
                await settle_shielded(job, outcome or job.partial)
            if flow.settled is not None:
                flow.settled(job)
        status = outcome.response.status
        if flow.session is not None:
            await flow.session(job, outcome)
        return outcome
    except RelayError as err:
        status = err.status
        if flow.metered:
            state.metrics.error(job.route, _label(job), job.channel.id if job.channel else 0,
                                err.code and str(err.code) or err.type)
        if flow.logged:
            log_failure(job, err)
        raise
    except Declined as declined:
        if flow.logged:
            log_failure(job, declined.error)
        raise
    finally:
        if flow.metered:
            facts = job.facts
            frt = facts.first_response_ms / 1000 if facts and facts.first_response_ms else None
            state.metrics.request_done(job.route, _label(job), facts.channel_id if facts else 0, status,
                                       time.monotonic() - job.started, job.is_stream or flow.session is not None,
                                       frt)


def _label(job: Job) -> str:
    """The model as a metrics label once a channel is known to serve it (a client's made-up names
    never become labels)."""
    return job.model if job.facts is not None else "-"
