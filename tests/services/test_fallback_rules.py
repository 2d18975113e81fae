"""The chains' table read from the options (api/services/configuration/fallback_rules.py)."""
from __future__ import annotations

import pytest

from api.errors import ApiError
from api.services.configuration import fallback_rules as rules


def test_an_exact_name_wins_over_a_pattern_and_groups_limit_an_entry() -> None:
    table = rules.table(rules.FALLBACKS, '{"gpt-*": {"models": ["b"]}, "gpt-5": {"models": ["a"], '
                                         '"groups": ["vip"], "on": ["policy"]}}')
    vip = table.find("gpt-5", "vip")
    assert vip is not None and vip.models == ("a",) and vip.on == {"policy"}
    other = table.find("gpt-5", "default")
    assert other is not None and other.models == ("b",) and other.on == {"unavailable", "context"}
    assert table.find("claude-x", "vip") is None


def test_an_empty_option_has_no_chains_and_is_falsy() -> None:
    assert not rules.table(rules.FALLBACKS, "{}")
    assert rules.table(rules.FALLBACKS, "{}").find("gpt-5", "default") is None


def test_a_loop_through_patterns_is_not_followed_but_exact_loops_are_refused() -> None:
    with pytest.raises(ApiError) as refused:
        rules.parse(rules.FALLBACKS, '{"a": {"models": ["b"]}, "b": {"models": ["a"]}}')
    assert refused.value.params == {"key": "ModelFallbacks", "entry": "a", "problem": "its chain leads back to it"}
    rules.parse(rules.FALLBACKS, '{"a": {"models": ["b"]}, "b": {"models": ["c"]}}')
