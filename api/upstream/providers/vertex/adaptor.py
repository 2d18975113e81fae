"""Vertex AI (type 41): one channel serves Google's Gemini and embedding models and Anthropic's Claude models.

- The key is one of two credentials (checks.py): a service-account JSON key, exchanged for an OAuth
  access token (an RS256 JWT assertion posted to the key's `token_uri`, api/upstream/signing/google.py;
  the token is cached per channel key in the process's credential cache and refreshed before it
  expires, so a request only ever sends `Authorization: Bearer <access token>`, never the key); or a
  Vertex AI API key (express mode), sent as `x-goog-api-key` to the global endpoint without project
  or region, `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:…`
  (cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/vertex-ai-express-mode-api-reference).
  An API key serves Google's models only: a Claude model on such a channel is refused before
  anything is sent, and another channel is tried.
- `other` is the region table, JSON: `{"default": "us-central1", "<model>": "<region>"}` (empty:
  us-central1); the region `global` uses the global endpoint. An API key has no regions.
- Gemini models: `…/publishers/google/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`),
  the Gemini conversion as is. Embedding models: `…:predict` (embeddings.py). `/v1/images/generations`:
  Gemini's image models through `:generateContent`, Imagen through `…/publishers/google/models/
  imagen-…:predict` (the Gemini adaptor's conversions: gemini/image_generation.py, gemini/imagen.py);
  `/v1/images/edits` the image models (gemini/image_edit.py).
  Claude models: `…/publishers/anthropic/models/{model}:rawPredict`
  (`:streamRawPredict`), the Claude Messages conversion with `anthropic_version: vertex-2023-10-16`
  in the body instead of the model and the version header; `claude-3-5-sonnet-20240620` is asked
  for as `claude-3-5-sonnet@20240620`, undated names (`claude-opus-4-6` and later) as they are.
  Beta flags travel as the `anthropic-beta` header (the anthropic SDK's Vertex client sends them so).
  Vertex runs the web search server tool (cloud.google.com/vertex-ai/generative-ai/docs/partner-models/
  claude/web-search); structured outputs are off there unless the project's organization policy
  allows them (…/partner-models/claude/structured_outputs), so a JSON schema becomes an instruction;
  mid-conversation system messages are a Claude API feature (marked user text here).
- A channel base URL, when set, replaces `https://{region}-aiplatform.googleapis.com` (or, with an
  API key, `https://aiplatform.googleapis.com`).
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import aiohttp
import orjson

from api.upstream import client
from api.upstream.base import Adaptor, RelayMeta, RelayMode, TokenUsage, UpstreamContext, UpstreamRequest
from api.upstream.errors import ChannelCannotServe, RelayError
from api.upstream.payloads import json_object
from api.upstream.providers.claude import ClaudeAdaptor
from api.upstream.providers.claude.convert import Platform
from api.upstream.providers.gemini import GeminiAdaptor
from api.upstream.providers.gemini.images import is_imagen
from api.upstream.providers.vertex import checks, embeddings
from api.upstream.signing import google

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
EXPRESS_HOST = "https://aiplatform.googleapis.com"
EMBED_CONCURRENCY = 4  # embedding batches after the first, sent at once
EMBED_TIMEOUT = aiohttp.ClientTimeout(total=60)
VERTEX_CLAUDE = Platform("vertex", system_messages=False, web_search=True, structured_output=False)
_DATED = re.compile(r"^(claude-.+)-(\d{8})$")

# Anthropic's names (what clients send and prices are set for); vertex_model() gives Vertex's.
MODELS: tuple[str, ...] = (
    "gemini-3.1-pro-preview", "gemini-3-flash-preview", "gemini-3.1-flash-lite-preview",
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3.1-flash-image", "gemini-3-pro-image",
    "gemini-embedding-001", "text-embedding-005", "text-multilingual-embedding-002",
    "claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6",
    "claude-sonnet-4-6", "claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001",
    "claude-opus-4-1-20250805",
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
    """What both Vertex variants share: the credential, the region and the endpoint."""

    meta: RelayMeta
    base_url: str
    publisher: ClassVar[str]

    @functools.cached_property
    def express(self) -> bool:
        """The key is a Vertex AI API key (express mode), not a service-account key."""
        return checks.is_api_key(self.meta.key)

    @functools.cached_property
    def account(self) -> google.ServiceAccount:
        """The service-account key, parsed once per attempt (the URL and the token both need it)."""
        try:
            return google.parse_service_account(self.meta.key)
        except ValueError as exc:
            raise RelayError(401, f"the Vertex AI key is not a service-account key: {exc}",
                             "authentication_error", "invalid_api_key") from None

    def region(self) -> str:
        return checks.region_for(self.meta.other, self.meta.name.requested, self.meta.model)

    def endpoint(self, action: str) -> str:
        model = f"publishers/{self.publisher}/models/{vertex_model(self.meta.model)}:{action}"
        if self.express:  # no project, no region: the global endpoint
            return f"{self.base_url or EXPRESS_HOST}/v1/{model}"
        region = self.region()
        if self.base_url:
            host = self.base_url
        elif region == "global":
            host = EXPRESS_HOST
        else:
            host = f"https://{region}-aiplatform.googleapis.com"
        return f"{host}/v1/projects/{self.account.project_id}/locations/{region}/{model}"

    def request_headers(self) -> dict[str, str]:
        # An API key travels in `x-goog-api-key` (as Google's genai SDK sends it), never in the URL;
        # an access token is attached by `authorize`.
        return {"x-goog-api-key": self.meta.key.strip()} if self.express else {}

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        if not self.express:
            account = self.account

            async def exchange() -> Any:
                return await google.exchange(ctx.http, account, time.time())

            cache_key = "vertex:" + hashlib.sha256(self.meta.key.encode()).hexdigest()
            request.headers["Authorization"] = f"Bearer {await ctx.credentials.get(cache_key, exchange)}"
        self.sent_headers = dict(request.headers)


class VertexGeminiAdaptor(_Vertex, GeminiAdaptor):
    publisher: ClassVar[str] = "google"
    completes: ClassVar[bool] = True
    tool_combination: ClassVar[bool] = False  # no `includeServerSideToolInvocations` on Vertex AI

    def supports(self, mode: RelayMode) -> bool:
        return GeminiAdaptor.supports(self, mode)

    def request_url(self, mode: RelayMode | None = None) -> str:
        if (mode or self.meta.mode) == RelayMode.EMBEDDINGS:
            return self.endpoint("predict")
        if (mode or self.meta.mode) in (RelayMode.IMAGES, RelayMode.IMAGES_EDIT):  # Imagen predicts
            return self.endpoint("predict" if is_imagen(self.meta.model) else "generateContent")
        if self.meta.is_stream:
            return self.endpoint("streamGenerateContent") + "?alt=sse"
        return self.endpoint("generateContent")

    # -- embeddings (api/upstream/providers/vertex/embeddings.py) ---------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        self.parameters = embeddings.parameters_of(req)
        first, *self.later = embeddings.batches(embeddings.instances_of(req, self.meta.model), self.meta.model)
        return {"instances": first, "parameters": self.parameters}

    async def complete(self, raw: bytes, ctx: UpstreamContext) -> bytes:
        """The batches after the first (a long input list), sent a few at a time, joined in order."""
        if self.meta.mode in (RelayMode.IMAGES, RelayMode.IMAGES_EDIT):
            return await super().complete(raw, ctx)
        later: list[list[dict[str, Any]]] = getattr(self, "later", [])
        if self.meta.mode != RelayMode.EMBEDDINGS or not later:
            return raw
        url, gate = self.request_url(RelayMode.EMBEDDINGS), asyncio.Semaphore(EMBED_CONCURRENCY)

        async def one(instances: list[dict[str, Any]]) -> dict[str, Any]:
            body = orjson.dumps({"instances": instances, "parameters": self.parameters})
            async with gate:
                resp = await client.send(ctx.http, UpstreamRequest(url, dict(self.sent_headers), body), EMBED_TIMEOUT)
                if not 200 <= resp.status < 300:
                    raise self.convert_error(resp.status, await client.read_error(resp))
                return json_object(await client.read_body(resp))

        try:  # the first failure cancels the batches still under way
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(batch)) for batch in later]
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None
        return orjson.dumps(embeddings.join([json_object(raw), *(task.result() for task in tasks)]))

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return embeddings.openai_answer(body, self.meta.name.answered, self.meta.prompt_tokens)


class VertexClaudeAdaptor(_Vertex, ClaudeAdaptor):
    publisher: ClassVar[str] = "anthropic"
    platform: ClassVar[Platform] = VERTEX_CLAUDE

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        if self.express:  # refused before anything is sent; another channel may serve the model
            raise ChannelCannotServe(
                400, f"this Vertex AI channel has an API key (express mode), which serves Google's Gemini models "
                     f"only: {self.meta.model} needs a channel with a service-account key",
                "invalid_request_error", "model_not_supported", local=True)
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
