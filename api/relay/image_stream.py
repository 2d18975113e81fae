"""A streamed image answer (`stream: true` on /v1/images/generations and /v1/images/edits): OpenAI's
named server-sent events `image_generation.partial_image` / `image_generation.completed` and
`image_edit.partial_image` / `image_edit.completed` (developers.openai.com/api/reference/resources/
images/generation-streaming-events and …/edit-streaming-events; openai-python src/openai/types/
image_gen_stream_event.py, image_edit_stream_event.py), relayed to the client as they come, each with
its `event:` line, and no `[DONE]` (the stream ends after the completed event, as OpenAI's does).

An upstream that answers whole (Gemini, Imagen, DashScope, a gateway that ignores `stream`) is told to
the client in the same events (`whole_as_events`): no partial images, one completed event per image.

Billing (docs/billing.md, Image models): the completed event's `usage` (the last one when there are
several) is the request's usage. A stream cut before its completed event (the upstream stops, an
idle timeout, the client goes away, the server stops) delivered no finished image: a model priced per
call is refunded; one priced by ratio pays its prompt as counted locally (the partial images carry no
token count); a stream cut before any event is a failed attempt, refunded.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.relay import billing
from api.relay.job import Job, Outcome
from api.relay.streaming import cut_short, open_stream
from api.services.billing.request_facts import answer_ms
from api.upstream import client
from api.upstream.base import RelayMode, StreamDecoder, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.image_usage import image_usage
from api.upstream.payloads import EVENT_NOT_OBJECT, MalformedEvent, json_object, openai_error
from api.upstream.sse import SSEError, SSEEvent, encode_data


class ImageEvents:
    """What the events of one stream said: how many images were completed, the usage reported."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.state = job.stream = StreamState()
        self.completed = 0
        wanted = job.body.get("n")
        self.wanted = wanted if isinstance(wanted, int) and wanted > 0 else 1

    def frames(self, events: list[SSEEvent]) -> bytes:
        """The client's frames of these upstream events; an upstream error event raises its error."""
        out: list[bytes] = []
        for event in events:
            if event.is_done:
                self.state.done = True
                continue
            try:
                data = json_object(event.data, EVENT_NOT_OBJECT)
            except MalformedEvent:
                self.state.malformed += 1
                continue
            if "error" in data:
                raise openai_error(502, event.data)
            name = event.event or str(data.get("type") or "")
            self.state.events += 1
            if name.endswith(".completed"):
                self.completed += 1
                self.state.usage = image_usage(data.get("usage")) or self.state.usage
                self.state.done = self.completed >= self.wanted
            out.append((b"event: " + name.encode() + b"\n" if name else b"") + b"data: " + event.data + b"\n\n")
        return b"".join(out)

    def outcome(self, out: web.StreamResponse | None) -> Outcome:
        """Usage and quota of what was delivered (module docstring)."""
        job, state = self.job, self.state
        usage = state.usage if state.usage is not None else TokenUsage(job.prompt_tokens, 0)
        price = job.price
        produced = self.completed > 0 if price is not None and price.per_call else state.events > 0
        return Outcome(out or web.StreamResponse(), usage, billing.final(job, usage), produced=produced)


def whole_as_events(job: Job, answer: dict[str, Any]) -> bytes:
    """A whole images answer as the completed events of a stream: one per image, each with the answer's
    own fields (size, quality, background, output_format when given), the usage on the last one (the
    request's, once). An image given as a URL (an upstream that hands out no bytes) keeps its `url`."""
    name = "image_edit.completed" if job.mode == RelayMode.IMAGES_EDIT else "image_generation.completed"
    created = answer.get("created") if isinstance(answer.get("created"), int) else int(time.time())
    shared = {key: answer[key] for key in ("size", "quality", "background", "output_format")
              if isinstance(answer.get(key), str)}
    images = [item for item in answer.get("data") or () if isinstance(item, dict)]
    out: list[bytes] = []
    for index, item in enumerate(images):
        event: dict[str, Any] = {"type": name, "created_at": created, **shared}
        for key in ("b64_json", "url", "revised_prompt"):
            if isinstance(item.get(key), str):
                event[key] = item[key]
        if index == len(images) - 1 and isinstance(answer.get("usage"), dict):
            event["usage"] = answer["usage"]
        out.append(b"event: " + name.encode() + b"\n" + encode_data(event))
    return b"".join(out)


async def relay_events(job: Job, resp: client.Answer, decoder: StreamDecoder) -> Outcome:
    facts = job.facts
    assert facts is not None
    events = ImageEvents(job)
    state = events.state
    out: web.StreamResponse | None = None
    gone = False

    async def forward(frames: bytes) -> None:
        nonlocal out
        if frames:
            out = out or await open_stream(job)
            await out.write(frames)

    job.state.metrics.active_streams += 1
    try:
        try:
            async for chunk in client.iter_stream(resp):
                if not facts.first_response_ms:
                    facts.first_response_ms = answer_ms(job.started, time.monotonic())
                await forward(events.frames(decoder.feed(chunk)))
                if state.done:
                    break
            else:
                await forward(events.frames(decoder.close()))
                if events.completed:  # the upstream closed the stream after its images
                    state.done = True
                else:
                    raise client.StreamInterrupted("the upstream ended the stream before its completed event")
        except (client.StreamInterrupted, RelayError, SSEError) as exc:
            cut_short(job, exc, state.events, opened=out is not None)
        except ConnectionResetError:
            gone = True
            facts.incomplete = "the client went away"
        except asyncio.CancelledError:
            if not job.state.disconnects.server_stopped(job.request):
                facts.incomplete = "the client went away"
                job.partial = events.outcome(out)
                raise
            facts.incomplete = "the server is shutting down"
    finally:
        job.state.metrics.active_streams -= 1
        if state.done and not facts.incomplete:
            resp.release()
        else:
            resp.close()
    if not gone:
        try:
            out = out or await open_stream(job)
            await _finish(job, out)
        except ConnectionResetError:
            if not facts.incomplete:
                facts.incomplete = "the client went away"
    return events.outcome(out)


async def _finish(job: Job, out: web.StreamResponse) -> None:
    """The end of the client's stream: an error event when it was cut short."""
    assert job.facts is not None
    if job.facts.incomplete:
        message = translate("relay_stream_interrupted", language(job.request), reason=job.facts.incomplete)
        error: dict[str, Any] = RelayError(502, message, "upstream_error", "stream_interrupted").to_body(
            job.request.get(keys.REQUEST_ID, ""))
        await out.write(b"event: error\n" + encode_data(error))
    await out.write_eof()
