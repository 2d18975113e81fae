# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Billing arithmetic of docs/billing.md, to the unit. Rounding is half up (x.5 → x+1), in Decimal."""

import orjson
import pytest

from api.services.billing import pricing
from api.services.billing.pricing import (
    DEFAULT_COMPLETION_RATIO,
    DEFAULT_GROUP_RATIO,
    DEFAULT_MODEL_PRICE,
    DEFAULT_MODEL_RATIO,
    Price,
    PriceNotConfigured,
    completion_ratio_for,
    console_prices,
    estimate_tokens,
    group_ratio_for,
    image_quota,
    per_call_quota,
    pre_charge_quota,
    quota_to_usd,
    ratio_quota,
    resolve_price,
    round_half_up,
    settle_quota,
    speech_quota,
    transcription_quota,
)
from api.upstream.catalogue import ChannelType
from models import Log, Token, User
from models.enums import LogType
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    drain,
    gateway,
    headers_for,
    live_balance,
    make_key,
    rich_user,
)
from tests.upstream.providers.claude.fake_anthropic import FakeClaude


def test_reference_defaults() -> None:
    assert DEFAULT_MODEL_RATIO["gpt-4o"] == 2.5
    assert DEFAULT_MODEL_RATIO["gpt-3.5-turbo"] == 0.25
    assert DEFAULT_MODEL_RATIO["gpt-4"] == 15
    assert DEFAULT_MODEL_RATIO["claude-3-5-sonnet-20240620"] == 1.5
    assert DEFAULT_MODEL_RATIO["whisper-1"] == 15
    assert DEFAULT_MODEL_RATIO["tts-1"] == 7.5
    assert DEFAULT_MODEL_RATIO["text-embedding-3-small"] == 0.01
    assert DEFAULT_MODEL_PRICE["dall-e-3"] == 0.04
    assert DEFAULT_MODEL_PRICE["mj_imagine"] == 0.1
    assert DEFAULT_MODEL_PRICE["mj_describe"] == 0.05
    assert DEFAULT_MODEL_PRICE["mj_upscale"] == 0.05
    assert DEFAULT_MODEL_PRICE["mj_inpaint"] == 0
    assert DEFAULT_MODEL_PRICE["mj_custom_zoom"] == 0
    assert DEFAULT_MODEL_PRICE["swap_face"] == 0.05
    assert DEFAULT_MODEL_PRICE["suno_music"] == 0.1
    assert DEFAULT_MODEL_PRICE["suno_lyrics"] == 0.01
    assert DEFAULT_MODEL_PRICE["gpt-4-gizmo-*"] == 0.1
    assert DEFAULT_GROUP_RATIO == {"default": 1, "vip": 1, "svip": 1}
    assert pricing.QUOTA_PER_UNIT == 500_000 and pricing.PRE_CONSUMED_QUOTA == 500


@pytest.mark.parametrize(
    "table", [DEFAULT_MODEL_RATIO, DEFAULT_COMPLETION_RATIO, DEFAULT_MODEL_PRICE, DEFAULT_GROUP_RATIO]
)
def test_tables_are_json_able_option_defaults(table) -> None:
    assert orjson.loads(orjson.dumps(table)) == table
    assert all(isinstance(k, str) and isinstance(v, int | float) and v >= 0 for k, v in table.items())


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (3.5, 4), (4.5, 5), (2.4999, 2), (2.5001, 3), (0, 0), (7, 7), (0.49, 0)],
)
def test_round_half_up(value, expected) -> None:
    assert round_half_up(value) == expected


def test_ratio_formula() -> None:
    assert ratio_quota(10, 10, 2.5, 4, 1) == 125  # (10 + 10×4) × 2.5
    assert ratio_quota(1000, 0, 1) == 1000  # ratio 1 = 1 quota per token
    assert ratio_quota(100, 0, 1, 1, 0.5) == 50  # group ratio
    assert ratio_quota(100, 50, 2, 3, 1.5) == 750  # (100 + 150) × 2 × 1.5


