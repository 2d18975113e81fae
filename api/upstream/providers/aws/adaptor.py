"""AWS Bedrock (type 33): Claude through InvokeModel, every other chat model through Converse.

- Key `AccessKeyId|SecretAccessKey|Region` (SigV4-signed in `authorize`, service `bedrock`) or
  `BedrockApiKey|Region` (`Authorization: Bearer`): auth.py.
- Model ids (models.py): Anthropic's names map to Bedrock's base ids, and the models served through
  cross-region inference profiles only get the profile of the region's geography (`us.`, `eu.`,
  `apac.`, else `global.`). Ids already in Bedrock's form with a geography, and ARNs, pass through.
- Claude (`BedrockAdaptor`): `POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/invoke`,
  or `/invoke-with-response-stream` (AWS's binary event-stream; each `chunk` event carries one Claude
  stream event, base64-encoded, in `{"bytes": …}`). A channel base URL replaces the regional host.
  The body is the Messages body without `model` and `stream`, with
  `anthropic_version: bedrock-2023-05-31`; beta flags (the channel's `other`, comma-separated, and a
  native client's `anthropic-beta`) travel in the body as `anthropic_beta`
  (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html).
  Bedrock takes neither mid-conversation system messages nor the web search server tool (the tools
  its request reference lists are custom, computer, bash and text editor).
- Other models (`BedrockConverseAdaptor`, chosen by `variant`): `POST /model/{modelId}/converse` or
  `/converse-stream` (event-stream, one Converse event per message): converse.py.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.upstream.base import (
    Adaptor,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
)
from api.upstream.decoders import EventStreamDecoder, WholeBody
from api.upstream.errors import RelayError
from api.upstream.media import fetch_images
from api.upstream.payloads import json_object
from api.upstream.providers.aws import converse
from api.upstream.providers.aws.auth import BedrockAuth, key_problem
from api.upstream.providers.aws.models import bedrock_model_id, is_claude
from api.upstream.providers.claude import ClaudeAdaptor
from api.upstream.providers.claude.adaptor import beta_flags
from api.upstream.providers.claude.convert import Platform
from api.upstream.signing import sigv4
from api.upstream.sse import SSEEvent

__all__ = ["BedrockAdaptor", "BedrockConverseAdaptor", "bedrock_model_id", "key_problem"]

BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"
BEDROCK = Platform("bedrock", system_messages=False, web_search=False, structured_output=True)

# Bedrock's exceptions (in an event stream or as x-amzn-ErrorType) → status.
EXCEPTION_STATUSES: Mapping[str, int] = {
    "throttlingException": 429, "ThrottlingException": 429, "validationException": 400,
    "ValidationException": 400, "accessDeniedException": 403, "AccessDeniedException": 403,
    "UnrecognizedClientException": 403, "ResourceNotFoundException": 404, "ModelNotReadyException": 503,
    "serviceUnavailableException": 503, "ServiceUnavailableException": 503, "modelStreamErrorException": 502,
    "internalServerException": 500, "InternalServerException": 500, "ModelTimeoutException": 504,
}


class BedrockAdaptor(BedrockAuth, ClaudeAdaptor):
    """The registry's entry, serving Claude models itself and the others with its Converse variant."""

    platform: ClassVar[Platform] = BEDROCK

    @classmethod
    def variant(cls, meta: RelayMeta) -> type[Adaptor]:
        return cls if is_claude(meta.model) else BedrockConverseAdaptor

    def model_id(self) -> str:
        return bedrock_model_id(self.meta.model, self.model_region())

    def request_url(self, mode: RelayMode | None = None) -> str:
        action = "invoke-with-response-stream" if self.meta.is_stream else "invoke"
        return f"{self.runtime_host()}/model/{sigv4.url_path_segment(self.model_id())}/{action}"

    def request_headers(self) -> dict[str, str]:
        return {"Accept": "application/vnd.amazon.eventstream" if self.meta.is_stream else "application/json"}

    def bedrock_body(self, body: Mapping[str, Any], client_betas: str | None = None) -> dict[str, Any]:
        """A Messages body as InvokeModel takes it: no model nor stream, the version and betas inside."""
        out = {k: v for k, v in body.items() if k not in ("model", "stream")}
        out["anthropic_version"] = BEDROCK_ANTHROPIC_VERSION
        flags = beta_flags(self.meta.other, client_betas)
        if flags:
            out["anthropic_beta"] = flags
        return out

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return self.bedrock_body(super().convert_request(req))

    def native_request(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """A client's own Messages body: as InvokeModel takes it (the stream is chosen by the URL);
        its beta flags move into the body, its API version gives way to Bedrock's."""
        client_betas = next((v for k, v in headers.items() if k.lower() == "anthropic-beta"), None)
        kept = {k: v for k, v in headers.items() if k.lower() not in ("anthropic-version", "anthropic-beta")}
        return self.bedrock_body(body, client_betas), kept

    def build_request(self, mode: RelayMode, body: Any) -> UpstreamRequest:
        request = super().build_request(mode, body)
        request.encoded = True  # `%3A` in the model id must travel as signed, not be normalised to `:`
        return request

    def stream_decoder(self, content_type: str) -> EventStreamDecoder | None:
        return EventStreamDecoder() if content_type == "application/vnd.amazon.eventstream" else None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        inner = _chunk_event(ev)
        return self.stream.convert(None, inner, state) if inner is not None else []

    def native_frames(self, events: list[SSEEvent], raw: bytes) -> bytes:
        """What a native (Anthropic-format) client gets of these event-stream events: the Claude
        events they carry, as Anthropic's server-sent events."""
        frames = []
        for ev in events:
            inner = _chunk_event(ev)
            try:
                event = orjson.loads(inner) if inner is not None else None
            except orjson.JSONDecodeError:
                event = None
            if inner is not None and isinstance(event, dict):
                frames.append(f"event: {event.get('type', '')}\ndata: ".encode() + inner + b"\n\n")
        return b"".join(frames)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return bedrock_error(status, body)


class BedrockConverseAdaptor(BedrockAuth, Adaptor):
    """Bedrock's other chat models (Nova, Llama, Mistral, DeepSeek …) through Converse / ConverseStream."""

    prepares: ClassVar[bool] = True

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.stream = converse.ConverseStream(meta.name.answered)
        self.whole_answer = False  # a stream served by Converse (a model without streaming tool use)

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def model_id(self) -> str:
        return bedrock_model_id(self.meta.model, self.model_region())

    def streams(self) -> bool:
        return self.meta.is_stream and not self.whole_answer

    def request_url(self, mode: RelayMode | None = None) -> str:
        action = "converse-stream" if self.streams() else "converse"
        return f"{self.runtime_host()}/model/{sigv4.url_path_segment(self.model_id())}/{action}"

    def request_headers(self) -> dict[str, str]:
        return {"Accept": "application/vnd.amazon.eventstream" if self.streams() else "application/json"}

    def build_request(self, mode: RelayMode, body: Any) -> UpstreamRequest:
        request = super().build_request(mode, body)
        request.encoded = True  # `%3A` in the model id must travel as signed, not be normalised to `:`
        return request

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        model_id = self.model_id()
        body = converse.convert_request(req, self.meta, model_id)
        self.whole_answer = (self.meta.is_stream and "toolConfig" in body
                             and converse.base_id(model_id).startswith(converse.NO_STREAMING_TOOLS))
        return body

    async def prepare(self, body: dict[str, Any], ctx: UpstreamContext) -> None:
        """Images given by URL: fetched (under the media policy) into the image blocks' bytes."""
        blocks = [block["image"] for turn in body.get("messages") or () for block in turn.get("content") or ()
                  if (block.get("image") or {}).get("format") == converse.URL_PLACEHOLDER]
        if not blocks:
            return
        images = await fetch_images([b["source"]["bytes"] for b in blocks], allow_private=ctx.allow_private_urls)
        for block, (mime, data) in zip(blocks, images, strict=True):
            kind = converse.IMAGE_FORMATS.get(mime.split(";", 1)[0].strip().lower())
            if kind is None:
                raise RelayError(400, f"Bedrock takes png, jpeg, gif or webp images, not {mime}",
                                 "invalid_request_error", "invalid_image_url")
            block["format"], block["source"] = kind, {"bytes": base64.b64encode(data).decode()}

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return converse.convert_response(body, self.meta.name.answered)

    def stream_decoder(self, content_type: str) -> EventStreamDecoder | WholeBody | None:
        if self.whole_answer and content_type == "application/json":
            return WholeBody()
        return EventStreamDecoder() if content_type == "application/vnd.amazon.eventstream" else None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        name = ev.event or ""
        if name.startswith(("exception:", "error:")):
            raise _stream_exception(name, ev.data)
        if self.whole_answer and not name:
            answer, usage = self.convert_response(json_object(ev.data))
            return self.stream.whole(answer, usage, state)
        return self.stream.convert(name, ev.data, state)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return bedrock_error(status, body)


def bedrock_error(status: int, body: bytes) -> RelayError:
    """A Bedrock error answer (`{"message": …}`, or `{"Message": …}` from the API-key check)."""
    message = _message(body) or f"bad response status code {status}"
    kind = "authentication_error" if status in (401, 403) else "upstream_error"
    return RelayError(status, message, kind, "bad_response_status_code")


def _stream_exception(name: str, data: bytes) -> RelayError:
    kind = name.partition(":")[2]
    return RelayError(EXCEPTION_STATUSES.get(kind, 500), _message(data) or kind, "upstream_error", kind)


def _chunk_event(ev: SSEEvent) -> bytes | None:
    """The Claude event (JSON) a Bedrock `chunk` carries; None for other events; an exception raises."""
    name = ev.event or ""
    if name.startswith(("exception:", "error:")):
        raise _stream_exception(name, ev.data)
    if name != "chunk":
        return None
    try:
        payload = orjson.loads(ev.data)
        return base64.b64decode(payload["bytes"], validate=True)
    except (orjson.JSONDecodeError, KeyError, TypeError, binascii.Error):
        raise RelayError(502, "malformed Bedrock stream chunk", "upstream_error", "bad_response_body") from None


def _message(raw: bytes) -> str:
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return raw[:300].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        return str(data.get("message") or data.get("Message") or "")
    return ""
