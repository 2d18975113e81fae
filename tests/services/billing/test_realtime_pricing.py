"""The price of one Realtime response (api/services/billing/realtime_pricing.py): each kind of token at its
ratio, a missing ratio billing that kind as its text counterpart, wrong counts clamped, a per-call price."""
from __future__ import annotations

from api.services.billing import pricing
from api.services.billing.realtime_pricing import AudioPrice, RealtimeUsage, audio_price_of, realtime_quota
from tests.relay.realtime.realtime_kit import QUOTA_1, QUOTA_2, USAGE_1, USAGE_2

PRICE = pricing.Price("gpt-realtime-1.5", 2, 4, 1, cache_ratio=0.1)
AUDIO = AudioPrice(8, 2, 0.0125)


class Options:
    def __init__(self, **tables: object) -> None:
        self.tables = tables

    def get_json(self, key: str) -> object:
        return self.tables.get(key)

    def get_bool(self, key: str) -> bool:
        return False


def usage(raw: dict[str, object]) -> RealtimeUsage:
    parsed = RealtimeUsage.from_realtime(raw)
    assert parsed is not None
    return parsed


def test_each_kind_at_its_ratio() -> None:
    assert realtime_quota(PRICE, AUDIO, usage(USAGE_1)) == QUOTA_1
    assert realtime_quota(PRICE, AUDIO, usage(USAGE_2)) == QUOTA_2
    assert usage(USAGE_2).details() == {"audio_input_tokens": 200, "cached_audio_tokens": 170,
                                        "audio_output_tokens": 40}


def test_missing_ratios_bill_audio_as_text() -> None:
    # no audio ratios at all: (100 − 80 + 80 × 0.1 + 200 + 10 × 4 + 40 × 4) × 2 = 856
    assert realtime_quota(PRICE, AudioPrice(), usage(USAGE_2)) == 856
    # no cache ratio either: (300 + 50 × 4) × 2 = 1000, the plain ratio price
    plain = pricing.Price("m", 2, 4, 1)
    assert realtime_quota(plain, AudioPrice(), usage(USAGE_2)) == pricing.settle_quota(plain, 300, 50) == 1000


def test_wrong_counts_are_clamped() -> None:
    odd = RealtimeUsage(10, 5, 50, audio_input_tokens=40, cached_audio_tokens=90, audio_output_tokens=9)
    # audio in 10 (all input), cached 10 (all of it audio), audio out 5: (10 × 8 × 0.0125 + 5 × 8 × 2) × 2 = 162
    assert realtime_quota(PRICE, AUDIO, odd) == 162


def test_no_usage_and_per_call_prices() -> None:
    assert RealtimeUsage.from_realtime(None) is None
    assert RealtimeUsage.from_realtime({"input_tokens": 0, "output_tokens": 0}) is None
    assert realtime_quota(PRICE, AUDIO, RealtimeUsage(0, 0)) == 0
    per_call = pricing.Price("m", 0, 1, 2, model_price=0.01)
    assert realtime_quota(per_call, AUDIO, usage(USAGE_1), quota_per_unit=500_000) == 10_000


def test_audio_prices_from_the_options() -> None:
    options = Options(AudioRatio={"gpt-realtime-1.5": 8}, AudioCompletionRatio={"gpt-realtime-1.5": 2},
                      AudioCacheRatio="not a table")
    assert audio_price_of(options, "gpt-realtime-1.5") == AudioPrice(8.0, 2.0, None)
    assert audio_price_of(options, "other") == AudioPrice()
