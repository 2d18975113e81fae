"""Enumerations shared by the models, the API and the workers (numeric values are wire values)."""
from enum import IntEnum, StrEnum


class Role(IntEnum):
    GUEST = 0
    USER = 1
    ADMIN = 10
    ROOT = 100


class UserStatus(IntEnum):
    ENABLED = 1
    DISABLED = 2


class TokenStatus(IntEnum):
    ENABLED = 1
    DISABLED = 2
    EXPIRED = 3
    EXHAUSTED = 4


class ChannelStatus(IntEnum):
    ENABLED = 1
    MANUALLY_DISABLED = 2
    AUTO_DISABLED = 3


class RedemptionStatus(IntEnum):
    UNUSED = 1
    DISABLED = 2
    USED = 3


class LogType(IntEnum):
    UNKNOWN = 0
    TOPUP = 1
    CONSUME = 2
    MANAGE = 3
    SYSTEM = 4
    ERROR = 5  # a relayed call that failed for good (new-api's type 5): no charge


class TopUpStatus(StrEnum):
    PENDING = "pending"
    SUCCESS = "success"
    EXPIRED = "expired"
    FAILED = "failed"


class TaskStatus(StrEnum):
    NOT_START = "NOT_START"
    SUBMITTED = "SUBMITTED"
    QUEUED = "QUEUED"
    IN_PROGRESS = "IN_PROGRESS"
    FAILURE = "FAILURE"
    SUCCESS = "SUCCESS"
    UNKNOWN = "UNKNOWN"
    MODAL = "MODAL"


class ChannelType(IntEnum):
    """Channel (upstream provider) types with new-api's numbering; labels in CHANNEL_TYPE_LABELS."""

    OPENAI = 1
    MIDJOURNEY = 2
    AZURE = 3
    OLLAMA = 4
    MIDJOURNEY_PLUS = 5
    CUSTOM = 8
    PALM = 11
    ANTHROPIC = 14
    BAIDU = 15
    ZHIPU = 16
    ALI = 17
    XUNFEI = 18
    AI360 = 19
    OPENROUTER = 20
    AIPROXY_LIBRARY = 21
    FASTGPT = 22
    TENCENT = 23
    GEMINI = 24
    MOONSHOT = 25
    ZHIPU_V4 = 26
    PERPLEXITY = 27
    LINGYIWANWU = 31
    AWS = 33
    COHERE = 34
    MINIMAX = 35
    SUNO = 36
    DIFY = 37
    JINA = 38
    CLOUDFLARE = 39
    SILICONFLOW = 40
    VERTEX_AI = 41
    MISTRAL = 42
    DEEPSEEK = 43
    VOLCENGINE = 45
    QIANFAN = 46
    XAI = 48


CHANNEL_TYPE_LABELS: dict[ChannelType, str] = {
    ChannelType.OPENAI: "OpenAI",
    ChannelType.MIDJOURNEY: "Midjourney Proxy",
    ChannelType.AZURE: "Azure OpenAI",
    ChannelType.OLLAMA: "Ollama",
    ChannelType.MIDJOURNEY_PLUS: "Midjourney Proxy Plus",
    ChannelType.CUSTOM: "自定义渠道",
    ChannelType.PALM: "Google PaLM2",
    ChannelType.ANTHROPIC: "Anthropic Claude",
    ChannelType.BAIDU: "百度文心千帆",
    ChannelType.ZHIPU: "智谱 ChatGLM",
    ChannelType.ALI: "阿里通义千问",
    ChannelType.XUNFEI: "讯飞星火认知",
    ChannelType.AI360: "360 智脑",
    ChannelType.OPENROUTER: "OpenRouter",
    ChannelType.AIPROXY_LIBRARY: "知识库：AI Proxy",
    ChannelType.FASTGPT: "知识库：FastGPT",
    ChannelType.TENCENT: "腾讯混元",
    ChannelType.GEMINI: "Google Gemini",
    ChannelType.MOONSHOT: "Moonshot",
    ChannelType.ZHIPU_V4: "智谱 GLM-4V",
    ChannelType.PERPLEXITY: "Perplexity",
    ChannelType.LINGYIWANWU: "零一万物",
    ChannelType.AWS: "AWS Claude",
    ChannelType.COHERE: "Cohere",
    ChannelType.MINIMAX: "MiniMax",
    ChannelType.SUNO: "Suno API",
    ChannelType.DIFY: "Dify",
    ChannelType.JINA: "Jina",
    ChannelType.CLOUDFLARE: "Cloudflare",
    ChannelType.SILICONFLOW: "SiliconCloud",
    ChannelType.VERTEX_AI: "Vertex AI",
    ChannelType.MISTRAL: "Mistral",
    ChannelType.DEEPSEEK: "DeepSeek",
    ChannelType.VOLCENGINE: "字节火山引擎",
    ChannelType.QIANFAN: "百度千帆 V2",
    ChannelType.XAI: "xAI",
}
