"""The provider catalogue: one row per channel type, the only place that says what a type is.

The registry (adaptors), the channel rules (base URL, key format, `other`), the inbound formats
relayed as sent, the retry and disable rules, the channel test and balance jobs, the importer and
the console (`GET /api/channel/types`) all read these rows; nothing else in the code names a type.

Adding a provider: an OpenAI-compatible one is one row here (its base URL, and `paths`/`modes`
when it differs); one that speaks its own API is a module in api/upstream/providers/ with its
adaptor, a row here naming it, a strict fake and a test (README, "Adding a provider"). A task or
video protocol is the same: its `TaskAdaptor` (api/upstream/task_base.py) in the provider's module
(beside its chat adaptor where it has one), named by the row's `task` or `video`.
Type numbers are new-api's, so that databases and scripts move over unchanged.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from enum import IntEnum
from typing import Any

from api.upstream.base import RelayMode
from api.upstream.provider import (
    ANTHROPIC,
    GEMINI,
    RESPONSES,
    KeyFormat,
    OtherField,
    Preset,
    Provider,
    Text,
    parts_key,
)
from api.upstream.providers import aws, azure, qianfan, tencent, vertex, xunfei_http, zhipu
from api.upstream.providers.aiproxy_library import AIProxyLibraryAdaptor
from api.upstream.providers.ali import AliAdaptor
from api.upstream.providers.aws import BedrockAdaptor
from api.upstream.providers.aws.models import MODELS as BEDROCK_MODELS
from api.upstream.providers.aws.models import is_claude
from api.upstream.providers.azure import AzureAdaptor
from api.upstream.providers.claude import ClaudeAdaptor
from api.upstream.providers.claude.adaptor import MODELS as CLAUDE_MODELS
from api.upstream.providers.cohere import CohereAdaptor
from api.upstream.providers.compatible import (
    AIGC2DAdaptor,
    AIProxyAdaptor,
    API2GPTAdaptor,
    CloudflareAdaptor,
    RerankingAdaptor,
    SiliconFlowAdaptor,
)
from api.upstream.providers.custom import CustomAdaptor
from api.upstream.providers.dify import DifyAdaptor
from api.upstream.providers.gemini import GeminiAdaptor
from api.upstream.providers.gemini.adaptor import MODELS as GEMINI_MODELS
from api.upstream.providers.gemini.veo import VeoGeminiAdaptor
from api.upstream.providers.jimeng import JimengAdaptor
from api.upstream.providers.kling import KlingAdaptor
from api.upstream.providers.midjourney import MidjourneyAdaptor, MidjourneyPlusAdaptor
from api.upstream.providers.minimax import MiniMaxAdaptor
from api.upstream.providers.ollama import OllamaAdaptor
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.providers.openai_videos import OpenAIVideoAdaptor
from api.upstream.providers.qianfan import QianfanAdaptor
from api.upstream.providers.seedance import SeedanceAdaptor
from api.upstream.providers.suno import SunoAdaptor
from api.upstream.providers.tencent import TencentAdaptor
from api.upstream.providers.unserved import UnservedAdaptor
from api.upstream.providers.vertex import VertexAdaptor
from api.upstream.providers.vertex.adaptor import MODELS as VERTEX_MODELS
from api.upstream.providers.vertex.veo import VeoVertexAdaptor
from api.upstream.providers.vidu import ViduAdaptor
from api.upstream.providers.xunfei import XunfeiAdaptor
from api.upstream.providers.zhipu import ZhipuV4Adaptor
from api.upstream.signing import google

# -- key formats and `other` fields shared by several rows ------------------------------------------

CLOUDFLARE_ACCOUNT = re.compile(r"^[A-Za-z0-9]{1,64}$")


def service_account_problem(key: str) -> str:
    """Why `key` is not a Google service-account key ("" when it is one)."""
    try:
        google.parse_service_account(key)
    except ValueError as exc:
        return str(exc)
    return ""


def _required(message: str) -> Callable[[str], tuple[str, dict[str, Any]] | None]:
    def check(value: str) -> tuple[str, dict[str, Any]] | None:
        return None if value.strip() else (message, {})
    return check


def _cloudflare_account(value: str) -> tuple[str, dict[str, Any]] | None:
    return None if CLOUDFLARE_ACCOUNT.match(value.strip()) else ("channel_cloudflare_account_required", {})


def _message(problem: Callable[[str], str | None]) -> Callable[[str], tuple[str, dict[str, Any]] | None]:
    """A provider module's `other_problem` (an i18n key or None) as an `OtherField.check`."""
    def check(value: str) -> tuple[str, dict[str, Any]] | None:
        message = problem(value)
        return None if message is None else (message, {})
    return check


