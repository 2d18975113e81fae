"""The price tables' defaults (the options ModelRatio, CompletionRatio, ModelPrice, GroupRatio,
CacheRatio, CreateCacheRatio, CreateCacheRatio1h) and the billing constants the options start from.

A model ratio of 1 = 1 quota per token = $0.002 per 1K tokens, i.e. ratio = USD per 1M prompt
tokens / 2. RMB-priced models are converted at 7 RMB = 1 USD, as the reference does. The arithmetic
on them is api.services.billing.pricing's.
"""
from __future__ import annotations

from decimal import Decimal

from api.services.configuration.realtime_prices import (
    REALTIME_CACHE_RATIO,
    REALTIME_COMPLETION_RATIO,
    REALTIME_MODEL_RATIO,
)

QUOTA_PER_UNIT = 500_000  # quota per USD (option QuotaPerUnit)
PRE_CONSUMED_QUOTA = 500  # option PreConsumedQuota: estimate in tokens when max_tokens is not set
SELF_USE_DEFAULT_RATIO = 37.5  # the reference's ratio for unpriced models in self-use mode
IMAGE_RATIO_UNIT_USD = Decimal("0.0025")  # image price without ModelPrice = 0.0025 × ModelRatio USD


def _rmb(per_million: float) -> float:
    """Ratio of a model priced in RMB per 1M tokens."""
    return round(per_million / 7 / 2, 4)