def test_ratio_half_cases_round_up() -> None:
    assert ratio_quota(1, 0, 2.5) == 3  # 2.5 → 3 (banker's round would give 2)
    assert ratio_quota(9, 0, 0.5) == 5  # 4.5 → 5 (banker's: 4)
    assert ratio_quota(7, 0, 0.5) == 4  # 3.5 → 4
    assert ratio_quota(19, 10, 2.5, 4) == 148  # 147.5 → 148


def test_ratio_uses_the_decimal_value_of_ratios() -> None:
    # 90 × 0.35 = 31.5 exactly in decimal; with binary floats it is 31.499999999999996 (→ 31)
    assert 90 * 0.35 < 31.5
    assert ratio_quota(90, 0, 0.35) == 32
    assert ratio_quota(50, 0, 1.15) == 58  # float: 57.49999999999999
    assert ratio_quota(100, 100, 0.075, 4) == 38  # 37.5
    assert ratio_quota(3, 0, 0.1) == 0 + 1  # 0.3 → 0 → min 1
    assert ratio_quota(15, 0, 0.1) == 2  # 1.5 → 2


def test_min_one_when_model_ratio_positive() -> None:
    assert ratio_quota(1, 0, 0.01) == 1  # 0.01 → 0 → 1
    assert ratio_quota(1, 1, 0.01, 1, 0.1) == 1
    assert ratio_quota(100, 100, 0) == 0  # free model: no minimum
    assert ratio_quota(0, 0, 2.5) == 0  # nothing produced: nothing billed (the attempt is refunded)


def test_per_call_price() -> None:
    assert per_call_quota(0.04) == 20_000
    assert per_call_quota(0.04, 0.9) == 18_000
    assert per_call_quota(0.1, 1.5) == 75_000
    assert per_call_quota(0.01) == 5_000
    assert per_call_quota(0.000001) == 1  # 0.5 → 1
    assert per_call_quota(0.000005) == 3  # 2.5 → 3
    assert per_call_quota(0.04, 1, quota_per_unit=1_000_000) == 40_000
    assert per_call_quota(0) == 0


def test_resolve_ratio_price() -> None:
    price = resolve_price("gpt-4o", "vip", group_ratio={"vip": 0.8})
    assert price == Price("gpt-4o", 2.5, 4, 0.8, None, cache_ratio=0.5)
    assert not price.per_call
    assert resolve_price("gpt-4o", "nosuchgroup").group_ratio == 1


def test_resolve_per_call_price_wins() -> None:
    price = resolve_price("dall-e-3")
    assert price.per_call and price.model_price == 0.04
    assert resolve_price("mj_imagine").model_price == 0.1
    assert resolve_price("gpt-4-gizmo-g-abc123").model_price == 0.1  # wildcard
    assert resolve_price("gpt-4o-gizmo-g-abc").model_ratio == 2.5


def test_negative_price_means_unset() -> None:
    price = resolve_price("m", model_price={"m": -1}, model_ratio={"m": 3})
    assert not price.per_call and price.model_ratio == 3


def test_unpriced_model_refused_with_its_name() -> None:
    with pytest.raises(PriceNotConfigured, match="^model my-model has no price configured$") as info:
        resolve_price("my-model")
    assert info.value.model == "my-model"


def test_unpriced_model_with_default_ratio_option() -> None:
    price = resolve_price("my-model", default_ratio=37.5)
    assert price.model_ratio == 37.5 and price.completion_ratio == 1


def test_configured_tables_replace_defaults() -> None:
    price = resolve_price(
        "gpt-4o", model_ratio={"gpt-4o": 1}, completion_ratio={"gpt-4o": 2}, model_price={}, group_ratio={},
        cache_ratio={}, create_cache_ratio={"gpt-4o": 2}
    )
    assert price == Price("gpt-4o", 1, 2, 1, None, cache_ratio=None, cache_creation_ratio=2,
                          cache_creation_1h_ratio=pricing.ONE_HOUR_WRITE_RATIO)
    assert resolve_price("free", model_ratio={"free": 0}).model_ratio == 0


