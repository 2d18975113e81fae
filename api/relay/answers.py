"""A complete (non-streamed) upstream answer read into the client's answer and the usage it is settled on
(api/relay/billing.py settles it): one reader per `Reading`, named by the endpoint's row (api/relay/modes.py)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson
from aiohttp import web

from api.relay import kept_reasoning
from api.relay.image_stream import whole_as_events
from api.relay.job import Job, answer_headers
from api.relay.modes import MODES, Reading, text_field
from api.relay.streaming import stream_headers
from api.upstream import client
from api.upstream.base import AnswerReader, TokenUsage
from api.upstream.endpoints import ImagesMixin
from api.upstream.payloads import json_object
from api.upstream.tokenizer import count_response, count_speech_input, count_text
from api.web.header_values import header_value

# (the request, what reads the answer, the upstream's answer, its bytes, whether it is in the client's own format)
Reader = Callable[[Job, AnswerReader, client.Answer, bytes, bool], tuple[web.Response, TokenUsage]]


def json_answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes,
                native: bool) -> tuple[web.Response, TokenUsage]:
    """The mode's `read` of the JSON: the usage as reported, else the prompt and, for a mode that answers
    generated text, the text counted. A native answer (the client's own format) is relayed as it came."""
    spec = MODES[job.mode]
    headers = answer_headers(job)
    assert spec.read is not None, f"{job.mode} answers are not JSON"
    out, reported = spec.read(adaptor, adaptor.decode_body(raw))
    if reported is not None:
        usage = reported
    elif spec.text:
        usage = TokenUsage(job.prompt_tokens, count_response(out))
    else:
        usage = TokenUsage(job.prompt_tokens, 0)
    if native:
        return web.Response(body=raw, headers=headers, content_type="application/json"), usage
    if job.kept is not None:  # the reasoning state of a converted answer, kept for a client that drops it
        kept_reasoning.keep_answer(job, out)
    if job.inbound is not None:
        if job.inbound.on_answer is not None:
            job.inbound.on_answer(out)
        out = job.inbound.render(out)
    return json_response(out, headers), usage


def images_answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes,
                  native: bool) -> tuple[web.Response, TokenUsage]:
    """The image tokens reported, else none (billed per image); asked as a stream and answered whole: the
    completed events of that stream (api/relay/image_stream.py)."""
    spec = MODES[job.mode]
    headers = answer_headers(job)
    assert spec.read is not None, f"{job.mode} answers are not JSON"
    out, reported = spec.read(adaptor, adaptor.decode_body(raw))
    usage = reported or TokenUsage(0, 0)
    if isinstance(adaptor, ImagesMixin) and adaptor.bills_produced_images and isinstance(out.get("data"), list):
        job.images = len(out["data"])
    if job.is_stream:
        return web.Response(body=whole_as_events(job, out), headers=stream_headers(job)), usage
    return json_response(out, headers), usage


def audio_answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes,
                 native: bool) -> tuple[web.Response, TokenUsage]:
    """Speech: the audio as it came; its prompt is the characters to speak."""
    usage = TokenUsage(count_speech_input(text_field(job.body, "input")), 0)
    return as_it_came(job, resp, raw, "application/octet-stream"), usage


def transcript_answer(job: Job, adaptor: AnswerReader, resp: client.Answer, raw: bytes,
                      native: bool) -> tuple[web.Response, TokenUsage]:
    """A transcription or translation as it came (JSON, or text in the format asked): the text heard is
    its output."""
    text = (text_field(json_object(raw), "text") if resp.content_type == "application/json" else
            raw.decode("utf-8", "replace"))
    usage = TokenUsage(0, count_text(text))
    return as_it_came(job, resp, raw, "application/json"), usage


def as_it_came(job: Job, resp: client.Answer, raw: bytes, default_type: str) -> web.Response:
    content_type = header_value(resp.headers.get("Content-Type", default_type))
    return web.Response(body=raw, headers={**answer_headers(job), "Content-Type": content_type})


def json_response(body: Any, headers: Mapping[str, str]) -> web.Response:
    return web.Response(body=orjson.dumps(body), headers=dict(headers), content_type="application/json")


READERS: Mapping[Reading, Reader] = {
    Reading.JSON: json_answer,
    Reading.IMAGES: images_answer,
    Reading.AUDIO: audio_answer,
    Reading.TRANSCRIPT: transcript_answer,
}