DEFAULT_MODEL_RATIO: dict[str, float] = {
    # OpenAI
    "gpt-4": 15, "gpt-4-0314": 15, "gpt-4-0613": 15,
    "gpt-4-32k": 30, "gpt-4-32k-0314": 30, "gpt-4-32k-0613": 30,
    "gpt-4-1106-preview": 5, "gpt-4-0125-preview": 5, "gpt-4-turbo-preview": 5,
    "gpt-4-vision-preview": 5, "gpt-4-1106-vision-preview": 5, "gpt-4-turbo": 5, "gpt-4-turbo-2024-04-09": 5,
    "gpt-4o": 2.5, "gpt-4o-2024-05-13": 2.5, "gpt-4o-2024-08-06": 1.25, "gpt-4o-2024-11-20": 1.25,
    "chatgpt-4o-latest": 2.5, "gpt-4o-mini": 0.075, "gpt-4o-mini-2024-07-18": 0.075, "gpt-4o-gizmo-*": 2.5,
    "gpt-4.1": 1, "gpt-4.1-mini": 0.2, "gpt-4.1-nano": 0.05, "gpt-4.5-preview": 37.5,
    "o1": 7.5, "o1-2024-12-17": 7.5, "o1-preview": 7.5, "o1-preview-2024-09-12": 7.5,
    "o1-mini": 1.5, "o1-mini-2024-09-12": 1.5, "o3": 1, "o3-mini": 0.55, "o4-mini": 0.55,
    "gpt-3.5-turbo": 0.25, "gpt-3.5-turbo-0301": 0.75, "gpt-3.5-turbo-0613": 0.75,
    "gpt-3.5-turbo-16k": 1.5, "gpt-3.5-turbo-16k-0613": 1.5, "gpt-3.5-turbo-instruct": 0.75,
    "gpt-3.5-turbo-1106": 0.5, "gpt-3.5-turbo-0125": 0.25,
    "babbage-002": 0.2, "davinci-002": 1, "text-ada-001": 0.2, "text-babbage-001": 0.25,
    "text-curie-001": 1, "text-davinci-002": 10, "text-davinci-003": 10,
    "text-davinci-edit-001": 10, "code-davinci-edit-001": 10,
    "text-embedding-ada-002": 0.05, "text-embedding-3-small": 0.01, "text-embedding-3-large": 0.065,
    "text-moderation-stable": 0.1, "text-moderation-latest": 0.1, "omni-moderation-latest": 0.1,
    "whisper-1": 15,  # $0.006/min ≈ 200 tokens of text
    "tts-1": 7.5, "tts-1-1106": 7.5, "tts-1-hd": 15, "tts-1-hd-1106": 15,
    "dall-e-2": 8, "dall-e-3": 16,  # 0.0025 × ratio = USD per image when no ModelPrice
    # Anthropic
    "claude-instant-1": 0.4, "claude-2.0": 4, "claude-2.1": 4,
    "claude-3-haiku-20240307": 0.125, "claude-3-5-haiku-20241022": 0.5, "claude-3-5-haiku-latest": 0.5,
    "claude-3-sonnet-20240229": 1.5, "claude-3-5-sonnet-20240620": 1.5, "claude-3-5-sonnet-20241022": 1.5,
    "claude-3-5-sonnet-latest": 1.5, "claude-3-7-sonnet-20250219": 1.5, "claude-sonnet-4-20250514": 1.5,
    "claude-3-opus-20240229": 7.5, "claude-opus-4-20250514": 7.5, "claude-opus-4-1-20250805": 7.5,
    "claude-sonnet-4-5-20250929": 1.5, "claude-haiku-4-5-20251001": 0.5, "claude-instant-1.2": 0.4,
    # current Claude (USD per MTok in/out: Opus 4.5–5 5/25, Opus 5.5 4/20, Sonnet 4.6 3/15, Sonnet 5.x
    # 2/10, Fable 10/50; platform.claude.com pricing and the models' migration guides)
    "claude-opus-4-5-20251101": 2.5, "claude-opus-4-6": 2.5, "claude-opus-4-7": 2.5, "claude-opus-4-8": 2.5,
    "claude-opus-5": 2.5, "claude-opus-5-5": 2, "claude-sonnet-4-6": 1.5, "claude-sonnet-5": 1,
    "claude-sonnet-5-5": 1, "claude-fable-5": 5, "claude-fable-5-1": 5,
    # Google
    "gemini-pro": 1, "gemini-1.0-pro": 1, "gemini-1.5-pro": 0.625, "gemini-1.5-pro-latest": 1.75,
    "gemini-1.5-flash": 0.0375, "gemini-1.5-flash-latest": 0.0375, "gemini-2.0-flash": 0.05,
    "gemini-2.0-flash-lite": 0.0375, "gemini-2.5-pro": 0.625, "gemini-2.5-flash": 0.15,
    "text-embedding-004": 0.01, "gemini-2.5-flash-lite": 0.05, "gemini-embedding-001": 0.075,
    "gemini-1.5-pro-002": 0.625, "gemini-1.5-flash-002": 0.0375, "chat-bison-001": 0.25,
    # Gemini 3 (USD per MTok in/out, up to 200K prompt: 3.x Pro 2/12, 3 Flash 0.5/3, 3.1 Flash-Lite 0.25/1.5)
    "gemini-3-pro-preview": 1, "gemini-3.1-pro-preview": 1, "gemini-3-flash-preview": 0.25,
    "gemini-3.1-flash-lite-preview": 0.125,
    # Gemini image models (USD per MTok, ai.google.dev/gemini-api/docs/pricing: 2.5 Flash Image in 0.30, text
    # out 2.50, image out 30 — $0.039 a 1290-token image; 3 Pro Image in 2, text out 12, image out 120 —
    # $0.134 a 1K/2K image; 3.1 Flash Image in 0.50, text out 3, image out 60 — $0.067 a 1120-token 1K image, as
    # docs.ai.it.ufl.edu and therouter.ai quote it); their image output at ImageOutputRatio
    "gemini-2.5-flash-image": 0.15, "gemini-3-pro-image": 1, "gemini-3-pro-image-preview": 1,
    "gemini-3.1-flash-image": 0.25, "gemini-3.1-flash-image-preview": 0.25,
    # OpenRouter (the providers' own prices), Perplexity, xAI
    "openai/gpt-4o": 1.25, "openai/gpt-4o-mini": 0.075, "anthropic/claude-3.5-sonnet": 1.5,
    "google/gemini-flash-1.5": 0.0375, "meta-llama/llama-3.1-70b-instruct": 0.06, "deepseek/deepseek-chat": 0.135,
    "sonar": 0.5, "sonar-pro": 1.5, "sonar-reasoning": 0.5, "sonar-reasoning-pro": 1, "sonar-deep-research": 1,
    "r1-1776": 1, "grok-3": 1.5, "grok-3-mini": 0.15, "grok-2-1212": 1, "grok-2-vision-1212": 1, "grok-beta": 2.5,
    # DeepSeek
    "deepseek-chat": 0.135, "deepseek-reasoner": 0.275, "deepseek-coder": 0.135,
    # Mistral, Cohere, Llama (Groq)
    "mistral-large-latest": 1, "mistral-small-latest": 0.1, "open-mistral-nemo": 0.075, "codestral-latest": 0.15,
    "mistral-medium-latest": 0.2, "pixtral-large-latest": 1, "ministral-8b-latest": 0.05, "mistral-embed": 0.05,
    "command": 0.5, "command-light": 0.5, "command-r": 0.25, "command-r-plus": 1.5,
    "command-r-08-2024": 0.075, "command-r-plus-08-2024": 1.25, "command-a-03-2025": 1.25,
    "command-r7b-12-2024": 0.01875, "rerank-v3.5": 1, "rerank-english-v3.0": 1, "rerank-multilingual-v3.0": 1,
    "dify": 1,  # a Dify app's model is the app's own choice: priced here like a mid-range model
    "llama3-8b-8192": 0.025, "llama3-70b-8192": 0.295,
    # Alibaba Qwen, Moonshot, 01.AI, MiniMax, Zhipu, Baidu, Xunfei, Tencent, 360 (RMB prices)
    "qwen-turbo": _rmb(0.3), "qwen-plus": _rmb(0.8), "qwen-max": _rmb(2.4), "qwen-long": _rmb(0.5),
    "text-embedding-v1": _rmb(0.7), "text-embedding-v2": _rmb(0.7), "text-embedding-v3": _rmb(0.5),
    "moonshot-v1-8k": _rmb(12), "moonshot-v1-32k": _rmb(24), "moonshot-v1-128k": _rmb(60),
    "yi-large": _rmb(20), "yi-medium": _rmb(2.5), "yi-vision": _rmb(6), "yi-lightning": _rmb(0.99),
    "yi-34b-chat-0205": 0.18, "yi-34b-chat-200k": 0.864, "yi-vl-plus": 0.432,
    "abab6.5-chat": _rmb(30), "abab6.5s-chat": _rmb(1), "abab6.5g-chat": _rmb(5), "MiniMax-Text-01": _rmb(1),
    "glm-4": _rmb(100), "glm-4v": _rmb(50), "glm-4-plus": _rmb(50), "glm-4-air": _rmb(0.5), "glm-3-turbo": 0.3572,
    "glm-4-flash": _rmb(0.1), "glm-4-long": _rmb(1), "glm-4v-plus": _rmb(4), "glm-4v-flash": _rmb(0.1),
    "embedding-3": _rmb(0.5), "cogview-3-plus": _rmb(0.1),
    "ERNIE-4.0-8K": _rmb(120), "ERNIE-3.5-8K": _rmb(12), "ERNIE-4.0-Turbo-8K": _rmb(30),
    "ERNIE-Speed-8K": 0.0001, "ERNIE-Speed-128K": 0.0001, "ERNIE-Lite-8K": 0.0001, "ERNIE-Tiny-8K": 0.0001,
    "Embedding-V1": _rmb(0.5), "bge-large-zh": _rmb(0.5), "bge-large-en": _rmb(0.5), "tao-8k": _rmb(0.5),
    "chatglm_turbo": 0.3572, "chatglm_pro": 0.7143, "chatglm_std": 0.3572, "chatglm_lite": 0.1429,
    "qwen-vl-plus": _rmb(1.5), "qwen-vl-max": _rmb(3), "qwq-plus": _rmb(1.6), "qwen3-235b-a22b": _rmb(2),
    "wanx-v1": 8, "wanx2.1-t2i-turbo": 4.8,  # 0.0025 × ratio USD per image: ¥0.14 and ¥0.08
    "SparkDesk": 1.2858, "SparkDesk-v1.1": 1.2858, "SparkDesk-v2.1": 1.2858, "SparkDesk-v3.1": 1.2858,
    "SparkDesk-v3.1-128K": 1.2858, "SparkDesk-v3.5": 1.2858, "SparkDesk-v3.5-32K": 1.2858, "SparkDesk-v4.0": 1.2858,
    "lite": 0.0001, "generalv3": 1.2858, "pro-128k": 1.2858, "generalv3.5": 1.2858, "max-32k": 1.2858,
    "4.0Ultra": 1.2858, "x1": 1.2858,
    # Baidu Qianfan V2 (RMB per 1M input tokens)
    "ernie-5.0": _rmb(6), "ernie-5.0-thinking-preview": _rmb(6), "ernie-x1.1": _rmb(1), "ernie-x1.1-preview": _rmb(1),
    "ernie-x1-turbo-32k": _rmb(1), "ernie-4.5-turbo-128k": _rmb(0.8), "ernie-4.5-turbo-32k": _rmb(0.8),
    "ernie-4.5-turbo-vl-32k": _rmb(3), "ernie-4.5-21b-a3b": _rmb(0.5), "ernie-speed-128k": 0.0001,
    "ernie-lite-8k": 0.0001, "embedding-v1": _rmb(0.5), "bce-reranker-base": _rmb(0.5),
    "hunyuan": 7.143, "hunyuan-lite": 0.0001, "hunyuan-standard": _rmb(0.8), "hunyuan-standard-256K": _rmb(15),
    "hunyuan-pro": _rmb(30), "hunyuan-turbo": _rmb(15), "hunyuan-turbos-latest": _rmb(0.8),
    "hunyuan-vision": _rmb(18), "hunyuan-embedding": _rmb(0.7),
    "360GPT_S2_V9": 0.8572, "embedding-bert-512-v1": 0.0715, "embedding_s1_v1": 0.0715,
    "semantic_similarity_s1_v1": 0.0715,
    "doubao-1-5-pro-32k-250115": _rmb(0.8), "doubao-1-5-lite-32k-250115": _rmb(0.3),
    "doubao-1-5-vision-pro-32k-250115": _rmb(3), "deepseek-r1-250120": _rmb(4), "deepseek-v3-250324": _rmb(2),
    "doubao-embedding-text-240715": _rmb(0.7),
    # Rerank / embeddings providers
    "jina-reranker-v2-base-multilingual": 0.01, "jina-embeddings-v3": 0.01, "jina-clip-v2": 0.01,
    "jina-colbert-v2": 0.01,
    # Cloudflare Workers AI (per million tokens, as Cloudflare lists them in USD)
    "@cf/meta/llama-3.1-8b-instruct": 0.1415, "@cf/meta/llama-3.3-70b-instruct-fp8-fast": 0.1465,
    "@cf/qwen/qwen1.5-14b-chat-awq": 0.1, "@cf/mistral/mistral-7b-instruct-v0.1": 0.055,
    "@cf/baai/bge-base-en-v1.5": 0.0335, "@cf/baai/bge-m3": 0.006, "ark-code-latest": _rmb(1.2),
    # current model families of the catalogue (list prices when written, in/out; the operator's options win)
    "gpt-5": 0.625, "gpt-5-mini": 0.125, "gpt-5-nano": 0.025, "gpt-5.1": 0.625, "gpt-5.2": 0.875,
    "gpt-5.3-codex": 0.875, "gpt-5.4": 1.25, "gpt-5.4-mini": 0.125, "gpt-5.4-nano": 0.025, "gpt-5.5": 1.25,
    "gpt-image-1.5": 2.5, "gpt-4o-transcribe": 1.25, "gpt-4o-mini-tts": 0.3, "llama3.3": 0.0001, "qwen3": 0.0001,
    "gemma3": 0.0001, "mistral": 0.0001, "deepseek-r1": 0.0001, "nomic-embed-text": 0.0001, "qwen3-max": _rmb(6),
    "qwen-flash": _rmb(0.15), "qwen3-coder-plus": _rmb(4), "text-embedding-v4": _rmb(0.5), "360gpt2-o1": _rmb(20),
    "360gpt-pro": _rmb(5), "360gpt-turbo": _rmb(2), "openai/gpt-5.1": 0.625, "anthropic/claude-sonnet-4.5": 1.5,
    "google/gemini-2.5-pro": 0.625, "moonshotai/kimi-k2": 0.3, "x-ai/grok-4": 1.5,
    "hunyuan-2.0-thinking-20251109": _rmb(4), "hunyuan-2.0-instruct-20251111": _rmb(3.2),
    "hunyuan-t1-latest": _rmb(1), "hunyuan-a13b": _rmb(0.5), "hunyuan-large": _rmb(4),
    "hunyuan-turbos-vision": _rmb(3), "kimi-k2.6": 0.3, "kimi-k2.5": 0.3, "kimi-k2-thinking": 0.3,
    "kimi-k2-turbo-preview": 0.575, "glm-5.3": 0.5, "glm-5.2": 0.5, "glm-5.1": 0.5, "glm-5": 0.5, "glm-5-turbo": 0.3,
    "glm-4.7": 0.3, "glm-4.7-flash": 0.0001, "glm-4.6": 0.3, "glm-4.5-air": 0.1, "glm-4-flash-250414": 0.0001,
    "glm-5v-turbo": 0.3, "glm-4.6v": 0.3, "cogview-4": _rmb(0.1), "amazon.nova-premier-v1:0": 1.25,
    "amazon.nova-pro-v1:0": 0.4, "amazon.nova-lite-v1:0": 0.03, "amazon.nova-micro-v1:0": 0.0175,
    "amazon.nova-2-lite-v1:0": 0.15, "meta.llama4-maverick-17b-instruct-v1:0": 0.12,
    "meta.llama4-scout-17b-instruct-v1:0": 0.085, "meta.llama3-3-70b-instruct-v1:0": 0.36,
    "mistral.mistral-large-2407-v1:0": 1, "mistral.pixtral-large-2502-v1:0": 1, "deepseek.r1-v1:0": 0.675,
    "deepseek.v3-v1:0": 0.29, "command-a-plus-05-2026": 1.25, "command-a-reasoning-08-2025": 1.25,
    "command-a-vision-07-2025": 1.25, "command-a-translate-08-2025": 1.25, "rerank-v4.0-pro": 1,
    "rerank-v4.0-fast": 0.5, "embed-v4.0": 0.06, "embed-english-v3.0": 0.05, "embed-multilingual-v3.0": 0.05,
    "MiniMax-M3": 0.15, "MiniMax-M2.7": 0.15, "MiniMax-M2.7-highspeed": 0.3, "MiniMax-M2.5": 0.15,
    "MiniMax-M2.5-highspeed": 0.3, "MiniMax-M2.1": 0.15, "MiniMax-M2.1-highspeed": 0.3, "MiniMax-M2": 0.15,
    "jina-embeddings-v4": 0.01, "jina-reranker-m0": 0.01, "@cf/openai/gpt-oss-120b": 0.175,
    "@cf/meta/llama-4-scout-17b-16e-instruct": 0.135, "@cf/qwen/qwq-32b": 0.33, "deepseek-ai/DeepSeek-V3.2": _rmb(2),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": _rmb(2.5), "moonshotai/Kimi-K2-Instruct-0905": _rmb(4),
    "zai-org/GLM-4.6": _rmb(3.5), "BAAI/bge-m3": 0.0001, "BAAI/bge-reranker-v2-m3": 0.0001,
    "text-embedding-005": 0.0125, "text-multilingual-embedding-002": 0.0125, "magistral-medium-latest": 1,
    "devstral-medium-latest": 0.2, "doubao-seed-1-6-251015": _rmb(0.8), "doubao-seed-1-6-flash-250828": _rmb(0.15),
    "doubao-seed-code": _rmb(1.2), "deepseek-v3-1-250821": _rmb(4), "kimi-k2-250905": _rmb(4),
    "doubao-seedream-4-0-250828": 12, "grok-4.3": 1.5, "grok-4.20-0309-reasoning": 1,
    "grok-4.20-0309-non-reasoning": 1, "grok-4-1-fast-reasoning": 0.1, "grok-4-1-fast-non-reasoning": 0.1,
    "grok-code-fast-1": 0.1,
    **REALTIME_MODEL_RATIO,
}  # fmt: skip

