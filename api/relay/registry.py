"""Channel type → adaptor class. Every ChannelType has an entry (a test checks it); types without a
dedicated adaptor yet use the OpenAI-compatible one, as the reference does for unmapped types.
A dedicated format (Claude, Gemini, …) is added by writing providers/<name>.py and changing its line
here; nothing else in the pipeline changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from api.relay.base import Adaptor, RelayMeta
from api.relay.providers.azure import AzureAdaptor
from api.relay.providers.compatible import (
    AI360Adaptor,
    FastGPTAdaptor,
    LingYiWanWuAdaptor,
    MiniMaxAdaptor,
    MoonshotAdaptor,
    SiliconFlowAdaptor,
)
from api.relay.providers.custom import CustomAdaptor
from api.relay.providers.ollama import OllamaAdaptor
from api.relay.providers.openai import OpenAIAdaptor
from models.enums import ChannelType

FALLBACK_ADAPTOR: type[Adaptor] = OpenAIAdaptor

ADAPTORS: dict[ChannelType, type[Adaptor]] = {
    ChannelType.OPENAI: OpenAIAdaptor,
    ChannelType.MIDJOURNEY: OpenAIAdaptor,  # task protocol: relayed by the task pipeline, not here
    ChannelType.AZURE: AzureAdaptor,
    ChannelType.OLLAMA: OllamaAdaptor,
    ChannelType.MIDJOURNEY_PLUS: OpenAIAdaptor,  # task protocol
    ChannelType.CUSTOM: CustomAdaptor,
    ChannelType.PALM: OpenAIAdaptor,  # dedicated format: later
    ChannelType.ANTHROPIC: OpenAIAdaptor,  # dedicated format: later
    ChannelType.BAIDU: OpenAIAdaptor,  # dedicated format: later
    ChannelType.ZHIPU: OpenAIAdaptor,  # dedicated format: later
    ChannelType.ALI: OpenAIAdaptor,  # dedicated format: later
    ChannelType.XUNFEI: OpenAIAdaptor,  # dedicated format: later
    ChannelType.AI360: AI360Adaptor,
    ChannelType.AIPROXY_LIBRARY: OpenAIAdaptor,  # broken in the reference; OpenAI-compatible here
    ChannelType.FASTGPT: FastGPTAdaptor,
    ChannelType.TENCENT: OpenAIAdaptor,  # dedicated format: later
    ChannelType.GEMINI: OpenAIAdaptor,  # dedicated format: later
    ChannelType.MOONSHOT: MoonshotAdaptor,
    ChannelType.ZHIPU_V4: OpenAIAdaptor,  # dedicated auth: later
    ChannelType.LINGYIWANWU: LingYiWanWuAdaptor,
    ChannelType.AWS: OpenAIAdaptor,  # dedicated format: later
    ChannelType.COHERE: OpenAIAdaptor,  # dedicated format: later
    ChannelType.MINIMAX: MiniMaxAdaptor,
    ChannelType.SUNO: OpenAIAdaptor,  # task protocol
    ChannelType.DIFY: OpenAIAdaptor,  # dedicated format: later
    ChannelType.JINA: OpenAIAdaptor,  # dedicated format: later
    ChannelType.CLOUDFLARE: OpenAIAdaptor,  # dedicated format: later
    ChannelType.SILICONFLOW: SiliconFlowAdaptor,
    ChannelType.VERTEX_AI: OpenAIAdaptor,  # dedicated format: later
}

# Channel types relayed as tasks (Midjourney, Suno), never through the chat/embeddings pipeline.
TASK_CHANNEL_TYPES: frozenset[ChannelType] = frozenset(
    {ChannelType.MIDJOURNEY, ChannelType.MIDJOURNEY_PLUS, ChannelType.SUNO}
)

# Default base URLs by type (reference §8), used when a channel has none; "" = must be configured.
DEFAULT_BASE_URLS: Mapping[int, str] = {
    ChannelType.OPENAI: "https://api.openai.com",
    ChannelType.OLLAMA: "http://localhost:11434",
    ChannelType.ANTHROPIC: "https://api.anthropic.com",
    ChannelType.BAIDU: "https://aip.baidubce.com",
    ChannelType.ZHIPU: "https://open.bigmodel.cn",
    ChannelType.ALI: "https://dashscope.aliyuncs.com",
    ChannelType.AI360: "https://ai.360.cn",
    ChannelType.AIPROXY_LIBRARY: "https://api.aiproxy.io",
    ChannelType.FASTGPT: "https://fastgpt.run/api/openapi",
    ChannelType.TENCENT: "https://hunyuan.tencentcloudapi.com",
    ChannelType.GEMINI: "https://generativelanguage.googleapis.com",
    ChannelType.MOONSHOT: "https://api.moonshot.cn",
    ChannelType.ZHIPU_V4: "https://open.bigmodel.cn",
    ChannelType.LINGYIWANWU: "https://api.lingyiwanwu.com",
    ChannelType.COHERE: "https://api.cohere.ai",
    ChannelType.MINIMAX: "https://api.minimax.chat",
    ChannelType.DIFY: "https://api.dify.ai",
    ChannelType.JINA: "https://api.jina.ai",
    ChannelType.CLOUDFLARE: "https://api.cloudflare.com",
    ChannelType.SILICONFLOW: "https://api.siliconflow.cn",
}


def get_adaptor(channel_type: int) -> type[Adaptor]:
    """The adaptor class for a channel type; unknown or unmapped types get the OpenAI-compatible one."""
    try:
        return ADAPTORS[ChannelType(channel_type)]
    except (ValueError, KeyError):
        return FALLBACK_ADAPTOR


def build_adaptor(meta: RelayMeta) -> Adaptor:
    """An adaptor for one attempt, with the type's default base URL when the channel has none."""
    if not meta.base_url and DEFAULT_BASE_URLS.get(meta.channel_type):
        meta = replace(meta, base_url=DEFAULT_BASE_URLS[meta.channel_type])
    return get_adaptor(meta.channel_type)(meta)