OPENAI_MODELS = (
    "gpt-5.5", "gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.3-codex",
    "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini",
    "text-embedding-3-small", "text-embedding-3-large", "omni-moderation-latest", "gpt-image-1.5", "whisper-1",
    "gpt-4o-transcribe", "gpt-4o-mini-tts", "tts-1", "tts-1-hd",
)
AZURE_MODELS = (
    "gpt-5.5", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-5-nano",
    "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini", "o3-mini", "gpt-4o", "gpt-4o-mini",
    "text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002",
)
MJ_MODELS = (
    "mj_imagine", "mj_variation", "mj_reroll", "mj_blend", "mj_upscale", "mj_describe", "mj_zoom",
    "mj_shorten", "mj_modal", "mj_inpaint", "mj_custom_zoom", "mj_high_variation", "mj_low_variation",
    "mj_pan", "mj_upload", "swap_face",
)
CHAT, COMPLETIONS, EMBEDDINGS, MODERATIONS, IMAGES, RERANK = (
    RelayMode.CHAT, RelayMode.COMPLETIONS, RelayMode.EMBEDDINGS, RelayMode.MODERATIONS, RelayMode.IMAGES,
    RelayMode.RERANK)
CUSTOM_URL_HELP: Text = ("The full URL, e.g. https://api.openai.com/v1/chat/completions",
                         "请输入完整的 URL，例如：https://api.openai.com/v1/chat/completions")
GLM_CODING = ("glm-4.6", "glm-4.5-air")

# -- the rows ------------------------------------------------------------------------------------------

