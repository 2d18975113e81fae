"""AWS Bedrock Claude (type 33): the Claude Messages conversion, sent to Bedrock's InvokeModel.

- Key `AccessKeyId|SecretAccessKey|Region` (api/relay/keyformats.py); every request is signed with
  SigV4 (service `bedrock`) in `authorize`, so the secret key never leaves the process.
- `POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/invoke`, or
  `/invoke-with-response-stream` (AWS's binary event-stream; each `chunk` event carries one Claude
  stream event, base64-encoded, in `{"bytes": …}`). A channel base URL replaces the regional host.
- The body is the Messages body without `model` and `stream`, with
  `anthropic_version: bedrock-2023-05-31`; beta flags (the channel's `other`, comma-separated, and a
  native client's `anthropic-beta`) travel in the body as `anthropic_beta`
  (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html).
- Model ids: Anthropic's names map to Bedrock's base ids; models from Claude 3.5 Sonnet v2 on are
  served through cross-region inference profiles only (on-demand invocation of the base id is
  refused: docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html), so they
  get the profile of the key's region (`us.`, `eu.`, `apac.`, else `global.`). Ids already in
  Bedrock's form (`anthropic.…`, `us.anthropic.…`, an ARN) pass through.
- Bedrock takes neither mid-conversation system messages nor the web search server tool (the tools
  its request reference lists are custom, computer, bash and text editor).
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
from api.relay.providers.claude.adaptor import beta_flags
from api.relay.providers.claude.convert import Platform
from api.relay.signing import sigv4
from api.relay.sse import SSEEvent
from models.enums import ChannelType

BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"
BEDROCK = Platform("bedrock", system_messages=False, web_search=False, structured_output=True)

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
    "claude-opus-4-5-20251101": "anthropic.claude-opus-4-5-20251101-v1:0",
    "claude-opus-4-6": "anthropic.claude-opus-4-6-v1",
    "claude-sonnet-4-6": "anthropic.claude-sonnet-4-6",
}
# Base ids still invoked on demand (the older models); any other needs an inference profile.
ON_DEMAND_IDS = frozenset({"anthropic.claude-instant-v1", "anthropic.claude-v2", "anthropic.claude-v2:1",
                           "anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-sonnet-20240229-v1:0",
                           "anthropic.claude-3-opus-20240229-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"})
PROFILE_GEOGRAPHIES = (("us-", "us"), ("ca-", "us"), ("eu-", "eu"), ("ap-", "apac"))
MODELS: tuple[str, ...] = (
    "claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8", "claude-opus-4-7",
    *BEDROCK_IDS,
)

# Bedrock's exceptions (in an event stream or as x-amzn-ErrorType) → status.
EXCEPTION_STATUSES: Mapping[str, int] = {
    "throttlingException": 429, "ThrottlingException": 429, "validationException": 400,
    "ValidationException": 400, "accessDeniedException": 403, "AccessDeniedException": 403,
    "UnrecognizedClientException": 403, "ResourceNotFoundException": 404, "ModelNotReadyException": 503,
    "serviceUnavailableException": 503, "ServiceUnavailableException": 503, "modelStreamErrorException": 502,
    "internalServerException": 500, "InternalServerException": 500, "ModelTimeoutException": 504,
}


def bedrock_model_id(model: str, region: str) -> str:
    """The id InvokeModel takes for `model` from the key's region (see the module's docstring)."""
    if model.startswith("arn:") or "." in model.split("-", 1)[0]:
        return model  # already Bedrock's: a base id, an inference profile or an ARN
    base = BEDROCK_IDS.get(model) or f"anthropic.{model}"
    if base in ON_DEMAND_IDS:
        return base
    geography = next((geo for prefix, geo in PROFILE_GEOGRAPHIES if region.startswith(prefix)), "global")
    return f"{geography}.{base}"


class BedrockAdaptor(ClaudeAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.AWS
    default_base_url: ClassVar[str] = ""
    models: ClassVar[tuple[str, ...]] = MODELS
    platform: ClassVar[Platform] = BEDROCK

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
        parts = self.meta.key.split("|")
        region = parts[2].strip() if len(parts) == 3 else ""  # the profile's geography (signing checks the key)
        return f"{host}/model/{sigv4.url_path_segment(bedrock_model_id(self.meta.model, region))}/{action}"

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

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        access, secret, region = self.credentials
        body = request.body if isinstance(request.body, bytes) else b""
        request.headers = sigv4.sign(request.method, request.url, request.headers, body, access_key=access,
                                     secret_key=secret, region=region, service="bedrock", now=datetime.now(UTC))

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
        message = _message(body) or f"bad response status code {status}"
        kind = "authentication_error" if status in (401, 403) else "upstream_error"
        return RelayError(status, message, kind, "bad_response_status_code")


def _chunk_event(ev: SSEEvent) -> bytes | None:
    """The Claude event (JSON) a Bedrock `chunk` carries; None for other events; an exception raises."""
    name = ev.event or ""
    if name.startswith(("exception:", "error:")):
        kind = name.partition(":")[2]
        raise RelayError(EXCEPTION_STATUSES.get(kind, 500), _message(ev.data) or kind, "upstream_error", kind)
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
