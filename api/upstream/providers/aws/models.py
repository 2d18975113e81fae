"""Bedrock's model ids: the names a client asks for → the id the runtime takes, for the channel's region.

- Claude: Anthropic's names map to Bedrock's base ids (`claude-3-5-haiku-20241022` →
  `anthropic.claude-3-5-haiku-20241022-v1:0`); a name not in the table is `anthropic.{name}`.
- Other models are asked for by Bedrock's own base id (`amazon.nova-pro-v1:0`, `meta.llama3-3-70b-instruct-v1:0`).
- Models served through cross-region inference profiles only (invoking their base id on demand is
  refused with a 400 ValidationException: docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html)
  get the profile of the region's geography: `us.` for us-* and ca-*, `us-gov.` for us-gov-*,
  `eu.` for eu-*, `apac.` for ap-*, else `global.`. Those are Claude from 3.5 Sonnet v2 on, Nova,
  Llama 3.1 and later, DeepSeek R1 and Pixtral Large; the older models keep their base id.
- An id already in Bedrock's form with a geography (`us.anthropic.…`, `global.…`) or an ARN passes through.
"""
from __future__ import annotations

from collections.abc import Mapping

BEDROCK_IDS: Mapping[str, str] = {
    "claude-instant-1.2": "anthropic.claude-instant-v1",
    "claude-2.0": "anthropic.claude-v2",
    "claude-2.1": "anthropic.claude-v2:1",
    "claude-3-haiku-20240307": "anthropic.claude-3-haiku-20240307-v1:0",
    "claude-3-sonnet-20240229": "anthropic.claude-3-sonnet-20240229-v1:0",
    "claude-3-opus-20240229": "anthropic.claude-3-opus-20240229-v1:0",
    "claude-3-5-sonnet-20240620": "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "claude-3-5-sonnet-20241022": "anthropic.claude-3-5-sonnet-20241022-v2:0",
    "claude-3-5-haiku-20241022": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "claude-3-7-sonnet-20250219": "anthropic.claude-3-7-sonnet-20250219-v1:0",
    "claude-sonnet-4-20250514": "anthropic.claude-sonnet-4-20250514-v1:0",
    "claude-opus-4-20250514": "anthropic.claude-opus-4-20250514-v1:0",
    "claude-opus-4-1-20250805": "anthropic.claude-opus-4-1-20250805-v1:0",
    "claude-sonnet-4-5-20250929": "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "claude-haiku-4-5-20251001": "anthropic.claude-haiku-4-5-20251001-v1:0",
    "claude-opus-4-5-20251101": "anthropic.claude-opus-4-5-20251101-v1:0",
    "claude-opus-4-6": "anthropic.claude-opus-4-6-v1",
    "claude-sonnet-4-6": "anthropic.claude-sonnet-4-6",
}
# Claude base ids still invoked on demand (the older models); every other Claude needs a profile.
ON_DEMAND_IDS = frozenset({"anthropic.claude-instant-v1", "anthropic.claude-v2", "anthropic.claude-v2:1",
                           "anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-sonnet-20240229-v1:0",
                           "anthropic.claude-3-opus-20240229-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"})
# Base ids (by prefix) of the other models served through inference profiles.
PROFILE_PREFIXES = ("amazon.nova-", "meta.llama3-1-", "meta.llama3-2-", "meta.llama3-3-", "meta.llama4-",
                    "deepseek.r1-", "mistral.pixtral-")
GEOGRAPHIES = ("us", "us-gov", "eu", "apac", "global", "jp", "au", "ca")
REGION_GEOGRAPHIES = (("us-gov-", "us-gov"), ("us-", "us"), ("ca-", "us"), ("eu-", "eu"), ("ap-", "apac"))

CLAUDE_MODELS: tuple[str, ...] = (
    "claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8", "claude-opus-4-7",
    "claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5-20251001", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219",
    "claude-3-5-haiku-20241022", "claude-3-haiku-20240307",
)
CONVERSE_MODELS: tuple[str, ...] = (
    "amazon.nova-premier-v1:0", "amazon.nova-pro-v1:0", "amazon.nova-lite-v1:0", "amazon.nova-micro-v1:0",
    "amazon.nova-2-lite-v1:0", "meta.llama4-maverick-17b-instruct-v1:0", "meta.llama4-scout-17b-instruct-v1:0",
    "meta.llama3-3-70b-instruct-v1:0", "mistral.mistral-large-2407-v1:0", "mistral.pixtral-large-2502-v1:0",
    "deepseek.r1-v1:0", "deepseek.v3-v1:0",
)
MODELS: tuple[str, ...] = (*CLAUDE_MODELS, *CONVERSE_MODELS)


def is_claude(model: str) -> bool:
    """Whether Bedrock serves `model` with Claude (InvokeModel with Anthropic's Messages body)."""
    return model.startswith("claude") or "anthropic.claude" in model


def geography(region: str) -> str:
    """The inference-profile prefix for a region (`us-west-2` → `us`)."""
    return next((geo for prefix, geo in REGION_GEOGRAPHIES if region.startswith(prefix)), "global")


def bedrock_model_id(model: str, region: str) -> str:
    """The model id the runtime takes for `model` from a channel in `region` (see the module's docstring)."""
    head = model.split(".", 1)[0]
    if model.startswith("arn:") or ("." in model and head in GEOGRAPHIES):
        return model  # an inference profile or an ARN
    if model.startswith("claude"):
        base = BEDROCK_IDS.get(model) or f"anthropic.{model}"
    else:
        base = model
    if base in ON_DEMAND_IDS:
        return base
    if base.startswith("anthropic.") or base.startswith(PROFILE_PREFIXES):
        return f"{geography(region)}.{base}"
    return base