PROVIDERS: tuple[Provider, ...] = (
    Provider(1, "OPENAI", ("OpenAI", "OpenAI"), OpenAIAdaptor, "https://api.openai.com", models=OPENAI_MODELS,
             native=frozenset({RESPONSES}), stream_options=True, balance=True, fetch_models=True, organization=True,
             video=OpenAIVideoAdaptor, image_edits=True),
    Provider(2, "MIDJOURNEY", ("Midjourney Proxy", "Midjourney Proxy"), UnservedAdaptor, models=MJ_MODELS,
             task=MidjourneyAdaptor),
    Provider(3, "AZURE", ("Azure OpenAI", "Azure OpenAI"), AzureAdaptor, models=AZURE_MODELS,
             native=frozenset({RESPONSES}), stream_options=True,
             image_edits=True,
             base_url_label=("Endpoint, e.g. https://<resource>.openai.azure.com",
                             "终结点，例如 https://<resource>.openai.azure.com"),
             key=KeyFormat(("The API key (Keys and Endpoint in the Azure portal)",
                            "API 密钥（Azure 门户「密钥和终结点」）")),
             other=OtherField(("API version (empty: v1 API)", "API 版本（留空即 v1 API）"), placeholder="v1",
                              check=_message(azure.other_problem)),
             notice=("The model name is sent as the deployment name; use model mapping for other deployment names.",
                     "模型名即部署名称；部署名称不同时请用模型映射。")),
    Provider(4, "OLLAMA", ("Ollama", "Ollama"), OllamaAdaptor, "http://localhost:11434",
             models=("llama3.3", "qwen3", "gemma3", "mistral", "deepseek-r1", "nomic-embed-text"),
             modes=frozenset({CHAT, COMPLETIONS, EMBEDDINGS}), fetch_models=True),
    Provider(5, "MIDJOURNEY_PLUS", ("Midjourney Proxy Plus", "Midjourney Proxy Plus"), UnservedAdaptor,
             models=MJ_MODELS, task=MidjourneyPlusAdaptor),
    Provider(8, "CUSTOM", ("Custom", "自定义渠道"), CustomAdaptor, models=OPENAI_MODELS, base_url_help=CUSTOM_URL_HELP,
             balance=True, organization=True, image_edits=True),
    Provider(11, "PALM", ("Google PaLM2", "Google PaLM2"), UnservedAdaptor,
             "https://generativelanguage.googleapis.com",
             models=("chat-bison-001",),
             retired=("Google decommissioned PaLM 2 on 2024-08-15: use a Google Gemini channel (type 24)",
                      "Google 已于 2024-08-15 停用 PaLM 2：请改用 Google Gemini 渠道（类型 24）")),
    Provider(14, "ANTHROPIC", ("Anthropic Claude", "Anthropic Claude"), ClaudeAdaptor, "https://api.anthropic.com",
             models=CLAUDE_MODELS, native=frozenset({ANTHROPIC}), retry_400=True,
             presets=(
                 Preset("zhipu-coding", ("Zhipu GLM Coding Plan", "智谱 GLM 编码套餐"),
                        "https://open.bigmodel.cn/api/anthropic", GLM_CODING),
                 Preset("zai-coding", ("Z.ai GLM Coding Plan", "Z.ai GLM 编码套餐"), "https://api.z.ai/api/anthropic",
                        GLM_CODING),
                 Preset("moonshot", ("Moonshot Kimi", "月之暗面 Kimi"), "https://api.moonshot.cn/anthropic",
                        ("kimi-k2.6", "kimi-k2-thinking")),
                 Preset("deepseek", ("DeepSeek", "DeepSeek"), "https://api.deepseek.com/anthropic",
                        ("deepseek-chat", "deepseek-reasoner")),
                 Preset("bailian", ("Alibaba Bailian", "阿里云百炼"), "https://dashscope.aliyuncs.com/apps/anthropic",
                        ("qwen3-coder-plus", "qwen3-max")),
                 Preset("volcengine", ("Volcengine Ark Coding Plan", "火山方舟编码套餐"),
                        "https://ark.cn-beijing.volces.com/api/coding", ("ark-code-latest", "doubao-seed-code")),
                 Preset("minimax", ("MiniMax", "MiniMax"), "https://api.minimaxi.com/anthropic", ("MiniMax-M2",)),
             )),
    Provider(15, "BAIDU", ("Baidu ERNIE V1", "百度文心千帆 V1"), UnservedAdaptor, "https://aip.baidubce.com",
             key=KeyFormat(("APIKey|SecretKey", "APIKey|SecretKey"), parts_key(2, "channel_key_baidu")),
             retired=("Baidu switched the V1 API (wenxinworkshop) off on 2026-08-31: use Baidu Qianfan V2 (type 46)",
                      "百度已于 2026-08-31 关闭 V1 接口（wenxinworkshop）：请改用百度千帆 V2（类型 46）")),
    Provider(16, "ZHIPU", ("Zhipu ChatGLM v3", "智谱 ChatGLM v3"), UnservedAdaptor, "https://open.bigmodel.cn",
             models=("chatglm_turbo", "chatglm_pro", "chatglm_std", "chatglm_lite"),
             retired=("Zhipu took the ChatGLM v3 models offline in 2023: use a Zhipu GLM v4 channel (type 26)",
                      "智谱已于 2023 年下线 ChatGLM v3 模型：请改用智谱 GLM v4 渠道（类型 26）")),
    Provider(17, "ALI", ("Alibaba Qwen", "阿里通义千问"), AliAdaptor, "https://dashscope.aliyuncs.com",
             models=("qwen3-max", "qwen-plus", "qwen-flash", "qwen-turbo", "qwen-max", "qwen-long", "qwen3-coder-plus",
                     "qwen-vl-max", "qwq-plus", "text-embedding-v4", "text-embedding-v3", "wanx2.1-t2i-turbo",
                     # The image edit models of ali_images.py are served but not listed by default: Alibaba's own
                     # list price was not found for them, and a default model is a priced one (test_seam).
                     "wanx2.1-imageedit"),
             other=OtherField(("Plugin parameter", "插件参数")), stream_options=True),
    Provider(18, "XUNFEI", ("iFlytek Spark", "讯飞星火认知"), XunfeiAdaptor, xunfei_http.HTTP_BASE_URL,
             models=("lite", "generalv3", "pro-128k", "generalv3.5", "max-32k", "4.0Ultra", "x1"),
             key=KeyFormat(("APIPassword of the HTTP API (or APIKey:APISecret), or APPID|APISecret|APIKey for the "
                            "WebSocket API", "HTTP 接口的 APIPassword（或 APIKey:APISecret），或 WebSocket 接口的 "
                            "APPID|APISecret|APIKey"), xunfei_http.key_problem),
             other=OtherField(("Version of a bare SparkDesk model (optional)", "SparkDesk 模型的版本（可选）"),
                              placeholder="v3.5", check=_message(xunfei_http.other_problem))),
    Provider(19, "AI360", ("360", "360 智脑"), OpenAIAdaptor, "https://ai.360.cn",
             models=("360gpt2-o1", "360gpt-pro", "360gpt-turbo", "embedding_s1_v1"), fetch_models=True),
    Provider(20, "OPENROUTER", ("OpenRouter", "OpenRouter"), OpenAIAdaptor, "https://openrouter.ai/api",
             models=("openai/gpt-5.1", "anthropic/claude-sonnet-4.5", "google/gemini-2.5-pro", "deepseek/deepseek-chat",
                     "moonshotai/kimi-k2", "x-ai/grok-4"), native=frozenset({RESPONSES}), fetch_models=True),
    Provider(21, "AIPROXY_LIBRARY", ("Knowledge base: AI Proxy", "知识库：AI Proxy"), AIProxyLibraryAdaptor,
             "https://api.aiproxy.io", balance=True,
             other=OtherField(("Knowledge base ID", "知识库 ID"), check=_required("channel_library_id_required"))),
    Provider(22, "FASTGPT", ("Knowledge base: FastGPT", "知识库：FastGPT"), OpenAIAdaptor,
             "https://fastgpt.run/api/openapi"),
    Provider(23, "TENCENT", ("Tencent Hunyuan", "腾讯混元"), TencentAdaptor, "https://hunyuan.tencentcloudapi.com",
             models=tencent.MODELS,
             key=KeyFormat(("An API key from the Hunyuan console, or AppId|SecretId|SecretKey",
                            "混元控制台的 API Key，或 AppId|SecretId|SecretKey"), tencent.key_problem)),
    Provider(24, "GEMINI", ("Google Gemini", "Google Gemini"), GeminiAdaptor, "https://generativelanguage.googleapis.com",
             models=GEMINI_MODELS, native=frozenset({GEMINI}), disable_on_403=True, video=VeoGeminiAdaptor,
             modes=frozenset({CHAT, EMBEDDINGS, IMAGES, RelayMode.IMAGES_EDIT})),
    Provider(25, "MOONSHOT", ("Moonshot", "Moonshot"), OpenAIAdaptor, "https://api.moonshot.cn",
             models=("kimi-k2.6", "kimi-k2.5", "kimi-k2-thinking", "kimi-k2-turbo-preview", "moonshot-v1-128k"),
             fetch_models=True),
    Provider(26, "ZHIPU_V4", ("Zhipu GLM v4", "智谱 GLM v4"), ZhipuV4Adaptor, "https://open.bigmodel.cn",
             models=("glm-5.3", "glm-5.2", "glm-5.1", "glm-5", "glm-5-turbo", "glm-4.7", "glm-4.7-flash", "glm-4.6",
                     "glm-4.5-air", "glm-4-flash-250414", "glm-4-long", "glm-5v-turbo", "glm-4.6v", "embedding-3",
                     "cogview-4"),
             key=KeyFormat(("The API key from the Zhipu (bigmodel.cn) or Z.ai console",
                            "智谱开放平台（bigmodel.cn）或 Z.ai 控制台中的 API Key"), zhipu.key_problem)),
    Provider(27, "PERPLEXITY", ("Perplexity", "Perplexity"), OpenAIAdaptor, "https://api.perplexity.ai",
             models=("sonar", "sonar-pro", "sonar-reasoning-pro", "sonar-deep-research"),
             paths={CHAT: "/chat/completions"}, modes=frozenset({CHAT})),
    Provider(31, "LINGYIWANWU", ("Yi", "零一万物"), OpenAIAdaptor, "https://api.lingyiwanwu.com",
             models=("yi-lightning", "yi-large", "yi-medium", "yi-vision"), fetch_models=True),
    Provider(33, "AWS", ("AWS Bedrock", "AWS Bedrock"), BedrockAdaptor, derived_url=True, models=BEDROCK_MODELS,
             native=frozenset({ANTHROPIC}), native_models=is_claude,
             key=KeyFormat(("AccessKeyId|SecretAccessKey|Region (e.g. AKIA…|wJal…|us-east-1), or BedrockApiKey|Region "
                            "with a Bedrock API key (ABSK… or bedrock-api-key-…, e.g. ABSK…|us-east-1)",
                            "AccessKeyId|SecretAccessKey|Region（例如 AKIA…|wJal…|us-east-1），"
                            "或 BedrockApiKey|Region，"
                            "使用 Bedrock API 密钥（ABSK… 或 bedrock-api-key-…，例如 ABSK…|us-east-1）"),
                           aws.key_problem),
             other=OtherField(("Claude beta flags (optional, comma-separated)", "Claude beta 标志（可选，逗号分隔）"))),
    Provider(34, "COHERE", ("Cohere", "Cohere"), CohereAdaptor, "https://api.cohere.com",
             models=("command-a-plus-05-2026", "command-a-03-2025", "command-a-reasoning-08-2025",
                     "command-a-vision-07-2025", "command-a-translate-08-2025", "command-r7b-12-2024",
                     "command-r-plus-08-2024", "command-r-08-2024", "rerank-v4.0-pro", "rerank-v4.0-fast",
                     "rerank-v3.5",
                     "embed-v4.0", "embed-english-v3.0", "embed-multilingual-v3.0"),
             key=KeyFormat(("Cohere API key", "Cohere API 密钥"))),
    Provider(35, "MINIMAX", ("MiniMax", "MiniMax"), MiniMaxAdaptor, "https://api.minimaxi.com",
             models=("MiniMax-M3", "MiniMax-M2.7", "MiniMax-M2.7-highspeed", "MiniMax-M2.5", "MiniMax-M2.5-highspeed",
                     "MiniMax-M2.1", "MiniMax-M2.1-highspeed", "MiniMax-M2"),
             paths={CHAT: "/v1/chat/completions"}, modes=frozenset({CHAT})),
    Provider(36, "SUNO", ("Suno API", "Suno API"), UnservedAdaptor, models=("suno_music", "suno_lyrics"),
             task=SunoAdaptor),
    Provider(37, "DIFY", ("Dify", "Dify"), DifyAdaptor, "https://api.dify.ai", models=("dify",)),
    Provider(38, "JINA", ("Jina", "Jina"), RerankingAdaptor, "https://api.jina.ai",
             models=("jina-embeddings-v4", "jina-embeddings-v3", "jina-clip-v2", "jina-reranker-m0",
                     "jina-reranker-v2-base-multilingual", "jina-colbert-v2"),
             paths={EMBEDDINGS: "/v1/embeddings", RERANK: "/v1/rerank"}, modes=frozenset({EMBEDDINGS, RERANK})),
    Provider(39, "CLOUDFLARE", ("Cloudflare", "Cloudflare"), CloudflareAdaptor, "https://api.cloudflare.com",
             models=("@cf/openai/gpt-oss-120b", "@cf/meta/llama-4-scout-17b-16e-instruct",
                     "@cf/meta/llama-3.3-70b-instruct-fp8-fast", "@cf/meta/llama-3.1-8b-instruct",
                     "@cf/qwen/qwq-32b", "@cf/baai/bge-m3", "@cf/baai/bge-base-en-v1.5"),
             modes=frozenset({CHAT, EMBEDDINGS}), stream_options=True,
             other=OtherField(("Account ID", "Account ID"), check=_cloudflare_account)),
    Provider(40, "SILICONFLOW", ("SiliconFlow", "硅基流动"), SiliconFlowAdaptor, "https://api.siliconflow.cn",
             models=("deepseek-ai/DeepSeek-V3.2", "Qwen/Qwen3-235B-A22B-Instruct-2507",
                     "moonshotai/Kimi-K2-Instruct-0905",
                     "zai-org/GLM-4.6", "BAAI/bge-m3", "BAAI/bge-reranker-v2-m3"),
             balance=True, fetch_models=True),
    Provider(41, "VERTEX_AI", ("Vertex AI", "Vertex AI"), VertexAdaptor, derived_url=True, models=VERTEX_MODELS,
             modes=frozenset({CHAT, EMBEDDINGS, IMAGES, RelayMode.IMAGES_EDIT}),
             video=VeoVertexAdaptor,
             native=frozenset({ANTHROPIC}), native_models=lambda model: model.startswith("claude"),
             key=KeyFormat(("A Google Cloud service-account JSON key (paste the whole file; Gemini, Claude and "
                            "embedding models, region per model below), or a Vertex AI API key on one line "
                            "(AIza… / AQ.…; Google's models only, global endpoint)",
                            "Google Cloud 服务账号 JSON 密钥（粘贴整个文件；可用 Gemini、Claude 与向量模型，地区在下方"
                            "按模型设置），或一行 Vertex AI API Key（AIza… / AQ.…；仅 Google 模型，全局端点）"),
                           vertex.key_problem, whole=True, detail=service_account_problem),
             other=OtherField(("Deployment region", "部署地区"), rows=4, check=_message(vertex.other_problem),
                              placeholder="us-central1",
                              template=json.dumps({"default": "us-central1", "claude-sonnet-4-6": "us-east5"},
                                                  indent=2))),
    Provider(42, "MISTRAL", ("Mistral", "Mistral"), OpenAIAdaptor, "https://api.mistral.ai",
             models=("mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "magistral-medium-latest",
                     "codestral-latest", "devstral-medium-latest", "pixtral-large-latest", "ministral-8b-latest",
                     "mistral-embed"),
             modes=frozenset({CHAT, EMBEDDINGS, MODERATIONS})),
    Provider(43, "DEEPSEEK", ("DeepSeek", "DeepSeek"), OpenAIAdaptor, "https://api.deepseek.com",
             models=("deepseek-chat", "deepseek-reasoner"), modes=frozenset({CHAT, COMPLETIONS}), stream_options=True),
    Provider(45, "VOLCENGINE", ("VolcEngine (Doubao)", "字节火山引擎"), OpenAIAdaptor, "https://ark.cn-beijing.volces.com",
             models=("doubao-seed-1-6-251015", "doubao-seed-1-6-flash-250828", "doubao-seed-code",
                     "deepseek-v3-1-250821",
                     "kimi-k2-250905", "doubao-embedding-text-240715", "doubao-seedream-4-0-250828"),
             paths={CHAT: "/api/v3/chat/completions", EMBEDDINGS: "/api/v3/embeddings",
                    IMAGES: "/api/v3/images/generations"},
             modes=frozenset({CHAT, EMBEDDINGS, IMAGES}), stream_options=True),
    Provider(54, "DOUBAO_VIDEO", ("Doubao Video (Seedance)", "豆包视频（Seedance）"), UnservedAdaptor,
             "https://ark.cn-beijing.volces.com",
             models=("doubao-seedance-2-0-260128", "doubao-seedance-2-0-fast-260128", "doubao-seedance-1-5-pro-251215",
                     "doubao-seedance-1-0-pro-250528", "doubao-seedance-1-0-pro-fast-251015",
                     "doubao-seedance-1-0-lite-t2v-250428", "doubao-seedance-1-0-lite-i2v-250428"),
             video=SeedanceAdaptor),
    Provider(46, "QIANFAN", ("Baidu Qianfan V2", "百度千帆 V2"), QianfanAdaptor, "https://qianfan.baidubce.com",
             models=("ernie-5.0", "ernie-5.0-thinking-preview", "ernie-x1.1", "ernie-x1.1-preview",
                     "ernie-x1-turbo-32k",
                     "ernie-4.5-turbo-128k", "ernie-4.5-turbo-32k", "ernie-4.5-turbo-vl-32k", "ernie-4.5-21b-a3b",
                     "ernie-speed-128k", "ernie-lite-8k", "embedding-v1", "bge-large-zh", "tao-8k",
                     "bce-reranker-base"),
             stream_options=True,
             key=KeyFormat(("The API key, bce-v3/ALTAK-…/…", "API Key，形如 bce-v3/ALTAK-…/…"), qianfan.key_problem),
             other=OtherField(("App ID (optional)", "应用 ID（可选）"), placeholder="app-…",
                              check=_message(qianfan.other_problem))),
    Provider(52, "VIDU", ("Vidu", "Vidu"), UnservedAdaptor, "https://api.vidu.com",
             models=("viduq3-pro", "viduq3-turbo", "viduq2", "viduq1", "vidu2.0", "vidu1.5"), video=ViduAdaptor),
    # Kling's video API (api/upstream/providers/kling.py): the key pair signs a JWT; new-api's type 50.
    Provider(50, "KLING", ("Kling", "可灵"), UnservedAdaptor, "https://api-singapore.klingai.com",
             models=("kling-v2-6", "kling-v2-5-turbo", "kling-v2-1-master", "kling-v2-master", "kling-v1-6",
                     "kling-v1"),
             key=KeyFormat(("AccessKey|SecretKey", "AccessKey|SecretKey"), parts_key(2, "channel_key_kling")),
             video=KlingAdaptor),
    # Jimeng (即梦) on Volcengine's visual API (api/upstream/providers/jimeng.py): the key pair signs each
    # call (Volcengine's HMAC-SHA256 signature); new-api's type 51.
    Provider(51, "JIMENG", ("Jimeng", "即梦"), UnservedAdaptor, "https://visual.volcengineapi.com",
             models=("jimeng_v30", "jimeng_v30_1080p", "jimeng_v30_pro", "jimeng_t2v_v30", "jimeng_i2v_first_v30",
                     "jimeng_t2v_v30_1080p", "jimeng_i2v_first_v30_1080", "jimeng_ti2v_v30_pro"),
             key=KeyFormat(("AccessKey|SecretKey", "AccessKey|SecretKey"), parts_key(2, "channel_key_jimeng")),
             video=JimengAdaptor),
    Provider(48, "XAI", ("xAI", "xAI"), OpenAIAdaptor, "https://api.x.ai",
             models=("grok-4.3", "grok-4.20-0309-reasoning", "grok-4.20-0309-non-reasoning", "grok-4-1-fast-reasoning",
                     "grok-4-1-fast-non-reasoning", "grok-code-fast-1", "grok-3-mini"),
             modes=frozenset({CHAT, COMPLETIONS, EMBEDDINGS, IMAGES}), native=frozenset({RESPONSES}),
             stream_options=True, fetch_models=True),
    # OpenAI-compatible resellers of the reference with balance endpoints of their own.
    Provider(10, "AIPROXY", ("AIProxy", "AIProxy"), AIProxyAdaptor, "https://api.aiproxy.io", models=OPENAI_MODELS,
             balance=True, fetch_models=True, image_edits=True),
    Provider(12, "API2GPT", ("API2GPT", "API2GPT"), API2GPTAdaptor, "https://api.api2gpt.com", models=OPENAI_MODELS,
             balance=True, fetch_models=True, image_edits=True),
    Provider(13, "AIGC2D", ("AIGC2D", "AIGC2D"), AIGC2DAdaptor, "https://api.aigc2d.com", models=OPENAI_MODELS,
             balance=True, fetch_models=True, image_edits=True),
)