@pytest.mark.parametrize(
    ("model", "ratio"),
    [
        ("gpt-3.5-turbo", 3),
        ("gpt-3.5-turbo-0125", 3),
        ("gpt-3.5-turbo-1106", 2),
        ("gpt-3.5-turbo-0613", 4 / 3),
        ("gpt-4", 2),
        ("gpt-4-32k", 2),
        ("gpt-4-turbo", 3),
        ("gpt-4-1106-preview", 3),
        ("gpt-4o", 4),
        ("gpt-4o-mini", 4),
        ("gpt-4o-2024-05-13", 3),
        ("chatgpt-4o-latest", 3),
        ("gpt-4-gizmo-g-1", 2),
        ("o1-mini", 4),
        ("o3-mini", 4),
        ("claude-3-5-sonnet-20240620", 5),
        ("claude-2.1", 3),
        ("claude-instant-1", 3),
        ("gemini-1.5-pro", 4),
        ("deepseek-chat", 4),
        ("command-r", 3),
        ("command-r-plus", 5),
        ("text-embedding-3-small", 1),
        ("unknown-model", 1),
    ],
)
def test_completion_ratio_rules(model, ratio) -> None:
    assert completion_ratio_for(model) == pytest.approx(ratio)


def test_configured_completion_ratio_wins_over_rules() -> None:
    assert completion_ratio_for("gpt-4o", {"gpt-4o": 2}) == 2


def test_group_ratio() -> None:
    assert group_ratio_for("default") == 1
    assert group_ratio_for("vip", {"vip": 0.5}) == 0.5
    assert group_ratio_for("gone", {"vip": 0.5}) == 1


def test_estimate() -> None:
    assert estimate_tokens(100, 200) == 300
    assert estimate_tokens(100, None) == 500
    assert estimate_tokens(100, 0) == 500  # 0 = not set, as in new-api (docs/billing.md, "Pre-charge")
    assert estimate_tokens(100, None, pre_consumed_quota=1000) == 1000


def test_pre_charge() -> None:
    gpt4o = resolve_price("gpt-4o")
    assert pre_charge_quota(gpt4o, 100, 200) == 750  # (100 + 200) × 2.5
    assert pre_charge_quota(gpt4o, 100, None) == 1250  # 500 × 2.5
    assert pre_charge_quota(gpt4o, 100, None, pre_consumed_quota=0) == 0
    vip = resolve_price("gpt-4o", "vip", group_ratio={"vip": 2})
    assert pre_charge_quota(vip, 100, 200) == 1500
    mini = resolve_price("gpt-4o-mini")
    assert pre_charge_quota(mini, 5, 5) == 1  # 0.75 → 1 (half up)
    assert pre_charge_quota(mini, 10, 20) == 2  # 2.25 → 2
    assert pre_charge_quota(resolve_price("dall-e-3"), 0, None) == 20_000  # the full per-call price


def test_worst_case() -> None:
    """The most a request may cost (docs/billing.md, Pre-charge, While other requests run)."""
    assert pricing.most_output_tokens(None, 16384) == 16384  # no max_tokens: the model's cap
    assert pricing.most_output_tokens(200, 16384) == 200
    assert pricing.most_output_tokens(50_000, 16384) == 16384  # clamped, as the request is sent
    assert pricing.most_output_tokens(200, None) == 200
    assert pricing.most_output_tokens(0, None) is None  # nothing bounds the answer
    assert pricing.most_output_tokens(200, 16384, choices=3) == 600  # n answers
    gpt4o = resolve_price("gpt-4o")  # MR 2.5, CR 4
    assert pricing.worst_case_quota(gpt4o, 100, 16384, 1250) == 164_090  # (100 + 16384 × 4) × 2.5
    assert pricing.worst_case_quota(gpt4o, 100, 200, 750) == 2250  # (100 + 200 × 4) × 2.5, not the estimate's 750
    assert pricing.worst_case_quota(gpt4o, 100, None, 1250) == 1250  # unbounded: the estimate
    assert pricing.worst_case_quota(gpt4o, 100, 0, 1250) == 1250  # never below the pre-charge
    assert pricing.worst_case_quota(gpt4o, 2000, 0, 1250) == 5000  # a long prompt with no billed output
    drawing = Price("gemini-image", 0.15, 4, 1, image_output_ratio=20)
    assert pricing.worst_case_quota(drawing, 10, 1290, 75) == 3872  # (10 + 1290 × 20) × 0.15 = 3871.5
    assert pricing.worst_case_quota(resolve_price("dall-e-3"), 0, 16384, 20_000) == 20_000  # per call: known


