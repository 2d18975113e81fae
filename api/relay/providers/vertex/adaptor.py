"""Vertex AI (type 41): one channel serves Google's Gemini models and Anthropic's Claude models.

- The key is a service-account JSON key. It is exchanged for an OAuth access token (an RS256 JWT
  assertion posted to the key's `token_uri`, api/relay/signing/google.py); the token is cached per
  channel key in the process's credential cache and refreshed before it expires, so a request
  only ever sends `Authorization: Bearer <access token>`, never the key.
- `other` is the region table, JSON: `{"default": "us-central1", "<model>": "<region>"}`; the
  region `global` uses the global endpoint.
- Gemini models: `…/publishers/google/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`),
  the Gemini conversion as is. Claude models: `…/publishers/anthropic/models/{model}:rawPredict`
  (`:streamRawPredict`), the Claude Messages conversion with `anthropic_version: vertex-2023-10-16`
  in the body instead of the model and the version header; `claude-3-5-sonnet-20240620` is asked
  for as `claude-3-5-sonnet@20240620`, undated names (`claude-opus-4-6` and later) as they are.
  Beta flags travel as the `anthropic-beta` header (the anthropic SDK's Vertex client sends them so).
  Vertex runs the web search server tool (cloud.google.com/vertex-ai/generative-ai/docs/partner-models/
  claude/web-search); structured outputs are off there unless the project's organization policy
  allows them (…/partner-models/claude/structured_outputs), so a JSON schema becomes an instruction;
  mid-conversation system messages are a Claude API feature (marked user text here).
- A channel base URL, when set, replaces `https://{region}-aiplatform.googleapis.com`.
"""
from __future__ import annotations

import functools
import hashlib
import re
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import Adaptor, RelayMeta, RelayMode, UpstreamContext, UpstreamRequest
from api.relay.errors import RelayError
from api.relay.providers.claude import ClaudeAdaptor
from api.relay.providers.claude.convert import Platform
from api.relay.providers.gemini import GeminiAdaptor
from api.relay.signing import google
from models.enums import ChannelType

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
VERTEX_CLAUDE = Platform("vertex", system_messages=False, web_search=True, structured_output=False)
_DATED = re.compile(r"^(claude-.+)-(\d{8})$")

# Anthropic's names (what clients send and prices are set for); vertex_model() gives Vertex's.
MODELS: tuple[str, ...] = (
    "claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6",
    "claude-sonnet-4-6", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001",
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash", "gemini-2.0-flash-lite",
    "gemini-1.5-pro-002", "gemini-1.5-flash-002",
    "claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-opus-4-20250514",
    "claude-3-7-sonnet-20250219", "claude-3-5-haiku-20241022", "claude-3-5-sonnet-20241022",
    "claude-3-5-sonnet-20240620", "claude-3-haiku-20240307",
)
VERTEX_NAMES = {"claude-3-5-sonnet-20241022": "claude-3-5-sonnet-v2@20241022"}


def vertex_model(model: str) -> str:
    """Anthropic's dated names → Vertex's `name@date`; Vertex names pass through."""
    if model in VERTEX_NAMES:
        return VERTEX_NAMES[model]
    match = _DATED.match(model)
    return f"{match.group(1)}@{match.group(2)}" if match and "@" not in model else model


def is_claude(model: str) -> bool:
    return model.startswith("claude")


class _Vertex:
    """What both Vertex variants share: the region, the endpoint and the OAuth token."""

    meta: RelayMeta
    base_url: str
    publisher: ClassVar[str]

    @functools.cached_property
    def account(self) -> google.ServiceAccount:
        """The service-account key, parsed once per attempt (the URL and the token both need it)."""
        try:
            return google.parse_service_account(self.meta.key)
        except ValueError as exc:
            raise RelayError(401, f"the Vertex AI key is not a service-account key: {exc}",
                             "authentication_error", "invalid_api_key") from None

    def region(self) -> str:
        try:
            table = orjson.loads(self.meta.other) if self.meta.other.strip() else {}
        except orjson.JSONDecodeError:
            table = {}
        if not isinstance(table, dict):
            table = {}
        for name in (self.meta.requested_model, self.meta.model):
            if isinstance(table.get(name), str) and table[name]:
                return table[name]
        default = table.get("default")
        return default if isinstance(default, str) and default else "us-central1"

    def endpoint(self, action: str) -> str:
        region = self.region()
        if self.base_url:
            host = self.base_url
        elif region == "global":
            host = "https://aiplatform.googleapis.com"
        else:
            host = f"https://{region}-aiplatform.googleapis.com"
        project = self.account.project_id
        return (f"{host}/v1/projects/{project}/locations/{region}/publishers/{self.publisher}/models/"
                f"{vertex_model(self.meta.model)}:{action}")

    def request_headers(self) -> dict[str, str]:
        return {}  # the access token is attached by `authorize`

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        account = self.account

        async def exchange() -> Any:
            return await google.exchange(ctx.http, account, time.time())

        cache_key = "vertex:" + hashlib.sha256(self.meta.key.encode()).hexdigest()
        request.headers["Authorization"] = f"Bearer {await ctx.credentials.get(cache_key, exchange)}"


class VertexGeminiAdaptor(_Vertex, GeminiAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.VERTEX_AI
    publisher: ClassVar[str] = "google"

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        if self.meta.is_stream:
            return self.endpoint("streamGenerateContent") + "?alt=sse"
        return self.endpoint("generateContent")


class VertexClaudeAdaptor(_Vertex, ClaudeAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.VERTEX_AI
    publisher: ClassVar[str] = "anthropic"
    platform: ClassVar[Platform] = VERTEX_CLAUDE

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return self.endpoint("streamRawPredict" if self.meta.is_stream else "rawPredict")

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return vertex_body(super().convert_request(req))

    def native_request(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """A client's own Messages body: the model in the URL, the API version in the body; its beta
        flags stay a header."""
        return vertex_body(body), {k: v for k, v in headers.items() if k.lower() != "anthropic-version"}


def vertex_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Messages body as rawPredict takes it (`stream` stays: streamRawPredict reads it)."""
    out = {k: v for k, v in body.items() if k != "model"}
    out["anthropic_version"] = VERTEX_ANTHROPIC_VERSION
    return out


class VertexAdaptor(Adaptor):
    """The registry's entry: each attempt is served by the Gemini or the Claude variant."""

    channel_type: ClassVar[ChannelType] = ChannelType.VERTEX_AI
    models: ClassVar[tuple[str, ...]] = MODELS

    @classmethod
    def variant(cls, meta: RelayMeta) -> type[Adaptor]:
        return VertexClaudeAdaptor if is_claude(meta.model) else VertexGeminiAdaptor

    def supports(self, mode: RelayMode) -> bool:
        return False

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        raise NotImplementedError

    def convert_stream_event(self, ev: Any, state: Any) -> list[Any]:
        raise NotImplementedError
