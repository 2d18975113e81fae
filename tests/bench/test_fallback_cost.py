"""bench/fallback_cost.py's pure parts: the settings it switches are options the gateway takes, their
order alternates between rounds, and the ratios are each setting's median over the median without a chain."""
from __future__ import annotations

import pytest

from api.services.configuration import fallback_rules, option_rules
from bench.fallback_cost import SETTINGS, order, ratios, render
from bench.gateway import FAST_MODEL, SLOW_MODEL


def test_the_settings_are_options_the_gateway_takes() -> None:
    for values in SETTINGS.values():
        assert set(values) == {fallback_rules.FALLBACKS, fallback_rules.STICKY}
        for key, value in values.items():
            assert option_rules.normalize(key, value, option_rules.DEFAULTS) == value
    entries = fallback_rules.parse(fallback_rules.FALLBACKS, SETTINGS["chain"]["ModelFallbacks"])
    assert entries[FAST_MODEL].models == (SLOW_MODEL,)


def test_rounds_alternate_so_a_drift_hits_every_setting_alike() -> None:
    assert order(1) == ["none", "chain", "sticky"] and order(2) == ["sticky", "chain", "none"]


def test_the_ratio_is_each_median_over_the_median_without_a_chain() -> None:
    per = {"none": [1.0, 1.2, 1.1], "chain": [1.1, 1.3, 1.2], "sticky": [1.4, 1.2]}
    found = ratios(per)
    assert found["none"] == 1.0
    assert found["chain"] == pytest.approx(1.2 / 1.1)
    assert found["sticky"] == pytest.approx(1.3 / 1.1)
    table = render(per, {"sticky": 2}, "header")
    assert "| chain | 1.200 | 1.100, 1.300, 1.200 | 1.091× | 0 |" in table
    assert "| sticky | 1.300 | 1.400, 1.200 | 1.182× | 2 |" in table