def test_settle() -> None:
    assert settle_quota(resolve_price("gpt-4o"), 19, 10) == 148
    assert settle_quota(resolve_price("mj_imagine"), 0, 0) == 50_000
    assert settle_quota(resolve_price("mj_imagine", "x", group_ratio={"x": 0.5}), 1, 1) == 25_000


def test_speech_by_characters() -> None:
    tts = resolve_price("tts-1")
    assert speech_quota(tts, "héllo 你好") == 60  # 8 characters × 7.5
    assert speech_quota(tts, "a") == 8  # 7.5 → 8
    assert speech_quota(resolve_price("tts-1-hd", "g", group_ratio={"g": 0.1}), "ab") == 3  # 2 × 15 × 0.1


def test_transcription_by_output_tokens() -> None:
    whisper = resolve_price("whisper-1")
    assert transcription_quota(whisper, 10) == 150
    assert transcription_quota(whisper, 0) == 0


@pytest.mark.parametrize(
    ("size", "quality", "n", "expected"),
    [
        ("1024x1024", "standard", 1, 20_000),
        ("1024x1024", None, 1, 20_000),
        ("1792x1024", "standard", 1, 40_000),
        ("1024x1792", None, 1, 40_000),
        ("1024x1024", "hd", 1, 40_000),
        ("1792x1024", "hd", 1, 60_000),  # 0.04 × 2 × 1.5
        ("1024x1024", "standard", 3, 60_000),
        ("1024x1024", None, None, 20_000),
        ("512x512", None, 1, 9_000),  # 0.45
        ("256x256", None, 1, 8_000),  # 0.4
        ("333x333", None, 1, 20_000),  # unknown size ratio 1
    ],
)
def test_dall_e_3_images(size, quality, n, expected) -> None:
    assert image_quota(resolve_price("dall-e-3"), size, quality, n) == expected


def test_images_group_ratio_price_from_ratio_and_no_hd_for_other_models() -> None:
    assert image_quota(resolve_price("dall-e-3", "g", group_ratio={"g": 0.5}), "1024x1024", None, 2) == 20_000
    dalle2 = resolve_price("dall-e-2")
    assert image_quota(dalle2, "256x256", None, 1) == 4_000  # 0.02 × 0.4
    assert image_quota(dalle2, "512x512", "hd", 1) == 4_500  # hd only for dall-e-3
    by_ratio = resolve_price("my-image", model_ratio={"my-image": 8}, model_price={})
    assert image_quota(by_ratio, "1024x1024", None, 1) == 10_000  # 0.0025 × 8 USD
    half = Price("img", 0, 1, 1, 0.000001)
    assert image_quota(half, "1024x1024", None, 1) == 1  # 0.5 → 1


def test_console_prices_per_million() -> None:
    assert console_prices(2.5, 4) == (5.0, 20.0)
    assert console_prices(0.075, 4) == (0.15, 0.6)
    assert console_prices(2.5, 4, 0.9) == (4.5, 18.0)
    assert console_prices(15) == (30.0, 30.0)


def test_quota_to_usd() -> None:
    assert quota_to_usd(500_000) == 1.0
    assert quota_to_usd(20_000) == 0.04


# -- cached input (options CacheRatio / CreateCacheRatio) ------------------------------------------


def test_cache_ratios_resolve_per_model_with_defaults() -> None:
    claude = resolve_price("claude-3-5-sonnet-20241022")
    assert (claude.cache_ratio, claude.cache_creation_ratio) == (0.1, 1.25)
    assert resolve_price("gpt-4.1").cache_ratio == 0.25 and resolve_price("gpt-4.1").cache_creation_ratio is None
    assert resolve_price("gpt-4").cache_ratio is None  # no cache price: cached tokens are prompt tokens
    custom = resolve_price("gpt-4", cache_ratio={"gpt-4": 0.3}, create_cache_ratio={})
    assert (custom.cache_ratio, custom.cache_creation_ratio) == (0.3, None)
    assert resolve_price("dall-e-3").cache_ratio is None  # per call


