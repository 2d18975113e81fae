"""OpenAI-compatible providers: OpenAI's format at their own default base URL, nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from api.relay.base import OPENAI_PATHS, RelayMode, RerankMixin
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