def _index(rows: Iterable[Provider]) -> dict[int, Provider]:
    index: dict[int, Provider] = {}
    for row in rows:
        if row.type in index:
            raise ValueError(f"channel type {row.type} described twice")
        index[row.type] = row
    return dict(sorted(index.items()))


CATALOGUE: Mapping[int, Provider] = _index(PROVIDERS)

# The types by name, for tests and scripts (`ChannelType.OPENAI == 1`); the code reads the rows.
# Any: its members are made from the rows at import time, so no static type can name them.
_MEMBERS = [(row.name, row.type) for row in CATALOGUE.values()]
ChannelType: Any = IntEnum("ChannelType", _MEMBERS)  # type: ignore[misc]  # members from the rows: mypy reads literals only

# A type outside the catalogue (a reseller of the reference we do not know): OpenAI's format.
UNKNOWN = Provider(0, "UNKNOWN", ("Unknown", "未知"), OpenAIAdaptor, image_edits=True)
DEFAULT_TYPE = 1  # a channel created without a type


def provider(channel_type: int) -> Provider:
    """The row of a channel type; the OpenAI-compatible fallback for a number outside the catalogue."""
    return CATALOGUE.get(channel_type, UNKNOWN)


def usable(channel_type: int) -> bool:
    """Whether channels of this type may be picked (not a retired type's)."""
    return provider(channel_type).retired is None


def known(channel_type: int) -> bool:
    return channel_type in CATALOGUE


def label(channel_type: int, lang: str = "en") -> str:
    """`Label (n)` in the reader's language, or the bare number for a type outside the catalogue."""
    row = CATALOGUE.get(channel_type)
    if row is None:
        return str(channel_type)
    return f"{row.label[1] if lang.startswith('zh') else row.label[0]} ({channel_type})"
