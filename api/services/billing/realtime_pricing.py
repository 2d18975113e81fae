"""What one response of a Realtime session costs: its `response.done` usage, text and audio tokens each
at their own ratio (docs/billing.md, Realtime sessions).

The usage is the Realtime API's (the openai SDK's types/realtime/realtime_response_usage.py and its
input/output token details): `input_tokens` counts text, audio and image input, cached included;
`input_token_details.cached_tokens` is the cached part, split by `cached_tokens_details` into text,
audio and image; `output_tokens` is text plus audio output (`output_token_details`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from api.services.billing import pricing
from api.services.billing.records import TokenUsage


@dataclass(slots=True)
class RealtimeUsage(TokenUsage):
    """A response's usage in OpenAI's convention (prompt_tokens = every input token, cached_tokens
    part of it), with the audio parts of the input, of the cached input and of the output."""

    audio_input_tokens: int = 0
    cached_audio_tokens: int = 0
    audio_output_tokens: int = 0

    @classmethod
    def from_realtime(cls, usage: Any) -> RealtimeUsage | None:
        """A `response.done` event's `response.usage`; None when absent or all zero."""
        if not isinstance(usage, Mapping):
            return None
        details, out = _mapping(usage.get("input_token_details")), _mapping(usage.get("output_token_details"))
        cached = _mapping(details.get("cached_tokens_details"))
        found = cls(_count(usage.get("input_tokens")), _count(usage.get("output_tokens")),
                    _count(details.get("cached_tokens")), audio_input_tokens=_count(details.get("audio_tokens")),
                    cached_audio_tokens=_count(cached.get("audio_tokens")),
                    audio_output_tokens=_count(out.get("audio_tokens")))
        return found if found.prompt_tokens or found.completion_tokens else None

    def details(self) -> dict[str, int]:
        """The audio counts, for the consume log."""
        return {"audio_input_tokens": self.audio_input_tokens, "cached_audio_tokens": self.cached_audio_tokens,
                "audio_output_tokens": self.audio_output_tokens}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True, slots=True)
class AudioPrice:
    """A model's audio ratios (None: that kind is billed as its text counterpart)."""

    audio_ratio: float | None = None  # audio input token ÷ text input token
    audio_completion_ratio: float | None = None  # audio output token ÷ audio input token
    audio_cache_ratio: float | None = None  # cached audio input token ÷ audio input token

    def log_fields(self) -> dict[str, float]:
        fields = {"audio_ratio": self.audio_ratio, "audio_completion_ratio": self.audio_completion_ratio,
                  "audio_cache_ratio": self.audio_cache_ratio}
        return {name: value for name, value in fields.items() if value is not None}


def audio_price_of(options: pricing.OptionTables, model: str) -> AudioPrice:
    """The model's entries in the options AudioRatio, AudioCompletionRatio and AudioCacheRatio."""
    name = pricing.wildcard_name(model)

    def entry(option: str) -> float | None:
        table = options.get_json(option) or {}
        value = table.get(model, table.get(name)) if isinstance(table, Mapping) else None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    return AudioPrice(entry("AudioRatio"), entry("AudioCompletionRatio"), entry("AudioCacheRatio"))


def _d(value: float | int) -> Decimal:
    return Decimal(str(value))


def realtime_quota(price: pricing.Price, audio: AudioPrice, usage: RealtimeUsage, *,
                   quota_per_unit: int = pricing.QUOTA_PER_UNIT) -> int:
    """round_half_up((text in − cached text + cached text × CacheRatio
    + (audio in − cached audio) × AR + cached audio × AR × ACR
    + (output − audio out) × CR + audio out × AR × AOR) × MR × GR); text in counts image input too.

    A missing ratio bills that kind as its text counterpart: AR 1, cached audio at the audio price,
    audio output as text output (× CR); a missing CacheRatio bills cached text as text. Counts an
    upstream got wrong are clamped: audio input and cached input to the input, cached audio to both,
    audio output to the output. A per-call price is the price of each response."""
    if price.model_price is not None:
        return pricing.per_call_quota(price.model_price, price.group_ratio, quota_per_unit)
    prompt, completion = usage.prompt_tokens, usage.completion_tokens
    if prompt <= 0 and completion <= 0:
        return 0
    audio_in = min(usage.audio_input_tokens, prompt)
    cached = min(usage.cached_tokens, prompt)
    cached_audio = min(usage.cached_audio_tokens, audio_in, cached)
    text_in = prompt - audio_in
    cached_text = min(cached - cached_audio, text_in)
    audio_out = min(usage.audio_output_tokens, completion)
    ar = _d(audio.audio_ratio if audio.audio_ratio is not None else 1)
    cache = _d(price.cache_ratio if price.cache_ratio is not None else 1)
    audio_cache = _d(audio.audio_cache_ratio if audio.audio_cache_ratio is not None else 1)
    cr = _d(price.completion_ratio)
    audio_out_each = ar * _d(audio.audio_completion_ratio) if audio.audio_completion_ratio is not None else cr
    units = (_d(text_in - cached_text) + _d(cached_text) * cache
             + _d(audio_in - cached_audio) * ar + _d(cached_audio) * ar * audio_cache
             + _d(completion - audio_out) * cr + _d(audio_out) * audio_out_each)
    mr = _d(price.model_ratio)
    quota = pricing.round_half_up(units * mr * _d(price.group_ratio))
    return 1 if mr > 0 and quota < 1 else quota
