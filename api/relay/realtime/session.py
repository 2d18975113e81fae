"""A Realtime session once both ends are open: frames relayed both ways as they come, each `response.done`
billed as it arrives (its reservation settled with the response's usage, a new one taken for what
follows: docs/billing.md, Realtime sessions), and one ending for every way a session stops.

- the client leaves, or the session ends on the gateway's side (idle, too long, the server stopping, the
  balance used up): a response still in progress is cancelled upstream (`response.cancel`) and its
  `response.done`, which reports what it used, is awaited for CANCEL_GRACE seconds and billed;
- an input audio transcription (`conversation.item.input_audio_transcription.completed`) is billed the same
  way, at the transcription model's price (transcription.py);
- the gateway's side ends with an `error` event to the client, then a close frame with the reason;
- the upstream closes: the client gets its close code;
- while a response streams, the output it produced so far is its reservation's checkpoint (progress.py),
  written by the process's reservation renewals: a process that dies mid-response leaves the sweep to
  charge that output; a response that ends without its `response.done` pays that output too;
- whatever the ending, a reservation no response was settled on is refunded.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from api.i18n import language, translate
from api.middlewares import REDIS_DOWN
from api.relay import billing
from api.relay.admission import admit, new_facts, progress
from api.relay.job import Job, Outcome
from api.relay.realtime.hub import Hub
from api.relay.realtime.limits import RENEW_EVERY, Slot
from api.relay.realtime.progress import DELTAS, OutputSoFar
from api.relay.realtime.transcription import COMPLETED, SESSION_EVENTS, transcriber_of, transcription_usage
from api.relay.settling import settle, settle_shielded
from api.services.billing import pricing
from api.services.billing.realtime_pricing import AudioPrice, RealtimeUsage, audio_price_of
from api.services.cancellation import raise_if_cancelled
from api.services.model_name import ModelName
from api.upstream.errors import RelayError

log = logging.getLogger("api.relay")
CANCEL_GRACE = 5.0  # seconds a response in progress gets to report its usage once the session ends
# Server events the relay reads (every other frame goes through unparsed): base64 audio holds no quotes.
SNIFFED = ('"response.done"', '"response.created"', '"error"', f'"{COMPLETED}"', '"session.created"',
           '"session.updated"', *(f'"{kind}"' for kind in sorted(DELTAS)))
# Close codes the gateway may pass on from the upstream (RFC 6455 §7.4.1: 1005/1006/1015 are never sent).
SENDABLE = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014})
# ending → (close code, close reason); the gateway's own endings also send an `error` event first.
CLOSES: dict[str, tuple[int, str]] = {
    "client": (1000, ""), "idle": (1000, "idle timeout"), "expired": (1000, "session time limit reached"),
    "shutdown": (1001, "server shutting down"), "quota": (1008, "quota exhausted"),
    "cancelled": (1011, "session ended by the server"), "upstream": (1011, "upstream closed"),
}


def event_id() -> str:
    return "event_" + os.urandom(8).hex()


def error_event(code: str | int | None, message: str, error_type: str = "invalid_request_error",
                param: str | None = None, client_event: Any = None) -> str:
    """A server `error` event (the openai SDK's types/realtime/realtime_error_event.py)."""
    return orjson.dumps({"type": "error", "event_id": event_id(), "error": {
        "type": error_type, "code": code, "message": message, "param": param,
        "event_id": client_event if isinstance(client_event, str) else None}}).decode()


def sniff(data: str) -> tuple[str, dict[str, Any]]:
    """(event type, event) of a frame the relay reads; ("", {}) for the others."""
    if not any(marker in data for marker in SNIFFED):
        return "", {}
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        return "", {}
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "", {}
    return event["type"], event


class RealtimeSession:
    def __init__(self, job: Job, client: web.WebSocketResponse, upstream: aiohttp.ClientWebSocketResponse,
                 slot: Slot, hub: Hub, session_id: str, first: dict[str, Any] | None = None) -> None:
        self.job, self.client, self.upstream = job, client, upstream
        self.slot, self.hub, self.id = slot, hub, session_id
        self.first = first  # a client secret's configuration, sent upstream before anything else
        self.task: asyncio.Task[object] | None = None
        self.ending_task: asyncio.Task[None] | None = None
        self.started = self.last_activity = time.monotonic()
        self.responses = 0  # responses billed
        self.transcriptions = 0  # input audio transcriptions billed
        self.transcriber = ""  # the session's transcription model, as the upstream's session events say
        self.in_response = False
        self.output = OutputSoFar()  # of the response in progress: its reservation's checkpoint
        self.response_ended = asyncio.Event()
        self.response_ended.set()
        self.stopped = asyncio.Event()
        self.ending = ""
        self.refusal: RelayError | None = None  # why the next response could not be reserved
        self.lang = language(job.request)

    def stop(self, reason: str) -> None:
        if not self.ending:
            self.ending = reason
        self.stopped.set()

    # -- the session ------------------------------------------------------------------------------

    async def run(self) -> None:
        self.task = asyncio.current_task()
        self.hub.add(self)
        options = self.job.options
        idle, limit = options.get_int("RealtimeIdleTimeoutSeconds"), options.get_int("RealtimeMaxSessionSeconds")
        from_client = asyncio.create_task(self.from_client())
        from_upstream = asyncio.create_task(self.from_upstream())
        stopped = asyncio.create_task(self.stopped.wait())
        renew_at = self.started + RENEW_EVERY
        try:
            while not self.ending:
                wake = min(self.last_activity + idle, self.started + limit, renew_at)
                done, _ = await asyncio.wait({from_client, from_upstream, stopped},
                                             timeout=max(0.0, wake - time.monotonic()),
                                             return_when=asyncio.FIRST_COMPLETED)
                if from_client in done:
                    self.stop(_ended(from_client, "client"))
                elif from_upstream in done:
                    self.stop("upstream")
                elif not done:
                    now = time.monotonic()
                    if now >= self.started + limit:
                        self.stop("expired")
                    elif now >= self.last_activity + idle:
                        self.stop("idle")
                    elif now >= renew_at:
                        await self.slot.renew()
                        renew_at = now + RENEW_EVERY
        except asyncio.CancelledError:
            self.stop("cancelled")
            raise
        finally:
            # Its own task: a handler cancelled meanwhile (its client gone) still winds down, settles, lets go.
            self.ending_task = asyncio.get_running_loop().create_task(
                self.end(from_client, from_upstream, stopped, idle, limit))
            await asyncio.shield(self.ending_task)

    async def end(self, from_client: asyncio.Task[str], from_upstream: asyncio.Task[str],
                  stopped: asyncio.Task[Any], idle: int, limit: int) -> None:
        from_client.cancel()
        stopped.cancel()
        try:
            await self.wind_down(from_upstream, idle, limit)
        finally:
            from_upstream.cancel()
            await asyncio.gather(from_client, from_upstream, stopped, return_exceptions=True)
        try:
            await self.close_both()
        finally:
            try:
                await settle(self.job, self.cut_off())  # None: no response settled on it, refunded
                await self.slot.release()
            finally:
                self.hub.discard(self)

    async def wind_down(self, from_upstream: asyncio.Task[str], idle: int, limit: int) -> None:
        """The gateway's reason told to the client; a response in progress cancelled and billed."""
        said = {"idle": ("idle_timeout", "relay_realtime_idle", idle),
                "expired": ("session_expired", "relay_realtime_expired", limit),
                "shutdown": ("server_shutdown", "relay_realtime_shutdown", 0)}.get(self.ending)
        if said is not None:
            code, key, seconds = said
            await self.forward(error_event(code, translate(key, self.lang, seconds=seconds)))
        elif self.ending == "quota" and self.refusal is not None:
            await self.forward(error_event(self.refusal.code, self.refusal.message, self.refusal.type))
        if self.in_response and not from_upstream.done():
            with contextlib.suppress(ConnectionError, aiohttp.ClientError, RuntimeError):
                await self.upstream.send_str(orjson.dumps({"type": "response.cancel", "event_id": event_id()}).decode())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CANCEL_GRACE):
                    await self.response_ended.wait()

    async def close_both(self) -> None:
        code, reason = CLOSES.get(self.ending, (1011, ""))
        if self.ending == "upstream" and self.upstream.close_code in SENDABLE:
            code = self.upstream.close_code or code
        with contextlib.suppress(Exception):
            if not self.upstream.closed:
                await self.upstream.close(code=1000)
        with contextlib.suppress(Exception):
            if not self.client.closed:
                await self.client.close(code=code, message=reason.encode())

    # -- the two directions -----------------------------------------------------------------------

    async def from_client(self) -> str:
        """Client frames to the upstream (after a client secret's configuration); "upstream" when the
        upstream can no longer take them."""
        if self.first is not None:
            try:
                await self.upstream.send_str(orjson.dumps({**self.first, "event_id": event_id()}).decode())
            except (ConnectionError, aiohttp.ClientError):
                return "upstream"
        async for msg in self.client:
            if msg.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                break
            self.last_activity = time.monotonic()
            try:
                if msg.type == aiohttp.WSMsgType.BINARY:
                    await self.upstream.send_bytes(msg.data)
                    continue
                data = await self.client_event(msg.data)
                if data is not None:
                    await self.upstream.send_str(data)
            except (ConnectionError, aiohttp.ClientError):
                return "upstream"
        return "client"

    async def client_event(self, data: str) -> str | None:
        """The event to send on (None: answered here). The session's model is the one it was opened
        and priced with: a `session.update` naming another is refused; naming it, it is sent as the
        channel names it."""
        if '"session.update"' not in data:
            return data
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            return data  # the upstream answers it
        session = event.get("session") if isinstance(event, dict) and event.get("type") == "session.update" else None
        if not isinstance(session, dict) or "model" not in session:
            return data
        job = self.job
        if session["model"] not in (job.model, job.name.sent):
            await self.forward(error_event("invalid_value", translate("relay_realtime_model_fixed", self.lang,
                                                                      model=job.model),
                                           param="session.model", client_event=event.get("event_id")))
            return None
        session["model"] = job.name.sent
        return orjson.dumps(event).decode()

    async def from_upstream(self) -> str:
        async for msg in self.upstream:
            if msg.type == aiohttp.WSMsgType.BINARY:
                self.last_activity = time.monotonic()
                await self.forward(msg.data)
                continue
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            self.last_activity = time.monotonic()
            kind, event = sniff(msg.data)
            if kind in DELTAS:
                self.output.add(kind, event)
                self.job.produced = self.output.tokens  # read by the next renewal of the reservation
            elif kind == "response.created":
                self.in_response = True
                self.output.reset()
                self.response_ended.clear()
            elif kind == "response.done":  # billed before the client hears of it
                await self.response_done(event)
                raise_if_cancelled()
            elif kind == COMPLETED:
                await self.transcribed(event)
                raise_if_cancelled()
            elif kind in SESSION_EVENTS:
                model = transcriber_of(event.get("session"))
                self.transcriber = self.transcriber if model is None else model
            await self.forward(self.job.mask(msg.data) if kind == "error" else msg.data)
        return "upstream"

    async def forward(self, data: str | bytes) -> None:
        """To the client while it is there (a client gone is the other direction's to notice)."""
        if self.client.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            if isinstance(data, bytes):
                await self.client.send_bytes(data)
            else:
                await self.client.send_str(data)

    # -- billing ----------------------------------------------------------------------------------

    async def response_done(self, event: dict[str, Any]) -> None:
        self.output.reset()  # the usage reported replaces the estimate; the next reservation starts at 0
        try:
            response = event.get("response")
            response = response if isinstance(response, dict) else {}
            usage = RealtimeUsage.from_realtime(response.get("usage"))
            if usage is not None and self.job.charge is not None:
                await self.bill(usage, response.get("status"))
        finally:
            self.in_response = False
            self.response_ended.set()

    async def bill(self, usage: RealtimeUsage, status: Any) -> None:
        """The response settled on the open reservation (a consume log of its own), then a new
        reservation for what follows; refused (balance, limits), the session ends."""
        job = self.job
        facts = job.facts
        assert facts is not None
        self.responses += 1
        facts.routing["realtime"] = {"session": self.id, "response": self.responses, **usage.details(),
                                     **(job.audio or AudioPrice()).log_fields()}
        if isinstance(status, str) and status != "completed":
            facts.incomplete = f"response {status}"
        quota = billing.final(job, usage)
        # A copy: a settlement retried in the background keeps this response's charge and facts.
        await self.settle_copy(dataclasses.replace(job), Outcome(self.client, usage, quota))
        await self.next_reservation()

    async def transcribed(self, event: dict[str, Any]) -> None:
        """An input audio transcription settled on the open reservation at the transcription model's price (the
        session's own when that model has none), a consume log of its own under that model; then a new one."""
        job, facts = self.job, self.job.facts
        usage = transcription_usage(event)
        if usage is None or job.charge is None or facts is None:
            return
        model, price = self.transcriber or job.model, job.price
        try:
            price = pricing.resolve_configured(job.options, model, job.group)
        except pricing.PriceNotConfigured:
            model = job.model
        billed = dataclasses.replace(job, name=ModelName(model), price=price, audio=audio_price_of(job.options, model))
        self.transcriptions += 1
        item = event.get("item_id")
        billed.facts = dataclasses.replace(
            new_facts(billed), request_id=facts.request_id, started=facts.started, channel_id=facts.channel_id,
            used_channels=facts.used_channels, first_response_ms=facts.first_response_ms,
            routing={**facts.routing, "realtime": {
                "session": self.id, "transcription": self.transcriptions, "session_model": job.model,
                "item": item[:64] if isinstance(item, str) else "", **usage.details(),
                **(billed.audio or AudioPrice()).log_fields()}})
        await self.settle_copy(billed, Outcome(self.client, usage, billing.final(billed, usage)))
        await self.next_reservation()

    async def settle_copy(self, billed: Job, outcome: Outcome) -> None:
        """The open reservation settled by `billed`, a copy of the session's job. Until it is closed (sent
        again in the background while Redis is unreachable), its checkpoint is the copy's own output, not
        that of what the session's job goes on to reserve."""
        facts = billed.facts
        assert facts is not None
        self.job.state.keeper.hold(facts.request_id, facts.user_id, lambda: progress(billed))
        await settle_shielded(billed, outcome)

    def cut_off(self) -> Outcome | None:
        """A response that ended without its `response.done` (the upstream gone mid-response, or no answer
        to the cancel within CANCEL_GRACE) pays the output relayed of it, as estimated for its checkpoint
        (progress.py), audio at its own price — as a stream cut short pays what it delivered; None when
        nothing was relayed."""
        job, facts, output = self.job, self.job.facts, self.output
        if not self.in_response or not output.tokens or job.charge is None or facts is None:
            return None
        usage = RealtimeUsage(0, output.tokens, audio_output_tokens=output.audio_tokens)
        self.responses += 1
        facts.routing["realtime"] = {"session": self.id, "response": self.responses, **usage.details(),
                                     **(job.audio or AudioPrice()).log_fields()}
        facts.incomplete = "the response ended before the upstream reported its usage"
        return Outcome(self.client, usage, billing.final(job, usage))

    async def next_reservation(self) -> None:
        job = self.job
        previous = job.facts
        assert previous is not None
        # A response still in progress (an input transcription settled meanwhile) goes on on the new one.
        job.charge, job.produced = None, self.output.tokens or None
        facts = new_facts(job)
        facts.channel_id, facts.used_channels, facts.name = previous.channel_id, previous.used_channels, previous.name
        facts.routing = {k: v for k, v in previous.routing.items() if k != "realtime"}  # a multi-key channel's key
        job.facts, job.pre = facts, billing.pre(job)
        try:
            job.charge = await admit(job)
        except RelayError as err:
            log.info("realtime session %s ends: its next response could not be reserved (%s)", self.id, err.code)
            self.refusal = err
            self.stop("quota")
        except REDIS_DOWN as exc:  # no balance to reserve against: the session cannot go on unbilled
            log.warning("realtime session %s ends: Redis unreachable (%s)", self.id, exc)
            self.refusal = RelayError(503, translate("service_unavailable", self.lang), "new_api_error",
                                      "service_unavailable", local=True)
            self.stop("quota")


def _ended(task: asyncio.Task[str], default: str) -> str:
    if task.cancelled() or task.exception() is not None:
        return default
    return task.result()
