"""OpenAI-compatible providers: OpenAI's format at their own default base URL, nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import (
    EVENT_NOT_OBJECT,
    OPENAI_PATHS,
    BalanceMixin,
    BalanceQueryError,
    Fetch,
    Passthrough,
    RelayMode,
    RerankMixin,
    StreamChunk,
    StreamState,
    TokenUsage,
    balance_number,
    json_object,
    openai_error,
)
from api.relay.errors import RelayError
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.sse import SSEEvent
from models.enums import ChannelType


class AI360Adaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.AI360
    default_base_url: ClassVar[str] = "https://ai.360.cn"


class FastGPTAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.FASTGPT
    default_base_url: ClassVar[str] = "https://fastgpt.run/api/openapi"


class MoonshotAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.MOONSHOT
    default_base_url: ClassVar[str] = "https://api.moonshot.cn"


class LingYiWanWuAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.LINGYIWANWU
    default_base_url: ClassVar[str] = "https://api.lingyiwanwu.com"


def minimax_error(code: Any, message: str) -> RelayError:
    """MiniMax's `base_resp.status_code` (platform.minimax.io/docs/api-reference/errorcode) → an error."""
    try:
        number = int(code)
    except (TypeError, ValueError):
        number = -1
    text = str(number) if number >= 0 else "upstream_error"
    if number in (1004, 2049):
        return RelayError(401, message, "authentication_error", text)
    if number == 1008:
        return RelayError(403, message, "insufficient_quota", text)
    if number in (1002, 1039, 1041, 2045, 2056):
        return RelayError(429, message, "rate_limit_error", text)
    if number in (1026, 1027, 1042, 2013):
        return RelayError(400, message, "invalid_request_error", text)
    return RelayError(500, message, "upstream_error", text)


def _minimax_failure(body: Mapping[str, Any]) -> RelayError | None:
    """The error a `base_resp` with a status code other than 0 stands for (None when it is 0 or absent)."""
    base = body.get("base_resp")
    if not isinstance(base, Mapping) or not base.get("status_code"):
        return None
    return minimax_error(base["status_code"], str(base.get("status_msg") or f"error {base['status_code']}"))


