"""Channel type → adaptor class, and what the pipeline needs to know of each type.

Every ChannelType has an entry (a test checks it): its dedicated adaptor, an OpenAI-compatible one
(a subclass of OpenAIAdaptor with its base URL and paths), or `UnsupportedAdaptor` for the task
types (Midjourney, Suno), which serve no chat request (the relay answers 501). Types outside the
enum (the reference's plain OpenAI-compatible resellers) use the OpenAI adaptor.
Adding a provider: write providers/<name>/ and change its line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.relay.providers.aiproxy_library import AIProxyLibraryAdaptor
from api.relay.providers.ali import AliAdaptor
from api.relay.providers.aws import BedrockAdaptor
from api.relay.providers.azure import AzureAdaptor
from api.relay.providers.baidu import BaiduAdaptor
from api.relay.providers.claude import ClaudeAdaptor
from api.relay.providers.cohere import CohereAdaptor
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
from api.relay.providers.dify import DifyAdaptor
from api.relay.providers.gemini import GeminiAdaptor
from api.relay.providers.ollama import OllamaAdaptor
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.providers.palm import PaLMAdaptor
from api.relay.providers.tencent import TencentAdaptor
from api.relay.providers.vertex import VertexAdaptor
from api.relay.providers.xunfei import XunfeiAdaptor
from api.relay.providers.zhipu import ZhipuV3Adaptor, ZhipuV4Adaptor
from api.relay.sse import SSEEvent
from models.enums import CHANNEL_TYPE_LABELS, ChannelType


class UnsupportedAdaptor(Adaptor):
    """A task type's channel seen by the chat pipeline: it serves no mode, so the pipeline answers
    501 (and tries another channel first); it never sends anything upstream."""

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
    ChannelType.BAIDU: BaiduAdaptor,
    ChannelType.ZHIPU: ZhipuV3Adaptor,
    ChannelType.ALI: AliAdaptor,
    ChannelType.XUNFEI: XunfeiAdaptor,
    ChannelType.AI360: AI360Adaptor,
    ChannelType.OPENROUTER: OpenRouterAdaptor,
    ChannelType.AIPROXY_LIBRARY: AIProxyLibraryAdaptor,
    ChannelType.FASTGPT: FastGPTAdaptor,
    ChannelType.TENCENT: TencentAdaptor,
    ChannelType.GEMINI: GeminiAdaptor,
    ChannelType.MOONSHOT: MoonshotAdaptor,
    ChannelType.ZHIPU_V4: ZhipuV4Adaptor,
    ChannelType.PERPLEXITY: PerplexityAdaptor,
    ChannelType.LINGYIWANWU: LingYiWanWuAdaptor,
    ChannelType.AWS: BedrockAdaptor,
    ChannelType.COHERE: CohereAdaptor,
    ChannelType.MINIMAX: MiniMaxAdaptor,
    ChannelType.SUNO: UnsupportedAdaptor,  # task protocol
    ChannelType.DIFY: DifyAdaptor,
    ChannelType.JINA: JinaAdaptor,
    ChannelType.CLOUDFLARE: CloudflareAdaptor,
    ChannelType.SILICONFLOW: SiliconFlowAdaptor,
    ChannelType.VERTEX_AI: VertexAdaptor,
    ChannelType.MISTRAL: MistralAdaptor,
    ChannelType.DEEPSEEK: DeepSeekAdaptor,
    ChannelType.VOLCENGINE: VolcEngineAdaptor,
    ChannelType.XAI: XAIAdaptor,
    ChannelType.QIANFAN: OpenAIAdaptor,  # Baidu Qianfan V2 (OpenAI format under /v2): its row comes with the catalogue
}

# The reference's OpenAI-compatible resellers outside the enum, by number (their balance APIs differ).
EXTRA_ADAPTORS: Mapping[int, type[Adaptor]] = {10: AIProxyAdaptor, 12: API2GPTAdaptor, 13: AIGC2DAdaptor}

# Channel types relayed as tasks (Midjourney, Suno), never through the chat/embeddings pipeline.
TASK_CHANNEL_TYPES: frozenset[ChannelType] = frozenset(
    {ChannelType.MIDJOURNEY, ChannelType.MIDJOURNEY_PLUS, ChannelType.SUNO}
)

# Default base URL by type (each adaptor's own), used when a channel has none; absent = must be configured.
DEFAULT_BASE_URLS: Mapping[int, str] = {
    int(t): cls.default_base_url for t, cls in ADAPTORS.items() if cls.default_base_url
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