def test_cached_tokens_billed_at_their_ratios_to_the_unit() -> None:
    plain = Price("m", 3, 5, 1)
    # No ratio configured: cached and cache-write tokens are ordinary prompt tokens.
    assert settle_quota(plain, 1000, 100, cached_tokens=800, cache_creation_tokens=100) == (1000 + 500) * 3
    read = Price("m", 3, 5, 1, cache_ratio=0.1)
    # (1000 − 800) + 800 × 0.1 = 280 prompt units, + 100 × 5 → (280 + 500) × 3 = 2340
    assert settle_quota(read, 1000, 100, cached_tokens=800) == 2340
    write = Price("m", 3, 5, 1, cache_creation_ratio=1.25)
    # (1000 − 100) + 100 × 1.25 = 1025, + 500 → 1525 × 3 = 4575; cache reads billed as prompt
    assert settle_quota(write, 1000, 100, cached_tokens=800, cache_creation_tokens=100) == 4575
    both = Price("m", 3, 5, 0.5, cache_ratio=0.1, cache_creation_ratio=1.25)
    # (1000 − 800 − 100) + 80 + 125 = 305, + 500 = 805 × 3 × 0.5 = 1207.5 → 1208 (half up)
    assert settle_quota(both, 1000, 100, cached_tokens=800, cache_creation_tokens=100) == 1208
    # Nonsense from an upstream (more cached than prompt) never makes a negative prompt price.
    expected = round_half_up(100 * 0.1 * 3 * 0.5)
    assert settle_quota(both, 100, 0, cached_tokens=500, cache_creation_tokens=500) == expected
    assert settle_quota(both, 1, 0, cached_tokens=1) == 1  # at least 1 when the model has a price
    assert settle_quota(both, 0, 0) == 0
    per_call = Price("m", 0, 1, 1, model_price=0.01, cache_ratio=0.1)
    assert settle_quota(per_call, 1000, 0, cached_tokens=1000) == per_call_quota(0.01)


# -- one-hour cache writes (option CreateCacheRatio1h) ----------------------------------------------


def test_one_hour_write_ratio_resolves_per_model() -> None:
    """An entry of CreateCacheRatio1h wins; without one, a model priced for cache writes pays
    ONE_HOUR_WRITE_RATIO (Anthropic's 2 × input); a model in neither table pays prompt tokens."""
    claude = resolve_price("claude-sonnet-4-5-20250929")
    assert (claude.cache_creation_ratio, claude.cache_creation_1h_ratio) == (1.25, 2)
    assert set(pricing.DEFAULT_CREATE_CACHE_RATIO_1H) == set(pricing.DEFAULT_CREATE_CACHE_RATIO)
    tables = {"model_ratio": {"m": 1, "n": 1, "o": 1}, "create_cache_ratio": {"m": 1.25, "n": 1.25}}
    assert resolve_price("m", **tables, create_cache_ratio_1h={"m": 1.6}).cache_creation_1h_ratio == 1.6
    assert resolve_price("n", **tables, create_cache_ratio_1h={"m": 1.6}).cache_creation_1h_ratio == 2
    neither = resolve_price("o", **tables, create_cache_ratio_1h={})
    assert (neither.cache_creation_ratio, neither.cache_creation_1h_ratio) == (None, None)
    only_1h = resolve_price("o", **tables, create_cache_ratio_1h={"o": 3})
    assert (only_1h.cache_creation_ratio, only_1h.cache_creation_1h_ratio) == (None, 3)
    assert resolve_price("dall-e-3").cache_creation_1h_ratio is None  # per call


class Options:
    """The option tables resolve_configured reads, as JSON values."""

    def __init__(self, **tables: object) -> None:
        self.tables = tables

    def get_json(self, key: str) -> object:
        return self.tables.get(key)

    def get_bool(self, key: str) -> bool:
        return False


def test_configured_one_hour_ratio_comes_from_its_option() -> None:
    options = Options(ModelRatio={"m": 1}, CreateCacheRatio={"m": 1.25}, CreateCacheRatio1h={"m": 2.5})
    assert pricing.resolve_configured(options, "m").cache_creation_1h_ratio == 2.5
    options = Options(ModelRatio={"m": 1}, CreateCacheRatio={"m": 1.25})
    assert pricing.resolve_configured(options, "m").cache_creation_1h_ratio == 2


