"""Every channel type resolves to an adaptor; unknown types fall back to OpenAI-compatible."""

import pytest

from api.relay.base import Adaptor, RelayMeta, RelayMode
from api.relay.providers import compatible
from api.relay.providers.azure import AzureAdaptor
from api.relay.providers.custom import CustomAdaptor
from api.relay.providers.ollama import OllamaAdaptor
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.registry import ADAPTORS, DEFAULT_BASE_URLS, TASK_CHANNEL_TYPES, build_adaptor, get_adaptor
from models.enums import ChannelType


@pytest.mark.parametrize("channel_type", list(ChannelType))
def test_every_channel_type_has_an_entry(channel_type: ChannelType) -> None:
    assert channel_type in ADAPTORS
    cls = get_adaptor(channel_type)
    assert issubclass(cls, Adaptor)
    meta = RelayMeta(1, int(channel_type), "k", "https://up.example", requested_model="m")
    adaptor = build_adaptor(meta)
    served = [mode for mode in RelayMode if adaptor.supports(mode)]
    if served and channel_type != ChannelType.VERTEX_AI:  # (Vertex's URL needs a service-account key: own tests)
        # (Spark speaks WebSocket: an http(s) base URL becomes ws(s).)
        assert adaptor.request_url(served[0]).startswith(("https://up.example", "wss://up.example"))


def test_unknown_types_fall_back_to_openai_compatible() -> None:
    assert get_adaptor(999) is OpenAIAdaptor
    assert get_adaptor(7) is OpenAIAdaptor  # OhMyGPT: not in our enum
    assert get_adaptor(int(ChannelType.AZURE)) is AzureAdaptor


@pytest.mark.parametrize(
    ("channel_type", "cls", "base_url"),
    [
        (ChannelType.OPENAI, OpenAIAdaptor, "https://api.openai.com"),
        (ChannelType.AZURE, AzureAdaptor, ""),
        (ChannelType.OLLAMA, OllamaAdaptor, "http://localhost:11434"),
        (ChannelType.CUSTOM, CustomAdaptor, ""),
        (ChannelType.AI360, compatible.AI360Adaptor, "https://ai.360.cn"),
        (ChannelType.FASTGPT, compatible.FastGPTAdaptor, "https://fastgpt.run/api/openapi"),
        (ChannelType.MOONSHOT, compatible.MoonshotAdaptor, "https://api.moonshot.cn"),
        (ChannelType.LINGYIWANWU, compatible.LingYiWanWuAdaptor, "https://api.lingyiwanwu.com"),
        (ChannelType.MINIMAX, compatible.MiniMaxAdaptor, "https://api.minimax.chat"),
        (ChannelType.SILICONFLOW, compatible.SiliconFlowAdaptor, "https://api.siliconflow.cn"),
        (ChannelType.OPENROUTER, compatible.OpenRouterAdaptor, "https://openrouter.ai/api"),
        (ChannelType.PERPLEXITY, compatible.PerplexityAdaptor, "https://api.perplexity.ai"),
        (ChannelType.MISTRAL, compatible.MistralAdaptor, "https://api.mistral.ai"),
        (ChannelType.DEEPSEEK, compatible.DeepSeekAdaptor, "https://api.deepseek.com"),
        (ChannelType.VOLCENGINE, compatible.VolcEngineAdaptor, "https://ark.cn-beijing.volces.com"),
        (ChannelType.XAI, compatible.XAIAdaptor, "https://api.x.ai"),
    ],
)
def test_dedicated_entries(channel_type, cls, base_url) -> None:
    assert ADAPTORS[channel_type] is cls
    assert cls.channel_type == channel_type
    assert cls.default_base_url == base_url
    if base_url:
        assert DEFAULT_BASE_URLS[channel_type] == base_url


def test_build_adaptor_fills_the_default_base_url() -> None:
    a = build_adaptor(RelayMeta(1, ChannelType.FASTGPT, "k"))
    assert isinstance(a, compatible.FastGPTAdaptor)
    assert a.request_url() == "https://fastgpt.run/api/openapi/v1/chat/completions"
    claude = build_adaptor(RelayMeta(1, ChannelType.ANTHROPIC, "k"))
    assert claude.base_url == "https://api.anthropic.com"
    own = build_adaptor(RelayMeta(1, ChannelType.OPENAI, "k", base_url="https://mirror.example/"))
    assert own.request_url() == "https://mirror.example/v1/chat/completions"


def test_task_types() -> None:
    assert TASK_CHANNEL_TYPES == {ChannelType.MIDJOURNEY, ChannelType.MIDJOURNEY_PLUS, ChannelType.SUNO}
