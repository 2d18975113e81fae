"""OpenAI-compatible providers: OpenAI's format at their own default base URL, nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.base import (
    OPENAI_PATHS,
    BalanceMixin,
    BalanceQueryError,
    Fetch,
    RelayMode,
    RerankMixin,
    balance_number,
)
from api.relay.providers.openai import OpenAIAdaptor
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


class MiniMaxAdaptor(OpenAIAdaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.MINIMAX
    default_base_url: ClassVar[str] = "https://api.minimax.chat"
    # The reference's minimax.GetRequestURL: chat lives at MiniMax's own v2 path.
    paths: ClassVar[Mapping[RelayMode, str]] = {**OPENAI_PATHS, RelayMode.CHAT: "/v1/text/chatcompletion_v2"}


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