def test_one_hour_writes_billed_at_their_ratio_to_the_unit() -> None:
    price = Price("m", 3, 5, 1, cache_ratio=0.1, cache_creation_ratio=1.25, cache_creation_1h_ratio=2)
    # (1000 − 600 − 300) + 600 × 0.1 + 180 × 1.25 + 120 × 2 = 100 + 60 + 225 + 240 = 625,
    # + 100 × 5 = 1125, × 3 = 3375
    assert settle_quota(price, 1000, 100, cached_tokens=600, cache_creation_tokens=300,
                        cache_creation_1h_tokens=120) == 3375
    # All writes one-hour: (1000 − 600 − 300) + 60 + 300 × 2 = 760, + 500 = 1260 × 3 = 3780
    assert settle_quota(price, 1000, 100, cached_tokens=600, cache_creation_tokens=300,
                        cache_creation_1h_tokens=300) == 3780
    # No one-hour writes: exactly the five-minute bill (100 + 60 + 375 + 500) × 3 = 3105
    assert settle_quota(price, 1000, 100, cached_tokens=600, cache_creation_tokens=300) == 3105


def test_one_hour_writes_cost_what_anthropic_bills() -> None:
    """1M tokens written for an hour cost 2 × 1M input tokens; written for 5 minutes, 1.25 ×."""
    sonnet = resolve_price("claude-sonnet-4-5-20250929")  # $3 / 1M input
    prompt = settle_quota(sonnet, 1_000_000, 0)
    assert prompt == 1_500_000  # $3
    assert settle_quota(sonnet, 1_000_000, 0, cache_creation_tokens=1_000_000,
                        cache_creation_1h_tokens=1_000_000) == 2 * prompt
    assert settle_quota(sonnet, 1_000_000, 0, cache_creation_tokens=1_000_000) == 1_875_000  # 1.25 ×


def test_one_hour_rounding_edges_half_up_in_decimal() -> None:
    one_hour = Price("m", 1, 1, 1, cache_creation_1h_ratio=1.15)
    # 50 × 1.15 = 57.5 → 58 (float arithmetic gives 57.49999999999999 and would round to 57)
    assert settle_quota(one_hour, 50, 0, cache_creation_tokens=50, cache_creation_1h_tokens=50) == 58
    # (1 + 1 × 1.25 + 1 × 2 + 1 × 0.75) × 0.5 = 2.5 → 3 (half up, never banker's 2)
    half = Price("m", 0.5, 0.75, 1, cache_creation_ratio=1.25, cache_creation_1h_ratio=2)
    assert settle_quota(half, 3, 1, cache_creation_tokens=2, cache_creation_1h_tokens=1) == 3
    both = Price("m", 1, 1, 0.5, cache_creation_ratio=1.25, cache_creation_1h_ratio=2)
    # (2 × 1.25 + 1 × 2) × 0.5 = 2.25 → 2; (1 × 1.25 + 2 × 2) × 0.5 = 2.625 → 3
    assert settle_quota(both, 3, 0, cache_creation_tokens=3, cache_creation_1h_tokens=1) == 2
    assert settle_quota(both, 3, 0, cache_creation_tokens=3, cache_creation_1h_tokens=2) == 3
    # 1 × 2 × 0.001 = 0.002 → at least 1 when the model has a price
    tiny = Price("m", 0.001, 1, 1, cache_creation_1h_ratio=2)
    assert settle_quota(tiny, 1, 0, cache_creation_tokens=1, cache_creation_1h_tokens=1) == 1


def test_one_hour_writes_without_their_ratio_are_prompt_tokens() -> None:
    five_only = Price("m", 1, 1, 1, cache_creation_ratio=1.25)
    # 100 one-hour writes at the prompt rate, 100 five-minute writes at 1.25: 100 + 125 = 225
    assert settle_quota(five_only, 200, 0, cache_creation_tokens=200, cache_creation_1h_tokens=100) == 225
    one_hour_only = Price("m", 1, 1, 1, cache_creation_1h_ratio=2)
    # 100 five-minute writes at the prompt rate, 100 one-hour writes at 2: 100 + 200 = 300
    assert settle_quota(one_hour_only, 200, 0, cache_creation_tokens=200, cache_creation_1h_tokens=100) == 300
    assert settle_quota(Price("m", 1, 1, 1), 200, 0, cache_creation_tokens=200, cache_creation_1h_tokens=100) == 200


