"""Channel type → adaptor class, and what the pipeline needs to know of each type.

Every ChannelType has an entry (a test checks it): its dedicated adaptor, an OpenAI-compatible one
(a subclass of OpenAIAdaptor with its base URL and paths), or `UnsupportedAdaptor` for a type whose
format is not written yet, which serves nothing (the relay answers 501 and channel creation
refuses the type). Types outside the enum (the reference's plain OpenAI-compatible resellers) use
the OpenAI adaptor. Adding a provider: write providers/<name>/ and change its line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.relay.providers.aws import BedrockAdaptor
from api.relay.providers.azure import AzureAdaptor
from api.relay.providers.claude import ClaudeAdaptor
from api.relay.providers.compatible import (
    AI360Adaptor,
    AIGC2DAdaptor,
    AIProxyAdaptor,
    API2GPTAdaptor,
    CloudflareAdaptor,
    DeepSeekAdaptor,
    FastGPTAdaptor,
    JinaAdaptor,
    LingYiWanWuAdaptor,
    MiniMaxAdaptor,
    MistralAdaptor,
    MoonshotAdaptor,
    OpenRouterAdaptor,
    PerplexityAdaptor,
    SiliconFlowAdaptor,
    VolcEngineAdaptor,
    XAIAdaptor,
)
from api.relay.providers.custom import CustomAdaptor
from api.relay.providers.gemini import GeminiAdaptor
from api.relay.providers.ollama import OllamaAdaptor
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.providers.palm import PaLMAdaptor
from api.relay.providers.vertex import VertexAdaptor
from api.relay.providers.zhipu import ZhipuV4Adaptor
from api.relay.sse import SSEEvent
from models.enums import CHANNEL_TYPE_LABELS, ChannelType


class UnsupportedAdaptor(Adaptor):
    """A type whose format is not written yet: it serves no mode, so the pipeline answers 501
    (and tries another channel first); it never sends anything upstream."""

    channel_type: ClassVar[ChannelType]

    def supports(self, mode: RelayMode) -> bool:
        return False

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        raise NotImplementedError

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        raise NotImplementedError


FALLBACK_ADAPTOR: type[Adaptor] = OpenAIAdaptor

ADAPTORS: dict[ChannelType, type[Adaptor]] = {
    ChannelType.OPENAI: OpenAIAdaptor,
    ChannelType.MIDJOURNEY: UnsupportedAdaptor,  # task protocol: relayed by the task pipeline, not here
    ChannelType.AZURE: AzureAdaptor,
    ChannelType.OLLAMA: OllamaAdaptor,
    ChannelType.MIDJOURNEY_PLUS: UnsupportedAdaptor,  # task protocol
    ChannelType.CUSTOM: CustomAdaptor,
    ChannelType.PALM: PaLMAdaptor,
    ChannelType.ANTHROPIC: ClaudeAdaptor,
    ChannelType.BAIDU: UnsupportedAdaptor,
    ChannelType.ZHIPU: UnsupportedAdaptor,
    ChannelType.ALI: UnsupportedAdaptor,
    ChannelType.XUNFEI: UnsupportedAdaptor,
    ChannelType.AI360: AI360Adaptor,
    ChannelType.OPENROUTER: OpenRouterAdaptor,
    ChannelType.AIPROXY_LIBRARY: UnsupportedAdaptor,
    ChannelType.FASTGPT: FastGPTAdaptor,
    ChannelType.TENCENT: UnsupportedAdaptor,
    ChannelType.GEMINI: GeminiAdaptor,
    ChannelType.MOONSHOT: MoonshotAdaptor,
    ChannelType.ZHIPU_V4: ZhipuV4Adaptor,
    ChannelType.PERPLEXITY: PerplexityAdaptor,
    ChannelType.LINGYIWANWU: LingYiWanWuAdaptor,
    ChannelType.AWS: BedrockAdaptor,
    ChannelType.COHERE: UnsupportedAdaptor,
    ChannelType.MINIMAX: MiniMaxAdaptor,
    ChannelType.SUNO: UnsupportedAdaptor,  # task protocol
    ChannelType.DIFY: UnsupportedAdaptor,
    ChannelType.JINA: JinaAdaptor,
    ChannelType.CLOUDFLARE: CloudflareAdaptor,
    ChannelType.SILICONFLOW: SiliconFlowAdaptor,
    ChannelType.VERTEX_AI: VertexAdaptor,
    ChannelType.MISTRAL: MistralAdaptor,
    ChannelType.DEEPSEEK: DeepSeekAdaptor,
    ChannelType.VOLCENGINE: VolcEngineAdaptor,
    ChannelType.XAI: XAIAdaptor,
}

# The reference's OpenAI-compatible resellers outside the enum, by number (their balance APIs differ).
EXTRA_ADAPTORS: Mapping[int, type[Adaptor]] = {10: AIProxyAdaptor, 12: API2GPTAdaptor, 13: AIGC2DAdaptor}

# Channel types relayed as tasks (Midjourney, Suno), never through the chat/embeddings pipeline.
TASK_CHANNEL_TYPES: frozenset[ChannelType] = frozenset(
    {ChannelType.MIDJOURNEY, ChannelType.MIDJOURNEY_PLUS, ChannelType.SUNO}
)

# The reference's default addresses (§8) of the types whose adaptor is not written yet; every other
# type's default is its adaptor's own `default_base_url`, so the two can never disagree.
PENDING_BASE_URLS: Mapping[int, str] = {
    ChannelType.BAIDU: "https://aip.baidubce.com",
    ChannelType.ZHIPU: "https://open.bigmodel.cn",
    ChannelType.ALI: "https://dashscope.aliyuncs.com",
    ChannelType.AIPROXY_LIBRARY: "https://api.aiproxy.io",
    ChannelType.TENCENT: "https://hunyuan.tencentcloudapi.com",
    ChannelType.COHERE: "https://api.cohere.ai",
    ChannelType.DIFY: "https://api.dify.ai",
}

# Default base URL by type, used when a channel has none; absent = must be configured.
DEFAULT_BASE_URLS: Mapping[int, str] = {
    **PENDING_BASE_URLS,
    **{int(t): cls.default_base_url for t, cls in ADAPTORS.items() if cls.default_base_url},
}


def get_adaptor(channel_type: int) -> type[Adaptor]:
    """The adaptor class for a channel type; types outside the enum get the OpenAI-compatible one."""
    try:
        return ADAPTORS[ChannelType(channel_type)]
    except (ValueError, KeyError):
        return EXTRA_ADAPTORS.get(channel_type, FALLBACK_ADAPTOR)


def is_relayable(channel_type: int) -> bool:
    """Whether chat requests can be relayed to this type (False: no adaptor yet, or a task type)."""
    return get_adaptor(channel_type) is not UnsupportedAdaptor


def type_label(channel_type: int) -> str:
    try:
        return f"{CHANNEL_TYPE_LABELS[ChannelType(channel_type)]} ({channel_type})"
    except (ValueError, KeyError):
        return str(channel_type)


def build_adaptor(meta: RelayMeta) -> Adaptor:
    """An adaptor for one attempt (it falls back to its type's default base URL by itself)."""
    return get_adaptor(meta.channel_type).variant(meta)(meta)
