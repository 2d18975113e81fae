"""Prices and the quota arithmetic of docs/billing.md — pure functions, no I/O.

Tables (JSON-able dicts, the defaults of the options ModelRatio, CompletionRatio, ModelPrice and
GroupRatio): a model ratio of 1 = 1 quota per token = $0.002 per 1K tokens, i.e. ratio = USD per 1M
prompt tokens / 2. RMB-priced models are converted at 7 RMB = 1 USD, as the reference does.

Rounding, decided once: docs/billing.md's `round` is **round half up** (x.5 → x+1), computed in Decimal on
the decimal values of the ratios as written (Decimal(repr(float))), so 0.1 × 3 is 0.3, not
0.30000000000000004, and Python's banker's rounding (round(2.5) == 2) is never used. Quota is an int.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Protocol

from api.services.configuration.default_prices import (
    DEFAULT_CACHE_RATIO as DEFAULT_CACHE_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_COMPLETION_RATIO as DEFAULT_COMPLETION_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_CREATE_CACHE_RATIO as DEFAULT_CREATE_CACHE_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_CREATE_CACHE_RATIO_1H as DEFAULT_CREATE_CACHE_RATIO_1H,
)
from api.services.configuration.default_prices import (
    DEFAULT_GROUP_RATIO as DEFAULT_GROUP_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_IMAGE_OUTPUT_RATIO as DEFAULT_IMAGE_OUTPUT_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_IMAGE_RATIO as DEFAULT_IMAGE_RATIO,
)
from api.services.configuration.default_prices import (
    DEFAULT_MODEL_PRICE as DEFAULT_MODEL_PRICE,
)
from api.services.configuration.default_prices import (
    DEFAULT_MODEL_RATIO as DEFAULT_MODEL_RATIO,
)
from api.services.configuration.default_prices import (
    IMAGE_RATIO_UNIT_USD as IMAGE_RATIO_UNIT_USD,
)
from api.services.configuration.default_prices import (
    IMAGE_SIZE_RATIOS as IMAGE_SIZE_RATIOS,
)
from api.services.configuration.default_prices import (
    ONE_HOUR_WRITE_RATIO as ONE_HOUR_WRITE_RATIO,
)
from api.services.configuration.default_prices import (
    PRE_CONSUMED_QUOTA as PRE_CONSUMED_QUOTA,
)
from api.services.configuration.default_prices import (  # the defaults are configuration; re-exported
    QUOTA_PER_UNIT as QUOTA_PER_UNIT,
)
from api.services.configuration.default_prices import (
    SELF_USE_DEFAULT_RATIO as SELF_USE_DEFAULT_RATIO,
)
from api.services.configuration.default_prices import (
    WIDE_IMAGE_SIZES as WIDE_IMAGE_SIZES,
)


class PriceNotConfigured(Exception):
    def __init__(self, model: str) -> None:
        super().__init__(f"model {model} has no price configured")
        self.model = model


_FLOATS: dict[float, Decimal] = {}  # the ratios and prices of the tables, converted once each


def _dec(x: float | int | Decimal) -> Decimal:
    if isinstance(x, Decimal):
        return x
    if isinstance(x, int):
        return Decimal(x)
    found = _FLOATS.get(x)
    if found is None:
        found = Decimal(repr(x))
        if x:  # 0.0 and -0.0 would share a key (and NaN finds none): those are converted each time
            if len(_FLOATS) >= 4096:
                _FLOATS.clear()
            _FLOATS[x] = found
    return found


def round_half_up(x: Decimal | float | int) -> int:
    return int(_dec(x).to_integral_value(rounding=ROUND_HALF_UP))


def wildcard_name(model: str) -> str:
    """GPTs share one price: `gpt-4-gizmo-…` → `gpt-4-gizmo-*`, `gpt-4o-gizmo-…` → `gpt-4o-gizmo-*`."""
    lower = model.lower()
    if lower.startswith("gpt-4-gizmo"):
        return "gpt-4-gizmo-*"
    if lower.startswith("gpt-4o-gizmo"):
        return "gpt-4o-gizmo-*"
    return model


def completion_ratio_for(model: str, table: Mapping[str, float] = DEFAULT_COMPLETION_RATIO) -> float:
    """The configured CompletionRatio if any (the admin's value wins), else the reference's name rules."""
    name = wildcard_name(model)
    if name in table:
        return float(table[name])
    if name.startswith("gpt-3.5"):
        if name == "gpt-3.5-turbo" or name.endswith("0125"):
            return 3
        return 2 if name.endswith("1106") else 4 / 3
    if name == "chatgpt-4o-latest":
        return 3
    if name.startswith("gpt-4") and not name.endswith(("-all", "-gizmo-*")):
        if name.startswith("gpt-4o"):
            return 3 if name == "gpt-4o-2024-05-13" else 4
        if name.startswith("gpt-4-turbo") or name.endswith("preview"):
            return 3
        return 2
    if name.startswith(("o1", "o3", "o4")):
        return 4
    if "claude-instant-1" in name or "claude-2" in name:
        return 3
    if any(family in name for family in ("claude-3", "claude-sonnet-", "claude-opus-", "claude-haiku-",
                                         "claude-fable-")):
        return 5
    if name.startswith(("mistral-", "gemini-1.0", "gemini-pro")):
        return 3
    if name.startswith("gemini-"):
        return 4
    if name.startswith("command"):
        return {"command-r": 3, "command-r-plus": 5, "command-r-08-2024": 4, "command-r-plus-08-2024": 8}.get(name, 2)
    if name.startswith("deepseek"):
        return 4
    return {"llama3-8b-8192": 2, "llama3-70b-8192": 0.79 / 0.59}.get(name, 1)


@dataclass(frozen=True, slots=True)
class Price:
    """How one request is billed: by tokens (model_price None) or per call (USD)."""

    model: str
    model_ratio: float
    completion_ratio: float
    group_ratio: float
    model_price: float | None = None
    cache_ratio: float | None = None  # cache-read tokens; None = billed as prompt tokens
    cache_creation_ratio: float | None = None  # cache-write tokens; None = billed as prompt tokens
    cache_creation_1h_ratio: float | None = None  # one-hour cache-write tokens; None = billed as prompt tokens
    image_ratio: float | None = None  # input image tokens (image models); None = billed as prompt tokens
    image_output_ratio: float | None = None  # output image tokens; None = billed as completion tokens

    @property
    def per_call(self) -> bool:
        return self.model_price is not None


def group_ratio_for(group: str, table: Mapping[str, float] = DEFAULT_GROUP_RATIO) -> float:
    """Unknown group ⇒ 1."""
    return float(table.get(group, 1))


def resolve_price(
    model: str,
    group: str = "default",
    *,
    model_ratio: Mapping[str, float] = DEFAULT_MODEL_RATIO,
    completion_ratio: Mapping[str, float] = DEFAULT_COMPLETION_RATIO,
    model_price: Mapping[str, float] = DEFAULT_MODEL_PRICE,
    group_ratio: Mapping[str, float] = DEFAULT_GROUP_RATIO,
    default_ratio: float | None = None,
    cache_ratio: Mapping[str, float] = DEFAULT_CACHE_RATIO,
    create_cache_ratio: Mapping[str, float] = DEFAULT_CREATE_CACHE_RATIO,
    create_cache_ratio_1h: Mapping[str, float] = DEFAULT_CREATE_CACHE_RATIO_1H,
    image_ratio: Mapping[str, float] = DEFAULT_IMAGE_RATIO,
    image_output_ratio: Mapping[str, float] = DEFAULT_IMAGE_OUTPUT_RATIO,
) -> Price:
    """ModelPrice first (per call; a negative price means unset), then ModelRatio, then the optional
    default ratio; otherwise PriceNotConfigured("model X has no price configured"). The cache ratios
    come with a ratio price only (a per-call price covers the whole request)."""
    name = wildcard_name(model)
    gr = group_ratio_for(group, group_ratio)
    for key in (model, name):
        price = model_price.get(key)
        if price is not None and price >= 0:
            return Price(model, 0.0, 1.0, gr, float(price))
    ratio = model_ratio.get(model, model_ratio.get(name))
    if ratio is None:
        if default_ratio is None:
            raise PriceNotConfigured(model)
        ratio = default_ratio
    write = _lookup(create_cache_ratio, model, name)
    return Price(model, float(ratio), completion_ratio_for(model, completion_ratio), gr,
                 cache_ratio=_lookup(cache_ratio, model, name), cache_creation_ratio=write,
                 cache_creation_1h_ratio=one_hour_write_ratio(_lookup(create_cache_ratio_1h, model, name), write),
                 image_ratio=_lookup(image_ratio, model, name),
                 image_output_ratio=_lookup(image_output_ratio, model, name))


def one_hour_write_ratio(configured: float | None, five_minute: float | None) -> float | None:
    """The ratio of a one-hour cache write: the model's CreateCacheRatio1h entry; without one,
    ONE_HOUR_WRITE_RATIO when the model has a (five-minute) CreateCacheRatio entry, since a model
    priced for cache writes is one whose provider bills them; else None (billed as prompt tokens)."""
    if configured is not None:
        return configured
    return ONE_HOUR_WRITE_RATIO if five_minute is not None else None


class OptionTables(Protocol):
    def get_json(self, key: str) -> Any: ...
    def get_bool(self, key: str) -> bool: ...


def resolve_configured(options: OptionTables, model: str, group: str = "default") -> Price:
    """resolve_price with the tables the operator configured (the options), as the relay prices a
    request; PriceNotConfigured when the model has no price there (and self-use mode is off)."""
    return resolve_price(
        model, group,
        model_ratio=options.get_json("ModelRatio") or {},
        completion_ratio=options.get_json("CompletionRatio") or {},
        model_price=options.get_json("ModelPrice") or {}, group_ratio=options.get_json("GroupRatio") or {},
        cache_ratio=options.get_json("CacheRatio") or {},
        create_cache_ratio=options.get_json("CreateCacheRatio") or {},
        create_cache_ratio_1h=options.get_json("CreateCacheRatio1h") or {},
        image_ratio=options.get_json("ImageRatio") or {},
        image_output_ratio=options.get_json("ImageOutputRatio") or {},
        default_ratio=SELF_USE_DEFAULT_RATIO if options.get_bool("SelfUseModeEnabled") else None)


def is_priced(options: OptionTables, model: str) -> bool:
    try:
        resolve_configured(options, model)
    except PriceNotConfigured:
        return False
    return True


def _lookup(table: Mapping[str, float], model: str, name: str) -> float | None:
    value = table.get(model, table.get(name))
    return None if value is None else float(value)


def ratio_quota(
    prompt_tokens: int,
    completion_tokens: int,
    model_ratio: float,
    completion_ratio: float = 1,
    group_ratio: float = 1,
) -> int:
    """round_half_up((P + C × CR) × MR × GR); at least 1 when MR > 0 and tokens were used.

    No tokens at all (the upstream produced nothing) is 0: that attempt is refunded, not billed."""
    if prompt_tokens <= 0 and completion_tokens <= 0:
        return 0
    mr = _dec(model_ratio)
    quota = round_half_up(
        (_dec(prompt_tokens) + _dec(completion_tokens) * _dec(completion_ratio)) * mr * _dec(group_ratio)
    )
    if mr > 0 and quota < 1:
        return 1
    return quota


def per_call_quota(model_price: float, group_ratio: float = 1, quota_per_unit: int = QUOTA_PER_UNIT) -> int:
    """round_half_up(ModelPrice × QuotaPerUnit × GR)."""
    return round_half_up(_dec(model_price) * _dec(quota_per_unit) * _dec(group_ratio))


def estimate_tokens(prompt_tokens: int, max_tokens: int | None, pre_consumed_quota: int = PRE_CONSUMED_QUOTA) -> int:
    """E = P_est + max_tokens when the request sets max_tokens (> 0), else PreConsumedQuota."""
    if max_tokens is not None and max_tokens > 0:
        return prompt_tokens + max_tokens
    return pre_consumed_quota


def pre_charge_quota(
    price: Price,
    prompt_tokens: int,
    max_tokens: int | None,
    *,
    pre_consumed_quota: int = PRE_CONSUMED_QUOTA,
    quota_per_unit: int = QUOTA_PER_UNIT,
) -> int:
    """pre = round_half_up(E × MR × GR), or the full per-call price."""
    if price.model_price is not None:
        return per_call_quota(price.model_price, price.group_ratio, quota_per_unit)
    e = estimate_tokens(prompt_tokens, max_tokens, pre_consumed_quota)
    return round_half_up(_dec(e) * _dec(price.model_ratio) * _dec(price.group_ratio))

def most_output_tokens(max_tokens: int | None, output_cap: int | None, choices: int = 1) -> int | None:
    """The most output tokens an answer may hold: `max_tokens` (> 0; clamped to the model's cap, as
    the request is sent), else the model's cap; `choices` answers (`n`) each that long. None when
    neither is known: nothing bounds the answer."""
    limit = max_tokens if max_tokens is not None and max_tokens > 0 else None
    if output_cap is not None and output_cap > 0:
        limit = output_cap if limit is None else min(limit, output_cap)
    return None if limit is None else limit * max(choices, 1)


def worst_case_quota(price: Price, prompt_tokens: int, output_tokens: int | None, pre: int) -> int:
    """The most a request may cost (docs/billing.md, Pre-charge): its prompt and `output_tokens`
    completion tokens at the dearest output ratio its answer may be billed at (CR, or
    ImageOutputRatio for a model that draws), never less than its pre-charge `pre`. A per-call price
    is known whole; an answer nothing bounds (None) leaves the estimate, `pre`."""
    if price.per_call or output_tokens is None:
        return pre
    ratio = max(price.completion_ratio, price.image_output_ratio or 0)
    return max(pre, ratio_quota(prompt_tokens, output_tokens, price.model_ratio, ratio, price.group_ratio))



def settle_quota(
    price: Price, prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0,
    cache_creation_tokens: int = 0, cache_creation_1h_tokens: int = 0, quota_per_unit: int = QUOTA_PER_UNIT,
) -> int:
    """The final quota of a request from its usage (per-call price, or ratio billing).

    `prompt_tokens` includes the cache reads (`cached_tokens`) and the cache writes
    (`cache_creation_tokens`), of which `cache_creation_1h_tokens` went to the one-hour cache. Each
    kind is billed at its ratio when the price has one, else as a normal prompt token:
    round_half_up(((P − Cr − Cw) + Cr × CRr + Cw5 × CRw + Cw1h × CRw1h + C × CR) × MR × GR),
    Cw5 = Cw − Cw1h. Counts an upstream got wrong are clamped: reads to P, writes to what the reads
    leave, one-hour writes to the writes.
    """
    if price.model_price is not None:
        return per_call_quota(price.model_price, price.group_ratio, quota_per_unit)
    read = max(0, min(cached_tokens, prompt_tokens)) if price.cache_ratio is not None else 0
    writes = max(0, min(cache_creation_tokens, prompt_tokens - read))
    one_hour = max(0, min(cache_creation_1h_tokens, writes))
    five = writes - one_hour if price.cache_creation_ratio is not None else 0
    one_hour = one_hour if price.cache_creation_1h_ratio is not None else 0
    if not read and not five and not one_hour:
        return ratio_quota(prompt_tokens, completion_tokens, price.model_ratio, price.completion_ratio,
                           price.group_ratio)
    prompt = (_dec(prompt_tokens - read - five - one_hour) + _dec(read) * _dec(price.cache_ratio or 0)
              + _dec(five) * _dec(price.cache_creation_ratio or 0)
              + _dec(one_hour) * _dec(price.cache_creation_1h_ratio or 0))
    mr = _dec(price.model_ratio)
    quota = round_half_up(
        (prompt + _dec(completion_tokens) * _dec(price.completion_ratio)) * mr * _dec(price.group_ratio))
    return 1 if mr > 0 and quota < 1 else quota


def speech_quota(price: Price, input_text: str, *, quota_per_unit: int = QUOTA_PER_UNIT) -> int:
    """TTS: the characters of `input` are the prompt tokens; no completion tokens."""
    return settle_quota(price, len(input_text or ""), 0, quota_per_unit=quota_per_unit)


def transcription_quota(price: Price, output_tokens: int, *, quota_per_unit: int = QUOTA_PER_UNIT) -> int:
    """Whisper: no prompt tokens; completion = tokens of the returned text (audio length not billed)."""
    return settle_quota(price, 0, output_tokens, quota_per_unit=quota_per_unit)


def image_quota(
    price: Price, size: str | None, quality: str | None, n: int | None, *, quota_per_unit: int = QUOTA_PER_UNIT
) -> int:
    """round_half_up(unit × size ratio × quality ratio × n × GR × QuotaPerUnit), unit = ModelPrice or
    0.0025 × ModelRatio USD; dall-e-3 `hd` doubles (×1.5 for 1792 sizes)."""
    unit = _dec(price.model_price) if price.model_price is not None else IMAGE_RATIO_UNIT_USD * _dec(price.model_ratio)
    return round_half_up(unit * image_units(price, size, quality, n) * _dec(price.group_ratio) * _dec(quota_per_unit))


def image_units(price: Price, size: str | None, quality: str | None, n: int | None) -> Decimal:
    """How many times the unit price an images request costs: size ratio × quality ratio × n."""
    size_ratio = IMAGE_SIZE_RATIOS.get(size or "", Decimal(1))
    quality_ratio = Decimal(1)
    if price.model == "dall-e-3" and quality == "hd":
        quality_ratio = Decimal("1.5") if size in WIDE_IMAGE_SIZES else Decimal(2)
    count = n if n and n > 0 else 1
    return size_ratio * quality_ratio * count


def console_prices(model_ratio: float, completion_ratio: float = 1, group_ratio: float = 1) -> tuple[float, float]:
    """USD per 1M tokens shown by the console: (MR × 2 × GR, MR × CR × 2 × GR)."""
    prompt = _dec(model_ratio) * 2 * _dec(group_ratio)
    return float(prompt), float(prompt * _dec(completion_ratio))


def quota_to_usd(quota: int, quota_per_unit: int = QUOTA_PER_UNIT) -> float:
    return float(Decimal(quota) / Decimal(quota_per_unit))
