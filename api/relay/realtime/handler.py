"""`GET /v1/realtime?model=…`: a Realtime session opened the way every relay request starts — the key
(an `Authorization` header, or a browser's `openai-insecure-api-key.<key>` subprotocol) checked before the
upgrade, so a refusal is a plain HTTP answer in OpenAI's error shape and nothing is opened upstream; then
the relay's lifecycle (api/relay/lifecycle.py) with the session's own steps: the group, the model's
permission, its price and a channel serving it; a place among the key's and the user's open sessions; the
first response's reservation (api/relay/admission.py); then the channel's WebSocket (api/relay/attempts.py
with the Route of upstream.py) and only then the client's upgrade. A failure before the upgrade refunds
the reservation at once; after it, the session settles its responses itself.
"""
from __future__ import annotations

import contextlib
import logging
import os

from aiohttp import web

from api.relay.admission import admission
from api.relay.attempts import Route, relay_with_retries
from api.relay.auth import parse_key
from api.relay.caller import caller_of
from api.relay.job import Job, Outcome
from api.relay.lifecycle import Flow, serve
from api.relay.realtime.hub import HUB, Hub, close_sessions
from api.relay.realtime.limits import Refused, Slot, take
from api.relay.realtime.secrets import create_client_secret, first_update, is_secret, resolve
from api.relay.realtime.session import RealtimeSession
from api.relay.realtime.upstream import MAX_FRAME, UPSTREAM
from api.relay.refusals import refuse
from api.relay.state import relay_state
from api.services.billing.realtime_pricing import audio_price_of
from api.services.model_name import ModelName
from api.upstream.base import RelayMode, TokenUsage

log = logging.getLogger("api.relay")
ROUTE = "/v1/realtime"
SUBPROTOCOL = "realtime"  # the subprotocol browsers offer beside the key (OpenAI's Realtime WebSocket guide)
HEARTBEAT = 30.0  # seconds between pings to the client (a connection that stops answering is closed)


async def realtime(request: web.Request) -> web.StreamResponse:
    state = relay_state(request)
    hub = request.config_dict[HUB]
    key, pinned_text = parse_key(request)
    grant = await resolve(state.auth.store, key) if is_secret(key) else None
    if is_secret(key) and grant is None:  # a client secret unknown or expired
        raise refuse(request, 401, "relay_invalid_key", "invalid_api_key", "invalid_request_error")
    caller = (await caller_of(request, state, grant.key, "") if grant is not None else
              await caller_of(request, state, key, pinned_text))
    client = web.WebSocketResponse(protocols=(SUBPROTOCOL,), max_msg_size=MAX_FRAME, heartbeat=HEARTBEAT)
    if not client.can_prepare(request).ok:
        raise refuse(request, 400, "relay_realtime_not_websocket", "websocket_required", "invalid_request_error")
    model = request.query.get("model", "").strip() or (grant.model if grant is not None else "")
    if not model:
        raise refuse(request, 400, "relay_model_required", "model_required", "invalid_request_error")
    if grant is not None and model != grant.model:
        raise refuse(request, 400, "relay_realtime_secret_model", "invalid_value", "invalid_request_error",
                     model=grant.model)
    if hub.stopping:
        raise refuse(request, 503, "service_unavailable", "service_unavailable")
    options = state.options
    job = Job(request, state, options, RelayMode.REALTIME, ROUTE, caller, {"model": model})
    job.name = ModelName(model)
    token_id = caller.token.id if caller.token else 0
    session_id = "rt_" + os.urandom(12).hex()
    places: list[Slot] = []

    async def admit(job: Job) -> None:
        """A place among the key's and the user's open sessions, then the first response's reservation."""
        slot = await take(state.auth.store, caller.user.id, token_id, session_id,
                          options.get_int("RealtimeMaxSessionsPerKey"), options.get_int("RealtimeMaxSessionsPerUser"))
        if isinstance(slot, Refused):
            raise refuse(request, 429, "relay_realtime_user_too_many" if slot.per_user else "relay_realtime_too_many",
                         "too_many_sessions", "rate_limit_error", limit=slot.limit)
        places.append(slot)
        job.audio = audio_price_of(options, model)
        await admission(job)

    async def open_both(job: Job, route: Route) -> Outcome:
        """The channel's WebSocket (the attempts over channels), then the client's upgrade: a failure of
        either leaves nothing open, and the lifecycle refunds the reservation."""
        upstream = (await relay_with_retries(job, route)).result
        try:
            await client.prepare(request)
        except BaseException:
            with contextlib.suppress(Exception):
                await upstream.close()
            raise
        return Outcome(client, TokenUsage(0, 0), 0, result=upstream)

    async def converse(job: Job, opened: Outcome) -> None:
        """The session, which settles its responses' reservations itself (api/relay/realtime/session.py)."""
        first = first_update(grant) if grant is not None else None
        await RealtimeSession(job, client, opened.result, places[0], hub, session_id, first).run()

    try:
        await serve(job, Flow(UPSTREAM, attempts=open_both, admit=admit, session=converse, logged=False))
        return client
    finally:
        if places:
            await places[0].release()


def setup_realtime(v1: web.Application) -> None:
    """`GET /realtime` and `POST /realtime/client_secrets` on the /v1 sub-app; its sessions closed when the
    server stops."""
    v1[HUB] = Hub()
    v1.router.add_get("/realtime", realtime)
    v1.router.add_post("/realtime/client_secrets", create_client_secret)
    v1.on_shutdown.append(close_sessions)
