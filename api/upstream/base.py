"""The upstream seam: one adaptor per provider, used by the relay pipeline and by the channel
test, monitor and balance jobs alike.

For one attempt on one channel the pipeline (handler.py) builds a `RelayMeta`, asks the registry
for an adaptor, then:

1. converts the client's (OpenAI-format) body: `convert_request` / `convert_<mode>_request`;
2. `build_request(mode, body)` → an `UpstreamRequest` (method, URL, headers, body, transport);
3. `await authorize(request, ctx)`: signs it (SigV4, TC3) or attaches a token obtained by
   exchange, from `ctx.credentials` (per-process cache, refreshed before expiry, single-flight);
4. sends it (api/upstream/client.py: HTTP, or a WebSocket for providers that speak one);
5. reads the answer: `stream_decoder(content_type)` picks the framing of a stream (SSE,
   newline-delimited JSON, AWS event-stream) and `convert_stream_event` turns each event into
   OpenAI chunks; a complete answer goes through `decode_body` and `convert_response`;
   an error status through `convert_error`.

Conversion is pure (no I/O); the pipeline, not the adaptor, counts what the stream produced, so
billing never depends on an adaptor remembering to count. An adaptor instance serves one attempt,
so it may keep per-stream state on `self`.

The endpoints (`RelayMode`: name, OpenAI's path, capability) and their opt-in mixins are
api/upstream/endpoints.py; `Adaptor.supports(mode)` tells the pipeline whether to answer 501.
Reading upstream JSON is api/upstream/payloads.py; balances are api/upstream/balance.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import orjson

from api.services.billing.records import TokenUsage as TokenUsage  # the adaptors' usage type, defined with the record
from api.services.configuration.capabilities import Capability
from api.services.configuration.capability_lookup import capability
from api.services.model_name import ModelName
from api.upstream.endpoints import OPENAI_PATHS as OPENAI_PATHS  # the endpoints, defined with their capabilities
from api.upstream.endpoints import RelayMode as RelayMode
from api.upstream.errors import RelayError
from api.upstream.payloads import json_object, openai_error
from api.upstream.sse import SSEEvent, SSEParser
from api.upstream.tokenizer import StreamCounter

if TYPE_CHECKING:
    import aiohttp

    from api.upstream.credentials import CredentialCache
    from api.upstream.provider import Provider


class Passthrough:
    """A chunk forwarded verbatim: `data` is its JSON as the upstream sent it, `chunk` the parsed
    OpenAI chunk (read by the pipeline for counting; never re-encoded)."""

    __slots__ = ("chunk", "data")

    def __init__(self, data: bytes, chunk: Mapping[str, Any]) -> None:
        self.data = data
        self.chunk = chunk


# A chunk to forward: an OpenAI chunk to encode, or one already encoded (Passthrough).
StreamChunk = dict[str, Any] | Passthrough


@dataclass(slots=True)
class RelayMeta:
    """Everything an adaptor needs about one attempt (one channel) of one request."""

    channel_id: int
    channel_type: int
    key: str
    base_url: str = ""
    other: str = ""  # per-type setting: Azure api-version, …
    organization: str = ""
    name: ModelName = ModelName()  # what the client asked for (billed, answered) and what goes upstream
    mode: RelayMode = RelayMode.CHAT
    is_stream: bool = False
    prompt_tokens: int = 0  # local count, for adaptors whose upstream reports none
    capability: Capability | None = None  # the upstream model's row (with the operator's overrides)
    inbound: str = ""  # the client's format when the request was converted from another (anthropic, gemini, …)
    # What conversion left out for this target (parameters, hosted tools): said to the client in the
    # `X-Gateway-Dropped` header and recorded in the log's `other.dropped`.
    notices: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        """The name sent upstream."""
        return self.name.sent

    @property
    def cap(self) -> Capability:
        """What the upstream model accepts (api/services/configuration/capabilities.py)."""
        if self.capability is None:
            self.capability = capability(self.model)
        return self.capability

    def drop(self, what: str) -> None:
        """Note that conversion left `what` out (a parameter name, `tools.web_search`, …)."""
        if what not in self.notices:
            self.notices.append(what)


def client_wants_usage(req: Mapping[str, Any]) -> bool:
    """Whether the client itself asked for the final usage chunk of a stream."""
    options = req.get("stream_options")
    return bool(isinstance(options, Mapping) and options.get("include_usage"))


@dataclass(slots=True)
class StreamState:
    """Per-stream accumulator, owned by the pipeline and updated by `convert_stream_event`."""

    include_usage: bool = False  # the client asked for the usage chunk
    usage: TokenUsage | None = None  # as reported by the upstream
    counter: StreamCounter = field(default_factory=StreamCounter)  # local count of what was produced
    events: int = 0  # chunks produced (counted by the pipeline)
    usage_sent: bool = False  # a chunk carrying `usage` was forwarded to the client
    finish_reason: str | None = None
    done: bool = False  # the upstream sent its end marker
    malformed: int = 0  # events skipped because they could not be read (the rest of the stream goes on)

    def resolve_usage(self, prompt_tokens: int) -> TokenUsage:
        """The upstream's numbers when it reported them, else the local prompt count plus the
        local count of the output produced so far (also right for a stream cut mid-way)."""
        if self.usage is not None:
            return self.usage
        return TokenUsage(prompt_tokens, self.counter.total())


@dataclass(slots=True)
class UpstreamRequest:
    """One complete upstream request, as built by an adaptor and completed by `authorize`."""

    url: str
    headers: dict[str, str]
    body: bytes | aiohttp.FormData | None = None
    method: str = "POST"
    transport: str = "http"  # "http", or "websocket": `body` is sent as the first text message
    encoded: bool = False  # the URL is already percent-encoded exactly as it must travel (signed paths)


@dataclass(slots=True)
class UpstreamContext:
    """What the seam's I/O hooks (`prepare`, `authorize`) may use: the shared HTTP session, the
    per-process credential cache, and the policy for URLs supplied by users (api/upstream/media.py)."""

    http: aiohttp.ClientSession
    credentials: CredentialCache
    allow_private_urls: bool = False  # option MediaFetchPrivateEnabled


class StreamDecoder(Protocol):
    """Framing of an upstream stream: raw bytes in, events out (api/upstream/sse.py, decoders.py)."""

    def feed(self, chunk: bytes) -> list[SSEEvent]: ...

    def close(self) -> list[SSEEvent]: ...


class AnswerReader(Protocol):
    """What reads an upstream answer: an adaptor, or the reader of a client format relayed as it
    came (api/relay/inbound/), which only reads the usage and what to count."""

    def decode_body(self, raw: bytes) -> dict[str, Any]: ...

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]: ...

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]: ...


class Adaptor(ABC):
    """One provider's translation between OpenAI's wire format and its own."""

    # Set by the registry from the type's catalogue row (api/upstream/registry.py `bind`).
    provider: ClassVar[Provider | None] = None
    default_base_url: ClassVar[str] = ""
    paths: ClassVar[Mapping[RelayMode, str]] = OPENAI_PATHS
    modes: ClassVar[frozenset[RelayMode] | None] = None  # the row's endpoints, when it serves only some
    # Whose opaque reasoning state its converted answers carry and its requests take back
    # (api/upstream/reasoning.py): "claude" (thinking blocks), "gemini" (thought signatures), or none.
    reasoning_family: ClassVar[str] = ""

    def __init__(self, meta: RelayMeta) -> None:
        self.meta = meta
        self.base_url = (meta.base_url or self.default_base_url).rstrip("/")

    @classmethod
    def variant(cls, meta: RelayMeta) -> type[Adaptor]:
        """The class serving this attempt: a type that fronts several formats (Vertex AI: Gemini
        and Claude models) picks one by model; the others are their own variant."""
        return cls

    def supports(self, mode: RelayMode) -> bool:
        if self.modes is not None and mode not in self.modes:
            return False
        capability = mode.capability
        return capability is None or isinstance(self, capability)

    # -- the request ------------------------------------------------------------------------------

    def request_url(self, mode: RelayMode | None = None) -> str:
        return self.base_url + self.paths[mode or self.meta.mode]

    def request_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.meta.key}"} if self.meta.key else {}

    def build_request(self, mode: RelayMode, body: Mapping[str, Any] | aiohttp.FormData) -> UpstreamRequest:
        """The upstream request for a converted body (a dict is sent as JSON, a form as multipart)."""
        headers = self.request_headers()
        if isinstance(body, Mapping):
            headers["Content-Type"] = "application/json"
            return UpstreamRequest(self.request_url(mode), headers, orjson.dumps(body))
        return UpstreamRequest(self.request_url(mode), headers, body)

    def native_request(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """A body in the client's own format that this channel speaks natively (a Claude-format
        channel taking `/v1/messages` as sent): what this channel needs changed in it, and the
        client headers (API version, beta flags) it takes. By default: both as they are."""
        return body, headers

    def native_frames(self, events: list[SSEEvent], raw: bytes) -> bytes:
        """What a client of this channel's own format gets of a native stream's bytes: by default
        the bytes as they came; a channel that frames its stream otherwise (Bedrock's binary
        event-stream around Claude's events) gives them back in the client's framing."""
        return raw

    # Set by adaptors that override `prepare` (so the pipeline awaits nothing for the others).
    prepares: ClassVar[bool] = False

    async def prepare(self, body: dict[str, Any], ctx: UpstreamContext) -> None:
        """I/O a converted body may need before it is sent (an image URL to inline, fetched under
        the media policy of api/upstream/media.py); it edits `body` in place."""
        return None

    # Set by adaptors that override `complete` (an answer that needs more upstream calls).
    completes: ClassVar[bool] = False

    async def complete(self, raw: bytes, ctx: UpstreamContext) -> bytes:
        """A complete (non-streamed) answer that is not the final one yet → the final one: an
        asynchronous task is polled until it finishes (DashScope's image synthesis)."""
        return raw

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        """Sign the request or attach an exchanged credential (from `ctx.credentials`, never a new
        exchange per request). The default: the headers of `request_headers` are enough."""
        return None

    # -- the answer -------------------------------------------------------------------------------

    def stream_decoder(self, content_type: str) -> StreamDecoder | None:
        """The decoder of a streamed answer with this content type; None = not a stream (read whole)."""
        return SSEParser() if content_type == "text/event-stream" else None

    def decode_body(self, raw: bytes) -> dict[str, Any]:
        """A complete answer's bytes → the JSON object `convert_response` takes."""
        return json_object(raw)

    @abstractmethod
    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Chat (and, with CompletionsMixin, completions) request → upstream body."""

    @abstractmethod
    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Upstream non-stream answer → (OpenAI answer, usage or None when not reported)."""

    @abstractmethod
    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        """One upstream stream event → OpenAI chunks to forward ([] = nothing). Sets `state.usage`
        when the upstream reports usage and `state.done` at its end marker; the pipeline counts the
        chunks' output, and writes `data: [DONE]` itself."""

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return openai_error(status, body)

    # -- provider-side parts the client never sees (api/relay/kept_reasoning.py keeps them) ----------

    def circulates(self, req: Mapping[str, Any]) -> bool:
        """Whether this request's answer has parts of the provider's own that the client never gets
        and the next turn must send back (Gemini's tool-combination mode): then the turn's state is
        kept and looked up whatever the client keeps itself."""
        return False

    def hidden_parts(self) -> list[dict[str, Any]]:
        """Those parts of the answer read so far, each `{"at": where, "part": …}` (the provider's
        shape; the adaptor's conversion puts them back, api/upstream/providers/gemini/contents.py)."""
        return []

    def _with_model(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body = dict(req)
        if self.meta.name.upstream:
            body["model"] = self.meta.name.upstream
        return body

