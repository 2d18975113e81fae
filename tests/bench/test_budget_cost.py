"""bench/budget_cost.py's pure parts: the limits it puts on the key are limits a key takes, three of
them in two windows, far above what the bench sends; the order alternates between rounds; the ratio is
each setting's median over the median without limits."""
from __future__ import annotations

import pytest

from api.services.budgets.limits import normalise, parse_limits
from api.services.budgets.plan import Planner
from bench.budget_cost import SETTINGS, THREE, order, ratios, render
from bench.gateway import FAST_MODEL


def test_the_three_limits_are_limits_a_key_takes_in_two_windows() -> None:
    assert SETTINGS["none"] == []
    limits = parse_limits(THREE)
    assert normalise(THREE) and [(lim.window, lim.measure) for lim in limits] == [
        ("day", "quota"), ("day", "requests"), ("minute", "tokens")]
    rules = Planner().rules_for(1, limits, (), "default", (), FAST_MODEL)
    assert len(rules) == 2  # the day's two limits share one window hash
    assert all(cap >= 10**12 or cap == -1 for rule in rules for cap in rule.caps)


def test_rounds_alternate_so_a_drift_hits_both_alike() -> None:
    assert order(1) == ["none", "three"] and order(2) == ["three", "none"]


def test_the_ratio_is_each_median_over_the_median_without_limits() -> None:
    per = {"none": [1.0, 1.2, 1.1], "three": [1.1, 1.3, 1.2]}
    assert ratios(per)["three"] == pytest.approx(1.2 / 1.1)
    table = render(per, {"three": [0.1, 0.2, 0.3]}, {"none": [30.0], "three": [40.0, 42.0]}, {"three": 1}, "header")
    assert "| three | 1.200 | 1.100, 1.300, 1.200 | 1.091× | 0.200 | 41.0 | 1 |" in table
    assert "| none | 1.100 | 1.000, 1.200, 1.100 | 1.000× | – | 30.0 | 0 |" in table
