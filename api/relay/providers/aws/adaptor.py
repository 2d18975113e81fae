"""AWS Bedrock Claude (type 33): the Claude Messages conversion, sent to Bedrock's InvokeModel.

- Key `AccessKeyId|SecretAccessKey|Region` (api/relay/keyformats.py); every request is signed with
  SigV4 (service `bedrock`) in `authorize`, so the secret key never leaves the process.
- `POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/invoke`, or
  `/invoke-with-response-stream` (AWS's binary event-stream; each `chunk` event carries one Claude
  stream event, base64-encoded, in `{"bytes": …}`). A channel base URL replaces the regional host.
- The body is the Messages body without `model` and `stream`, with
  `anthropic_version: bedrock-2023-05-31`. Anthropic model names are mapped to Bedrock model ids;
  names already in Bedrock's form (or a cross-region profile such as `us.anthropic.…`) pass through.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

import orjson

from api.relay.base import RelayMode, StreamChunk, StreamState, UpstreamContext, UpstreamRequest
from api.relay.decoders import EventStreamDecoder
from api.relay.errors import RelayError
from api.relay.providers.claude import ClaudeAdaptor
from api.relay.signing import sigv4
from api.relay.sse import SSEEvent
from models.enums import ChannelType

BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"

BEDROCK_IDS: Mapping[str, str] = {
    "claude-instant-1.2": "anthropic.claude-instant-v1",
    "claude-2.0": "anthropic.claude-v2",
    "claude-2.1": "anthropic.claude-v2:1",
    "claude-3-haiku-20240307": "anthropic.claude-3-haiku-20240307-v1:0",
    "claude-3-sonnet-20240229": "anthropic.claude-3-sonnet-20240229-v1:0",
    "claude-3-opus-20240229": "anthropic.claude-3-opus-20240229-v1:0",
    "claude-3-5-sonnet-20240620": "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "claude-3-5-sonnet-20241022": "anthropic.claude-3-5-sonnet-20241022-v2:0",
    "claude-3-5-haiku-20241022": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "claude-3-7-sonnet-20250219": "anthropic.claude-3-7-sonnet-20250219-v1:0",
    "claude-sonnet-4-20250514": "anthropic.claude-sonnet-4-20250514-v1:0",
    "claude-opus-4-20250514": "anthropic.claude-opus-4-20250514-v1:0",
    "claude-opus-4-1-20250805": "anthropic.claude-opus-4-1-20250805-v1:0",
    "claude-sonnet-4-5-20250929": "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "claude-haiku-4-5-20251001": "anthropic.claude-haiku-4-5-20251001-v1:0",
}

# Bedrock's exceptions (in an event stream or as x-amzn-ErrorType) → status.
EXCEPTION_STATUSES: Mapping[str, int] = {
    "throttlingException": 429, "ThrottlingException": 429, "validationException": 400,
    "ValidationException": 400, "accessDeniedException": 403, "AccessDeniedException": 403,
    "UnrecognizedClientException": 403, "ResourceNotFoundException": 404, "ModelNotReadyException": 503,
    "serviceUnavailableException": 503, "ServiceUnavailableException": 503, "modelStreamErrorException": 502,
    "internalServerException": 500, "InternalServerException": 500, "ModelTimeoutException": 504,
}


def bedrock_model_id(model: str) -> str:
    return BEDROCK_IDS.get(model, model)


class BedrockAdaptor(ClaudeAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.AWS
    default_base_url: ClassVar[str] = ""
    models: ClassVar[tuple[str, ...]] = tuple(BEDROCK_IDS)

    @property
    def credentials(self) -> tuple[str, str, str]:
        parts = [p.strip() for p in self.meta.key.split("|")]
        if len(parts) != 3 or not all(parts):
            raise RelayError(401, "the AWS key must be AccessKeyId|SecretAccessKey|Region", "authentication_error",
                             "invalid_api_key")
        return parts[0], parts[1], parts[2]

    def request_url(self, mode: RelayMode | None = None) -> str:
        host = self.base_url or f"https://bedrock-runtime.{self.credentials[2]}.amazonaws.com"
        action = "invoke-with-response-stream" if self.meta.is_stream else "invoke"
        return f"{host}/model/{sigv4.url_path_segment(bedrock_model_id(self.meta.model))}/{action}"

    def request_headers(self) -> dict[str, str]:
        headers = {"Accept": "application/vnd.amazon.eventstream" if self.meta.is_stream else "application/json"}
        return headers

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body = super().convert_request(req)
        body.pop("model", None)
        body.pop("stream", None)
        body["anthropic_version"] = BEDROCK_ANTHROPIC_VERSION
        return body

    def build_request(self, mode: RelayMode, body: Any) -> UpstreamRequest:
        request = super().build_request(mode, body)
        request.encoded = True  # `%3A` in the model id must travel as signed, not be normalised to `:`
        return request

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        access, secret, region = self.credentials
        body = request.body if isinstance(request.body, bytes) else b""
        request.headers = sigv4.sign(request.method, request.url, request.headers, body, access_key=access,
                                     secret_key=secret, region=region, service="bedrock", now=datetime.now(UTC))

    def stream_decoder(self, content_type: str) -> EventStreamDecoder | None:
        return EventStreamDecoder() if content_type == "application/vnd.amazon.eventstream" else None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        name = ev.event or ""
        if name.startswith(("exception:", "error:")):
            kind = name.partition(":")[2]
            raise RelayError(EXCEPTION_STATUSES.get(kind, 500), _message(ev.data) or kind, "upstream_error", kind)
        if name != "chunk":
            return []
        try:
            payload = orjson.loads(ev.data)
            inner = base64.b64decode(payload["bytes"], validate=True)
        except (orjson.JSONDecodeError, KeyError, TypeError, binascii.Error):
            raise RelayError(502, "malformed Bedrock stream chunk", "upstream_error", "bad_response_body") from None
        return self.stream.convert(None, inner, state)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        message = _message(body) or f"bad response status code {status}"
        kind = "authentication_error" if status in (401, 403) else "upstream_error"
        return RelayError(status, message, kind, "bad_response_status_code")


def _message(raw: bytes) -> str:
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return raw[:300].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        return str(data.get("message") or data.get("Message") or "")
    return ""