def test_one_hour_counts_an_upstream_got_wrong_are_clamped() -> None:
    price = Price("m", 1, 1, 1, cache_ratio=0.1, cache_creation_ratio=1.25, cache_creation_1h_ratio=2)
    # More one-hour writes than writes: all 100 writes one-hour → 100 × 2 = 200
    assert settle_quota(price, 100, 0, cache_creation_tokens=100, cache_creation_1h_tokens=500) == 200
    # Writes beyond what the reads leave of the prompt: 60 reads, 40 writes (all one-hour) → 6 + 80 = 86
    assert settle_quota(price, 100, 0, cached_tokens=60, cache_creation_tokens=90, cache_creation_1h_tokens=90) == 86
    assert settle_quota(price, 100, 0, cache_creation_tokens=-5, cache_creation_1h_tokens=-5) == 100
    per_call = Price("m", 0, 1, 1, model_price=0.01, cache_creation_1h_ratio=2)
    assert settle_quota(per_call, 1000, 0, cache_creation_tokens=1000, cache_creation_1h_tokens=1000) == 5000


# -- one-hour writes through the gateway: a Claude channel reporting both lifetimes -----------------

SONNET = "claude-sonnet-4-5-20250929"  # ratio 1.5, completion 5, cache read 0.1, writes 1.25 (5 min) and 2 (1 h)
# Anthropic's usage: `input_tokens` excludes both cache counts; `cache_creation` splits the writes by
# lifetime (anthropic-sdk-python src/anthropic/types/usage.py, cache_creation.py).
CLAUDE_USAGE = {"input_tokens": 21, "output_tokens": 9, "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 300,
                "cache_creation": {"ephemeral_5m_input_tokens": 180, "ephemeral_1h_input_tokens": 120}}
# (21 + 100 × 0.1 + 180 × 1.25 + 120 × 2 + 9 × 5) × 1.5 = (21 + 10 + 225 + 240 + 45) × 1.5 = 811.5 → 812
SONNET_QUOTA = 812


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
async def test_one_hour_writes_billed_through_a_claude_channel(gateway, aiohttp_server, stream: bool) -> None:
    fake = FakeClaude(usage=CLAUDE_USAGE)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=SONNET, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=100_000, unlimited=False)
    body = {"model": SONNET, "messages": [{"role": "user", "content": "Say hello."}], "stream": stream}
    async with gateway.post("/v1/chat/completions", json=body, headers=headers_for(token)) as resp:
        assert resp.status == 200, await resp.text()
        await resp.read()
    price = resolve_price(SONNET)
    assert settle_quota(price, 421, 9, cached_tokens=100, cache_creation_tokens=300,
                        cache_creation_1h_tokens=120) == SONNET_QUOTA
    assert await live_balance(gateway, user.id) == 1_000_000 - SONNET_QUOTA
    assert await live_balance(gateway, user.id, token.id) == 100_000 - SONNET_QUOTA
    assert await drain(gateway) == 1
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.quota, log.prompt_tokens, log.completion_tokens) == (SONNET_QUOTA, 421, 9)
    other = orjson.loads(log.other)
    assert (other["cache_tokens"], other["cache_ratio"]) == (100, 0.1)
    assert (other["cache_creation_tokens"], other["cache_creation_ratio"]) == (300, 1.25)
    assert (other["cache_creation_tokens_1h"], other["cache_creation_ratio_1h"]) == (120, 2)
    assert log.content.endswith("cache ratio 0.1, cache write ratio 1.25, 1-hour cache write ratio 2.0")
    assert (await User.get(id=user.id)).quota == 1_000_000 - SONNET_QUOTA
    assert (await Token.get(id=token.id)).remain_quota == 100_000 - SONNET_QUOTA