def _reasoning_read(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """A message or delta whose `reasoning_details` (MiniMax's thinking, with `reasoning_split`) are
    also given as `reasoning_content`; None when it has none."""
    details = message.get("reasoning_details")
    if not isinstance(details, list) or message.get("reasoning_content"):
        return None
    text = "".join(d["text"] for d in details if isinstance(d, Mapping) and isinstance(d.get("text"), str))
    return {**message, "reasoning_content": text} if text else None


def _reasoning_replayed(message: Any) -> Any:
    """An earlier assistant turn's `reasoning_content` as the `reasoning_details` MiniMax takes back."""
    if not isinstance(message, Mapping) or not isinstance(message.get("reasoning_content"), str):
        return message
    out = {k: v for k, v in message.items() if k != "reasoning_content"}
    if message["reasoning_content"] and "reasoning_details" not in message:
        out["reasoning_details"] = [{"type": "reasoning.text", "text": message["reasoning_content"]}]
    return out


class MiniMaxAdaptor(OpenAIAdaptor):
    """MiniMax's OpenAI-compatible chat (platform.minimaxi.com/docs/api-reference/text-chat-openai):
    `/v1/chat/completions` at api.minimaxi.com (China) or api.minimax.io (international), the API
    key as a Bearer token. Thinking is asked apart (`reasoning_split`, unless the client says
    otherwise; without it the thinking is a `<think>` block in `content`), and its
    `reasoning_details` are also given as `reasoning_content`; a client's earlier
    `reasoning_content` goes back as `reasoning_details`, which interleaved thinking needs on tool
    turns. MiniMax may answer HTTP 200 with `base_resp.status_code` other than 0: an error. A stream
    ends at the chunk with a finish reason and the usage, whether or not `[DONE]` follows."""

    channel_type: ClassVar[ChannelType] = ChannelType.MINIMAX
    default_base_url: ClassVar[str] = "https://api.minimaxi.com"
    paths: ClassVar[Mapping[RelayMode, str]] = {RelayMode.CHAT: OPENAI_PATHS[RelayMode.CHAT]}
    models: ClassVar[tuple[str, ...]] = (
        "MiniMax-M3", "MiniMax-M2.7", "MiniMax-M2.7-highspeed", "MiniMax-M2.5", "MiniMax-M2.5-highspeed",
        "MiniMax-M2.1", "MiniMax-M2.1-highspeed", "MiniMax-M2")

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body = super().convert_request(req)
        body.setdefault("reasoning_split", True)
        messages = body.get("messages")
        if isinstance(messages, list) and any(isinstance(m, Mapping) and "reasoning_content" in m for m in messages):
            body["messages"] = [_reasoning_replayed(m) for m in messages]
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        failure = _minimax_failure(body)
        if failure is not None:
            raise failure
        for choice in body.get("choices") or ():
            message = choice.get("message") if isinstance(choice, dict) else None
            read = _reasoning_read(message) if isinstance(message, Mapping) else None
            if read is not None:
                choice["message"] = read
        return super().convert_response(body)

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if not ev.is_done and b'"base_resp"' in ev.data:
            failure = _minimax_failure(json_object(ev.data, EVENT_NOT_OBJECT))
            if failure is not None:
                raise failure
        out: list[StreamChunk] = []
        for chunk in super().convert_stream_event(ev, state):
            choices = chunk.chunk.get("choices") if isinstance(chunk, Passthrough) else None
            if chunk.chunk.get("usage") if isinstance(chunk, Passthrough) else False:
                # MiniMax's last chunk: the finish reason with the usage (no `[DONE]` is promised after it)
                state.done = state.done or any(isinstance(c, Mapping) and c.get("finish_reason")
                                               for c in choices or ())
            read = [_reasoning_read(c["delta"]) if isinstance(c, Mapping) and isinstance(c.get("delta"), Mapping)
                    else None for c in choices] if isinstance(choices, list) else []
            if isinstance(chunk, Passthrough) and any(read):
                assert isinstance(choices, list)
                out.append({**chunk.chunk, "choices": [{**c, "delta": r} if r is not None else c
                                                       for c, r in zip(choices, read, strict=True)]})
            else:
                out.append(chunk)
        return out

    def convert_error(self, status: int, body: bytes) -> RelayError:
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        failure = _minimax_failure(data) if isinstance(data, dict) else None
        if failure is not None:
            return failure
        err = openai_error(status, body)
        if err.type == "authorized_error":  # {"type": "error", "error": {"type": "authorized_error", …}}
            err.type = "authentication_error"
        return err


class SiliconFlowAdaptor(RerankMixin, OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.SILICONFLOW
    default_base_url: ClassVar[str] = "https://api.siliconflow.cn"

    def has_balance(self) -> bool:
        return True

    async def query_balance(self, fetch: Fetch) -> float:
        data = await fetch(self.get(f"{self.base_url}/v1/user/info"))
        return balance_number((data.get("data") or {}).get("totalBalance"), "totalBalance")


# The reference's resellers outside our enum: OpenAI's format, each with its own balance endpoint.


class AIProxyBalanceMixin(BalanceMixin):
    """AIProxy's account overview (its OpenAI-compatible API and its knowledge-base API share it)."""

    balance_base_url: ClassVar[str] = "https://aiproxy.io"

    def has_balance(self) -> bool:
        return True

    async def query_balance(self: Any, fetch: Fetch) -> float:
        base = self.meta.base_url.rstrip("/") or self.balance_base_url
        data = await fetch(self.get(f"{base}/api/report/getUserOverview", {"Api-Key": self.meta.key}))
        if not data.get("success"):
            raise BalanceQueryError(str(data.get("message") or "failed"))
        return balance_number((data.get("data") or {}).get("totalPoints"), "totalPoints")


class AIProxyAdaptor(AIProxyBalanceMixin, OpenAIAdaptor):
    default_base_url: ClassVar[str] = "https://api.aiproxy.io"


class API2GPTAdaptor(OpenAIAdaptor):
    default_base_url: ClassVar[str] = "https://api.api2gpt.com"
    remaining_field: ClassVar[str] = "total_remaining"

    def has_balance(self) -> bool:
        return True

    async def query_balance(self, fetch: Fetch) -> float:
        data = await fetch(self.get(f"{self.base_url}/dashboard/billing/credit_grants"))
        return balance_number(data.get(self.remaining_field), self.remaining_field)


class AIGC2DAdaptor(API2GPTAdaptor):
    default_base_url: ClassVar[str] = "https://api.aigc2d.com"
    remaining_field: ClassVar[str] = "total_available"


class OpenRouterAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.OPENROUTER
    default_base_url: ClassVar[str] = "https://openrouter.ai/api"
    models: ClassVar[tuple[str, ...]] = (
        "openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-3.5-sonnet", "google/gemini-flash-1.5",
        "meta-llama/llama-3.1-70b-instruct", "deepseek/deepseek-chat",
    )


class PerplexityAdaptor(OpenAIAdaptor):
    """Perplexity serves chat at `/chat/completions` (no `/v1`), and nothing else."""

    channel_type: ClassVar[ChannelType] = ChannelType.PERPLEXITY
    default_base_url: ClassVar[str] = "https://api.perplexity.ai"
    paths: ClassVar[Mapping[RelayMode, str]] = {RelayMode.CHAT: "/chat/completions"}
    models: ClassVar[tuple[str, ...]] = ("sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro",
                                         "sonar-deep-research", "r1-1776")

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT


class MistralAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.MISTRAL
    default_base_url: ClassVar[str] = "https://api.mistral.ai"
    models: ClassVar[tuple[str, ...]] = (
        "mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "codestral-latest",
        "pixtral-large-latest", "ministral-8b-latest", "open-mistral-nemo", "mistral-embed",
    )

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.EMBEDDINGS, RelayMode.MODERATIONS)


class DeepSeekAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.DEEPSEEK
    default_base_url: ClassVar[str] = "https://api.deepseek.com"
    models: ClassVar[tuple[str, ...]] = ("deepseek-chat", "deepseek-reasoner")

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.COMPLETIONS)


