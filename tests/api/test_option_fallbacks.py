"""The options ModelFallbacks and ModelRoutes (api/services/configuration/fallback_rules.py): a wrong
entry is refused with a message naming it, and nothing is changed."""
from __future__ import annotations

import pytest

from tests.api.test_option_rules import _refused, _value
from tests.helpers import ApiClient


@pytest.mark.parametrize(("value", "entry", "problem"), [
    ('{"gpt-5": ["gpt-4o"]}', "gpt-5", "must be an object with models"),
    ('{"gpt-5": {"models": []}}', "gpt-5", "models must be a non-empty list of model names"),
    ('{"gpt-5": {"models": ["a", "b", "c", "d", "e", "f"]}}', "gpt-5", "at most 5 models"),
    ('{"gpt-5": {"models": ["gpt-5"]}}', "gpt-5", "lists itself"),
    ('{"gpt-5": {"models": ["a", "a"]}}', "gpt-5", "a model is listed twice"),
    ('{"gpt-5": {"models": ["a"], "on": ["down"]}}', "gpt-5", "on must list some of unavailable, context, policy"),
    ('{"gpt-5": {"models": ["a"], "groups": "vip"}}', "gpt-5", "groups must be a list of group names"),
    ('{"gpt-5": {"models": ["a"], "when": 1}}', "gpt-5", "unknown field when"),
    ('{"a": {"models": ["b"]}, "b": {"models": ["c"]}, "c": {"models": ["a"]}}', "a", "its chain leads back to it"),
])
async def test_wrong_fallbacks_are_refused(root: ApiClient, value: str, entry: str, problem: str) -> None:
    await _refused(root, "ModelFallbacks", value, f"Invalid ModelFallbacks: entry {entry}: {problem}")


async def test_wrong_routes_are_refused_in_both_languages(root: ApiClient) -> None:
    await _refused(root, "ModelRoutes", '{"auto-*": {"models": ["a"]}}',
                   "Invalid ModelRoutes: entry auto-*: a route's name has no pattern")
    await _refused(root, "ModelRoutes", "{", "ModelRoutes is not a valid JSON string")
    body = await root.put("/api/option/", {"key": "ModelRoutes", "value": '{"r": {"models": []}}'},
                          headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "ModelRoutes 无效：条目 r：models must be a non-empty list of model names"


async def test_usable_chains_are_saved(root: ApiClient) -> None:
    value = ('{"claude-*": {"models": ["gpt-5", "gemini-2.5-pro"], "on": ["unavailable", "context", "policy"], '
             '"groups": ["default"]}, "gpt-5": {"models": ["gpt-4o"]}}')
    assert (await root.put("/api/option/", {"key": "ModelFallbacks", "value": value}))["success"]
    assert await _value("ModelFallbacks") == value
    routes = '{"auto-coder": {"models": ["claude-opus-4-1", "gpt-5", "gemini-2.5-pro"]}}'
    assert (await root.put("/api/option/", {"key": "ModelRoutes", "value": routes}))["success"]
    assert await _value("ModelRoutes") == routes


@pytest.mark.parametrize(("value", "message"), [
    ("-1", "FallbackStickySeconds must be between 0 and 86400"),
    ("86401", "FallbackStickySeconds must be between 0 and 86400"),
    ("1.5", "FallbackStickySeconds must be an integer"),
])
async def test_a_wrong_stickiness_is_refused(root: ApiClient, value: str, message: str) -> None:
    await _refused(root, "FallbackStickySeconds", value, message)


async def test_stickiness_is_off_by_default_and_saved(root: ApiClient) -> None:
    assert await _value("FallbackStickySeconds") in (None, "0")
    assert (await root.put("/api/option/", {"key": "FallbackStickySeconds", "value": "600"}))["success"]
    assert await _value("FallbackStickySeconds") == "600"