DEFAULT_COMPLETION_RATIO: dict[str, float] = {
    "ark-code-latest": 6.6667, "gpt-4-gizmo-*": 2, "gpt-4o-gizmo-*": 3, "gpt-4-all": 2,
    "gemini-2.5-pro": 8, "gemini-2.5-flash": 8.3333,
    "gemini-3-pro-preview": 6, "gemini-3.1-pro-preview": 6, "gemini-3-flash-preview": 6,
    "gemini-3.1-flash-lite-preview": 6, "gemini-2.5-flash-image": 8.3333, "gemini-3-pro-image": 6,
    "gemini-3-pro-image-preview": 6, "gemini-3.1-flash-image": 6, "gemini-3.1-flash-image-preview": 6,
    "deepseek-reasoner": 3.98, "qwen-turbo": 2, "qwen-plus": 2.5, "qwen-max": 4,
    "MiniMax-Text-01": 8, "gpt-4.1": 4, "gpt-4.1-mini": 4, "gpt-4.1-nano": 4, "gpt-4.5-preview": 2,
    "gemini-2.5-flash-lite": 4, "openai/gpt-4o": 4, "openai/gpt-4o-mini": 4, "anthropic/claude-3.5-sonnet": 5,
    "google/gemini-flash-1.5": 4, "meta-llama/llama-3.1-70b-instruct": 1, "deepseek/deepseek-chat": 4,
    "sonar": 1, "sonar-pro": 5, "sonar-reasoning": 5, "sonar-reasoning-pro": 4, "sonar-deep-research": 4,
    "r1-1776": 4, "grok-3": 5, "grok-3-mini": 1.6667, "grok-2-1212": 5, "grok-2-vision-1212": 5, "grok-beta": 3,
    "mistral-large-latest": 3, "mistral-medium-latest": 5, "pixtral-large-latest": 3, "ministral-8b-latest": 1,
    "doubao-1-5-pro-32k-250115": 2.5, "doubao-1-5-lite-32k-250115": 2, "doubao-1-5-vision-pro-32k-250115": 3,
    "deepseek-r1-250120": 4, "deepseek-v3-250324": 4,
    "qwen-vl-plus": 3, "qwen-vl-max": 3, "qwq-plus": 2.5, "qwen3-235b-a22b": 4, "ERNIE-4.0-Turbo-8K": 3,
    "hunyuan-standard": 2.5, "hunyuan-pro": 3.3333, "hunyuan-turbo": 3.3333, "hunyuan-turbos-latest": 2.5,
    "hunyuan-standard-256K": 4, "command-a-03-2025": 4, "command-r7b-12-2024": 4,
    # current model families (output price ÷ input price)
    "gpt-5": 8, "gpt-5-mini": 8, "gpt-5-nano": 8, "gpt-5.1": 8, "gpt-5.2": 8, "gpt-5.3-codex": 8, "gpt-5.4": 6,
    "gpt-5.4-mini": 8, "gpt-5.4-nano": 8, "gpt-5.5": 6, "gpt-image-1.5": 8, "gpt-4o-transcribe": 4,
    "gpt-4o-mini-tts": 20, "qwen3-max": 4, "qwen-flash": 10, "qwen3-coder-plus": 4, "openai/gpt-5.1": 8,
    "anthropic/claude-sonnet-4.5": 5, "google/gemini-2.5-pro": 8, "moonshotai/kimi-k2": 4.1667, "x-ai/grok-4": 5,
    "hunyuan-2.0-thinking-20251109": 4, "hunyuan-2.0-instruct-20251111": 2.5, "hunyuan-t1-latest": 4,
    "hunyuan-a13b": 4, "hunyuan-large": 3, "hunyuan-turbos-vision": 3, "kimi-k2.6": 4.1667, "kimi-k2.5": 4.1667,
    "kimi-k2-thinking": 4.1667, "kimi-k2-turbo-preview": 7, "glm-5.3": 4, "glm-5.2": 4, "glm-5.1": 4, "glm-5": 4,
    "glm-5-turbo": 4, "glm-4.7": 3.6667, "glm-4.6": 3.6667, "glm-4.5-air": 5.5, "glm-5v-turbo": 3, "glm-4.6v": 3,
    "amazon.nova-premier-v1:0": 5, "amazon.nova-pro-v1:0": 4, "amazon.nova-lite-v1:0": 4, "amazon.nova-micro-v1:0": 4,
    "amazon.nova-2-lite-v1:0": 8, "meta.llama4-maverick-17b-instruct-v1:0": 4,
    "meta.llama4-scout-17b-instruct-v1:0": 4, "mistral.mistral-large-2407-v1:0": 3,
    "mistral.pixtral-large-2502-v1:0": 3, "deepseek.r1-v1:0": 4, "deepseek.v3-v1:0": 2.9, "command-a-plus-05-2026": 4,
    "command-a-reasoning-08-2025": 4, "command-a-vision-07-2025": 4, "command-a-translate-08-2025": 4,
    "MiniMax-M3": 4, "MiniMax-M2.7": 4, "MiniMax-M2.7-highspeed": 4, "MiniMax-M2.5": 4, "MiniMax-M2.5-highspeed": 4,
    "MiniMax-M2.1": 4, "MiniMax-M2.1-highspeed": 4, "MiniMax-M2": 4, "@cf/openai/gpt-oss-120b": 2.1429,
    "@cf/meta/llama-4-scout-17b-16e-instruct": 3.1481, "@cf/qwen/qwq-32b": 1.5152, "deepseek-ai/DeepSeek-V3.2": 1.5,
    "Qwen/Qwen3-235B-A22B-Instruct-2507": 4, "moonshotai/Kimi-K2-Instruct-0905": 4, "zai-org/GLM-4.6": 4,
    "magistral-medium-latest": 2.5, "devstral-medium-latest": 5, "doubao-seed-1-6-251015": 10,
    "doubao-seed-1-6-flash-250828": 10, "doubao-seed-code": 6.6667, "deepseek-v3-1-250821": 3, "kimi-k2-250905": 4,
    "grok-4.3": 5, "grok-4.20-0309-reasoning": 5, "grok-4.20-0309-non-reasoning": 5, "grok-4-1-fast-reasoning": 2.5,
    "grok-4-1-fast-non-reasoning": 2.5, "grok-code-fast-1": 7.5,
    **REALTIME_COMPLETION_RATIO,
}  # fmt: skip

