"""A streamed answer: the upstream's events read, converted to the client's format, counted and
written as they come; what a stream produced so far is what it is billed for (docs/billing.md,
Partial answers)."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.relay import billing, kept_reasoning
from api.relay.inbound.base import StreamWriter
from api.relay.job import Job, Outcome, answer_headers
from api.services.billing.request_facts import answer_ms
from api.upstream import client
from api.upstream.base import AnswerReader, Passthrough, StreamDecoder, StreamState, TokenUsage, client_wants_usage
from api.upstream.errors import RelayError
from api.upstream.payloads import MalformedEvent
from api.upstream.sse import SSEError, SSEEvent, encode_data, encode_done, encode_many

log = logging.getLogger("api.relay")

# A native stream's events and raw bytes → the bytes its client gets (Adaptor.native_frames).
NativeFrames = Callable[[list[SSEEvent], bytes], bytes]


# -- streams ------------------------------------------------------------------------------------------


def stream_headers(job: Job, content_type: str = "text/event-stream") -> dict[str, str]:
    """The headers of a streamed answer (opened here, or a whole one told as a stream's events)."""
    return {"Content-Type": content_type, "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
            "Access-Control-Allow-Origin": "*", **answer_headers(job)}


async def open_stream(job: Job, content_type: str = "text/event-stream") -> web.StreamResponse:
    headers = stream_headers(job, content_type)
    response = web.StreamResponse(status=200, headers=headers)
    await response.prepare(job.request)
    return response


async def relay_stream(job: Job, adaptor: AnswerReader, resp: client.Answer, decoder: StreamDecoder,
                       native: bool = False, frames_of: NativeFrames | None = None) -> Outcome:
    """Chunks go to the client as they arrive; usage is read or counted on the way. An upstream
    that stops early, an idle timeout, a malformed event or a client that leaves: the client is
    charged for what the upstream produced (nothing produced = a failed attempt, refunded).
    In the client's own format: through its stream writer, or, from a channel of that format,
    the upstream's bytes as they came (converted only to be counted), or as `frames_of` reframes
    them for the client."""
    facts, metrics = job.facts, job.state.metrics
    assert facts is not None
    state = job.stream = StreamState(include_usage=client_wants_usage(job.body))
    out: web.StreamResponse | None = None
    gone = False
    writer = job.inbound.writer(job.model, job.prompt_tokens) if job.inbound is not None and not native else None
    held: list[bytes] = []  # native: upstream bytes not yet written (held until the first event converts)
    kept = job.kept if not native else None  # the reasoning state it leaves (api/relay/kept_reasoning.py)

    async def forward(events: list[SSEEvent], raw: bytes = b"") -> None:
        """Convert, count and write; what converted before a bad event is still written."""
        nonlocal out
        frames: list[Any] = []
        failed = True
        try:
            convert_events(adaptor, events, state, frames, parsed=writer is not None)
            failed = False
        finally:
            if native:
                relayed = frames_of(events, raw) if frames_of is not None else raw
                # An event that failed to convert is the upstream's error event: masked like any upstream error.
                held.append(job.mask_bytes(relayed) if failed else relayed)
                if frames or out is not None:
                    out = out or await open_stream(job)
                    await out.write(b"".join(held))
                    held.clear()
            elif frames:
                if kept is not None:
                    kept.add(frames)
                out = out or await open_stream(job, writer.content_type if writer is not None else "text/event-stream")
                await out.write(writer.frames(frames) if writer is not None else encode_many(frames))

    metrics.active_streams += 1
    try:
        try:
            async for chunk in client.iter_stream(resp):
                if not facts.first_response_ms:
                    facts.first_response_ms = answer_ms(job.started, time.monotonic())
                await forward(decoder.feed(chunk), chunk)
                if state.done:
                    break
            else:
                await forward(decoder.close())
                if not state.done:
                    raise client.StreamInterrupted("the upstream ended the stream without its end marker")
        except (client.StreamInterrupted, RelayError, SSEError) as exc:
            cut_short(job, exc, state.events, opened=out is not None)
        except ConnectionResetError:
            gone = True
            facts.incomplete = "the client went away"
        except asyncio.CancelledError:  # the client went away, or the server is stopping
            if not job.state.disconnects.server_stopped(job.request):
                facts.incomplete = "the client went away"
                job.partial = stream_outcome(job, out, state)
                raise
            facts.incomplete = "the server is shutting down"  # the stream ends with that error, billed as usual
    finally:
        metrics.active_streams -= 1
        if state.malformed:
            log.warning("request %s: %d malformed upstream stream events skipped (channel %s)",
                        facts.request_id, state.malformed, facts.channel_id)
        if state.done and not facts.incomplete:
            resp.release()
        else:
            resp.close()  # cancels the upstream request
    if out is None and not gone:
        try:
            out = await open_stream(job, writer.content_type if writer is not None else "text/event-stream")
        except ConnectionResetError:
            gone = True
    if not gone and out is not None:
        await finish_stream(job, out, state, produced_usage(state, job.prompt_tokens), writer)
    if kept is not None and state.done and not facts.incomplete:
        kept_reasoning.keep_stream(job)
    return stream_outcome(job, out, state)


def convert_events(adaptor: AnswerReader, events: list[SSEEvent], state: StreamState, frames: list[Any],
                   parsed: bool = False) -> None:
    """Upstream events → frames to write (appended to `frames` as they convert, so what converted
    before a bad event is kept). An event that only reported usage still counts as produced; an
    event that cannot be read at all is skipped (and counted in `state.malformed`)."""
    for event in events:
        reported = state.usage
        try:
            chunks = adaptor.convert_stream_event(event, state)
        except MalformedEvent:  # one unreadable line: skipped, the rest of the answer still comes
            state.malformed += 1
            continue
        if chunks:
            count_chunks(state, chunks, frames, parsed)
        elif state.usage is not reported:
            state.events += 1


def count_chunks(state: StreamState, chunks: list[Any], frames: list[Any], parsed: bool = False) -> None:
    """The pipeline's own count of what a stream produced (adaptors only convert): the chunks'
    text and tool calls go to the local counter, the last finish reason is kept, and the frames to
    write are appended to `frames` (the parsed chunks when `parsed`: a stream writer converts them)."""
    counter = state.counter
    for item in chunks:
        if isinstance(item, Passthrough):
            chunk, frame = item.chunk, item.data
        else:
            chunk = frame = item
        state.events += 1
        if chunk.get("usage"):
            state.usage_sent = True
        choices = chunk.get("choices")
        if choices:
            counter.add_choices(choices)
            for choice in choices:
                if choice.get("finish_reason"):
                    state.finish_reason = choice["finish_reason"]
        frames.append(chunk if parsed else frame)


def produced_usage(state: StreamState, prompt_tokens: int) -> TokenUsage:
    """What a stream is billed for. Its final usage once the upstream reported it (with or after
    the finish); a stream cut before that: the prompt, cache reads and writes as the upstream
    reported them on the way (Anthropic's `message_start`, Gemini's usage on every chunk), else
    the gateway's own prompt count; the output as counted here, or the upstream's running count
    when that is higher (output it does not stream, such as Gemini's thoughts)."""
    usage, counted = state.usage, state.counter.total()
    if usage is None:
        return TokenUsage(prompt_tokens, counted)
    if state.done or state.finish_reason is not None:
        return usage
    return replace(usage, completion_tokens=max(usage.completion_tokens, counted))


def cut_short(job: Job, exc: client.StreamInterrupted | RelayError | SSEError, events: int, opened: bool) -> None:
    """A stream the upstream broke: before anything came, the request's error (another channel may
    serve it); after, why it stopped, in `facts.incomplete` — shown to the client in its stream's
    error event and stored in the consume log, masked first (then cut, so no cut-off part of a secret
    escapes the masking)."""
    assert job.facts is not None
    if isinstance(exc, client.StreamInterrupted):
        if events == 0:
            raise RelayError(502, exc.reason, "upstream_error", "stream_interrupted") from None
        job.facts.incomplete = job.mask(exc.reason)[:300]
        return
    if events == 0 and not opened:
        raise exc if isinstance(exc, RelayError) else RelayError(
            502, str(exc), "upstream_error", "bad_response_body") from None
    job.facts.incomplete = job.mask(f"bad upstream stream: {exc}")[:300]


def stream_outcome(job: Job, out: web.StreamResponse | None, state: StreamState) -> Outcome:
    """Usage and quota of what the upstream produced so far (nothing produced: not billed)."""
    usage = produced_usage(state, job.prompt_tokens)
    return Outcome(out or web.StreamResponse(), usage, billing.final(job, usage), produced=state.events > 0)


async def finish_stream(job: Job, out: web.StreamResponse, state: StreamState, usage: TokenUsage,
                        writer: StreamWriter | None = None) -> None:
    error = None
    if job.facts is not None and job.facts.incomplete:
        message = translate("relay_stream_interrupted", language(job.request), reason=job.facts.incomplete)
        error = RelayError(502, message, "upstream_error", "stream_interrupted")
    tail: list[bytes] = []
    if writer is not None:  # the client's format, converted: its closing frames
        tail.append(writer.finish(usage, error))
    elif job.inbound is not None:  # the client's format, relayed: the upstream's end frames went through
        if error is not None:
            tail.append(job.inbound.error_frame(error))
    else:
        if state.include_usage and not state.usage_sent:
            tail.append(encode_data({"id": f"chatcmpl-{job.request.get(keys.REQUEST_ID, '')}",
                                     "object": "chat.completion.chunk", "created": int(time.time()),
                                     "model": job.model, "choices": [], "usage": usage.to_openai()}))
        if error is not None:
            tail.append(encode_data(error.to_body(job.request.get(keys.REQUEST_ID, ""))))
        tail.append(encode_done())
    try:
        await out.write(b"".join(tail))
        await out.write_eof()
    except ConnectionResetError:
        if job.facts is not None and not job.facts.incomplete:
            job.facts.incomplete = "the client went away"