VOLCENGINE_PATHS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "/api/v3/chat/completions",
    RelayMode.EMBEDDINGS: "/api/v3/embeddings",
    RelayMode.IMAGES: "/api/v3/images/generations",
}


class VolcEngineAdaptor(OpenAIAdaptor):
    """VolcEngine Ark (Doubao): OpenAI's format under `/api/v3`; the model is an endpoint or model id."""

    channel_type: ClassVar[ChannelType] = ChannelType.VOLCENGINE
    default_base_url: ClassVar[str] = "https://ark.cn-beijing.volces.com"
    paths: ClassVar[Mapping[RelayMode, str]] = VOLCENGINE_PATHS
    models: ClassVar[tuple[str, ...]] = (
        "doubao-1-5-pro-32k-250115", "doubao-1-5-lite-32k-250115", "doubao-1-5-vision-pro-32k-250115",
        "deepseek-r1-250120", "deepseek-v3-250324", "doubao-embedding-text-240715",
    )

    def supports(self, mode: RelayMode) -> bool:
        return mode in VOLCENGINE_PATHS


class XAIAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.XAI
    default_base_url: ClassVar[str] = "https://api.x.ai"
    models: ClassVar[tuple[str, ...]] = ("grok-3", "grok-3-mini", "grok-2-1212", "grok-2-vision-1212", "grok-beta")

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.COMPLETIONS, RelayMode.EMBEDDINGS, RelayMode.IMAGES)


JINA_PATHS: Mapping[RelayMode, str] = {RelayMode.EMBEDDINGS: "/v1/embeddings", RelayMode.RERANK: "/v1/rerank"}


class JinaAdaptor(RerankMixin, OpenAIAdaptor):
    """Jina (type 38): embeddings (OpenAI's format) and rerank (`results` with `relevance_score`)."""

    channel_type: ClassVar[ChannelType] = ChannelType.JINA
    default_base_url: ClassVar[str] = "https://api.jina.ai"
    paths: ClassVar[Mapping[RelayMode, str]] = JINA_PATHS
    models: ClassVar[tuple[str, ...]] = ("jina-embeddings-v3", "jina-clip-v2", "jina-reranker-v2-base-multilingual",
                                         "jina-colbert-v2")

    def supports(self, mode: RelayMode) -> bool:
        return mode in JINA_PATHS


class CloudflareAdaptor(OpenAIAdaptor):
    """Cloudflare Workers AI (type 39): OpenAI's format at
    `/client/v4/accounts/{account id}/ai/v1/…`; the account id is the channel's `other`."""

    channel_type: ClassVar[ChannelType] = ChannelType.CLOUDFLARE
    default_base_url: ClassVar[str] = "https://api.cloudflare.com"
    models: ClassVar[tuple[str, ...]] = (
        "@cf/meta/llama-3.1-8b-instruct", "@cf/meta/llama-3.3-70b-instruct-fp8-fast", "@cf/qwen/qwen1.5-14b-chat-awq",
        "@cf/mistral/mistral-7b-instruct-v0.1", "@cf/baai/bge-base-en-v1.5", "@cf/baai/bge-m3",
    )

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.EMBEDDINGS)

    def request_url(self, mode: RelayMode | None = None) -> str:
        task = "embeddings" if (mode or self.meta.mode) == RelayMode.EMBEDDINGS else "chat/completions"
        return f"{self.base_url}/client/v4/accounts/{self.meta.other.strip()}/ai/v1/{task}"