_MJ_PRICES = {
    "imagine": 0.1, "variation": 0.1, "reroll": 0.1, "blend": 0.1, "modal": 0.1, "zoom": 0.1,
    "shorten": 0.1, "high_variation": 0.1, "low_variation": 0.1, "pan": 0.1,
    "inpaint": 0, "custom_zoom": 0, "describe": 0.05, "upscale": 0.05, "upload": 0.05,
}  # fmt: skip

DEFAULT_MODEL_PRICE: dict[str, float] = {
    **{f"mj_{action}": price for action, price in _MJ_PRICES.items()},
    "swap_face": 0.05, "suno_music": 0.1, "suno_lyrics": 0.01,
    "dall-e-2": 0.02, "dall-e-3": 0.04, "gpt-4-gizmo-*": 0.1,
    # Video models (/v1/videos): USD per second of video (docs/billing.md, Videos). Veo as Google lists it
    # (ai.google.dev/gemini-api/docs/pricing, cloud.google.com/vertex-ai/generative-ai/pricing: Veo 3 and 3.1
    # $0.40/s, their Fast variants $0.15/s, Veo 2 $0.35/s).
    "veo-3.1-generate-preview": 0.4, "veo-3.1-fast-generate-preview": 0.15, "veo-3.0-generate-001": 0.4,
    "veo-3.0-fast-generate-001": 0.15, "veo-2.0-generate-001": 0.35,
    # Seedance on Volcengine Ark bills tokens = width × height × 24 fps × seconds / 1024 (Ark's query API answers
    # them as usage.completion_tokens; the formula as doc-en.302.ai/344157192e0 quotes it): a second at 1080p
    # 16:9 (1920×1088) is 48,960 tokens; at Ark's list prices (1.0 pro ¥15, 1.0 lite ¥10, 1.0 pro fast ¥4.2 per
    # million tokens: Volcengine's model cards, as github.com/Hajimi-Commune/VolcanoArkDocs copies them,
    # 2025-12-19) and ¥7.1 to the dollar that is the most a second costs: $0.10, $0.07, $0.03.
    "doubao-seedance-1-0-pro-250528": 0.1, "doubao-seedance-1-0-lite-t2v-250428": 0.07,
    "doubao-seedance-1-0-lite-i2v-250428": 0.07, "doubao-seedance-1-0-pro-fast-251015": 0.03,
    # Imagen 4, USD per image (ai.google.dev/gemini-api/docs/pricing, cloud.google.com/vertex-ai/generative-ai/
    # pricing: Fast $0.02, Standard $0.04, Ultra $0.06)
    "imagen-4.0-fast-generate-001": 0.02, "imagen-4.0-generate-001": 0.04, "imagen-4.0-ultra-generate-001": 0.06,
    # Alibaba's wanx2.1-imageedit edit, USD per image (alibabacloud.com/help/en/model-studio/wanx-image-edit,
    # Beijing region: $0.020070/image). The Qwen and Wan 2.5 edit models: no list price found, none set.
    "wanx2.1-imageedit": 0.02007,
}  # fmt: skip

DEFAULT_GROUP_RATIO: dict[str, float] = {"default": 1, "vip": 1, "svip": 1}

# Cached input, as the providers bill it (options CacheRatio and CreateCacheRatio): the price of a
# cache-read and of a cache-write prompt token relative to a normal one. A model absent from a table
# has its cached tokens billed as normal prompt tokens (docs/billing.md, Cached input).
_CLAUDE_CACHED = (
    "claude-3-haiku-20240307", "claude-3-5-haiku-20241022", "claude-3-5-haiku-latest", "claude-3-sonnet-20240229",
    "claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest",
    "claude-3-7-sonnet-20250219", "claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929", "claude-instant-1.2",
    "claude-3-opus-20240229", "claude-opus-4-20250514", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001",
    "claude-opus-4-5-20251101", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5",
    "claude-opus-5-5", "claude-sonnet-4-6", "claude-sonnet-5", "claude-sonnet-5-5", "claude-fable-5",
    "claude-fable-5-1",
)
DEFAULT_CACHE_RATIO: dict[str, float] = {
    "gpt-4o": 0.5, "gpt-4o-2024-08-06": 0.5, "gpt-4o-2024-11-20": 0.5, "gpt-4o-mini": 0.5,
    "gpt-4o-mini-2024-07-18": 0.5, "chatgpt-4o-latest": 0.5, "o1": 0.5, "o1-2024-12-17": 0.5, "o1-mini": 0.5,
    "o3-mini": 0.5, "gpt-4.1": 0.25, "gpt-4.1-mini": 0.25, "gpt-4.1-nano": 0.25, "o3": 0.25, "o4-mini": 0.25,
    **{name: 0.1 for name in _CLAUDE_CACHED},
    "gemini-1.5-pro": 0.25, "gemini-1.5-flash": 0.25, "gemini-2.0-flash": 0.25, "gemini-2.0-flash-lite": 0.25,
    "gemini-2.5-pro": 0.25, "gemini-2.5-flash": 0.25, "gemini-2.5-flash-lite": 0.25,
    "gemini-3-pro-preview": 0.1, "gemini-3.1-pro-preview": 0.1, "gemini-3-flash-preview": 0.1,
    "gemini-3.1-flash-lite-preview": 0.1,
    "deepseek-chat": 0.1, "deepseek-reasoner": 0.1,
    **REALTIME_CACHE_RATIO,
}  # fmt: skip
DEFAULT_CREATE_CACHE_RATIO: dict[str, float] = {name: 1.25 for name in _CLAUDE_CACHED}
# Anthropic bills a write to the one-hour cache (`cache_control.ttl = "1h"`) at 2× the input price,
# a five-minute write at 1.25× (platform.claude.com/docs/en/build-with-claude/prompt-caching,
# "1-hour cache duration"): option CreateCacheRatio1h. A model with a CreateCacheRatio entry and no
# CreateCacheRatio1h entry has its one-hour writes billed at ONE_HOUR_WRITE_RATIO.
ONE_HOUR_WRITE_RATIO = 2.0
DEFAULT_CREATE_CACHE_RATIO_1H: dict[str, float] = {name: ONE_HOUR_WRITE_RATIO for name in _CLAUDE_CACHED}

# Image models billed by the tokens they report (options ImageRatio, new-api's name, and ImageOutputRatio): the
# price of an input image token and of an output image token relative to a text input token. Without an entry,
# input image tokens are billed as prompt tokens and output image tokens as completion tokens (new-api's rule).
# gpt-image-1.5 per 1M tokens: text input $5, image input $8, image output $32 (openai.com/api/pricing;
# llmreference.com/model/gpt-image-1.5/openai-api) → 8/5 and 32/5 over its ModelRatio 2.5.
DEFAULT_IMAGE_RATIO: dict[str, float] = {"gpt-image-1.5": 1.6}
DEFAULT_IMAGE_OUTPUT_RATIO: dict[str, float] = {"gpt-image-1.5": 6.4}
# Gemini image models: output image tokens $30 (2.5 Flash Image), $120 (3 Pro Image) and $60 (3.1 Flash Image)
# per 1M over their input prices $0.30, $2 and $0.50 (ModelRatio above); input images cost what input text does.
DEFAULT_IMAGE_OUTPUT_RATIO |= {"gemini-2.5-flash-image": 100, "gemini-3-pro-image": 60,
                               "gemini-3-pro-image-preview": 60, "gemini-3.1-flash-image": 120,
                               "gemini-3.1-flash-image-preview": 120}

# dall-e sizes (new-api relay-image.go); other sizes count 1.
IMAGE_SIZE_RATIOS: dict[str, Decimal] = {
    "256x256": Decimal("0.4"), "512x512": Decimal("0.45"), "1024x1024": Decimal(1),
    "1792x1024": Decimal(2), "1024x1792": Decimal(2),
}  # fmt: skip
WIDE_IMAGE_SIZES = frozenset({"1792x1024", "1024x1792"})


