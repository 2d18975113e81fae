"""Every validation rule of the runtime options (api/services/configuration/option_rules.py; docs/compatibility.md,
"Options"): the message, and nothing changed."""
from __future__ import annotations

import pytest

from models import Option
from tests.helpers import ApiClient


async def _value(key: str) -> str | None:
    row = await Option.filter(key=key).first()
    return row.value if row else None


async def _refused(root: ApiClient, key: str, value: object, message: str) -> None:
    before = await _value(key)
    listed_before = {o["key"]: o["value"] for o in (await root.get("/api/option/"))["data"]}
    body = await root.put("/api/option/", {"key": key, "value": value})
    assert body["success"] is False, body
    assert body["message"] == message
    assert await _value(key) == before
    listed_after = {o["key"]: o["value"] for o in (await root.get("/api/option/"))["data"]}
    assert listed_after == listed_before


@pytest.fixture
async def with_server_address(root: ApiClient) -> ApiClient:
    assert (await root.put("/api/option/", {"key": "ServerAddress", "value": "https://gw.example.com"}))["success"]
    return root


@pytest.mark.parametrize("key", ["ModelPrice", "ModelRatio", "CompletionRatio", "GroupRatio", "UserUsableGroups",
                                 "Chats"])
async def test_json_options_must_be_valid_json(root: ApiClient, key: str) -> None:
    await _refused(root, key, "{not json", f"{key} is not a valid JSON string")


async def test_topup_group_ratio_must_be_json(with_server_address: ApiClient) -> None:
    await _refused(with_server_address, "TopupGroupRatio", "{", "TopupGroupRatio is not a valid JSON string")


@pytest.mark.parametrize("key", ["ModelRatio", "GroupRatio", "CompletionRatio", "ModelPrice"])
async def test_ratio_maps_hold_non_negative_numbers(root: ApiClient, key: str) -> None:
    await _refused(root, key, '{"gpt-4": -1}', f"{key} must be a JSON object of non-negative numbers")
    await _refused(root, key, '["gpt-4"]', f"{key} must be a JSON object of non-negative numbers")


async def test_chats_shape(root: ApiClient) -> None:
    await _refused(root, "Chats", '{"a": "b"}',
                   "Chats must be a JSON list of objects mapping a name to a URL template")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("StripeApiSecret", "pk_live_123", "Invalid Stripe API key: it must start with sk_"),
    ("StripeWebhookSecret", "wh_123", "Invalid Stripe webhook signing key: it must start with whsec_"),
    ("StripePriceId", "prod_123", "Invalid Stripe price ID: it must start with price_"),
])
async def test_stripe_prefixes(with_server_address: ApiClient, key: str, value: str, message: str) -> None:
    await _refused(with_server_address, key, value, message)


@pytest.mark.parametrize("key", ["StripeApiSecret", "StripeWebhookSecret", "StripePriceId", "StripeUnitPrice",
                                 "MinTopUp", "TopupGroupRatio"])
async def test_payment_settings_need_server_address(root: ApiClient, key: str) -> None:
    values = {"StripeApiSecret": "sk_x", "StripeWebhookSecret": "whsec_x", "StripePriceId": "price_x",
              "StripeUnitPrice": "7", "MinTopUp": "2", "TopupGroupRatio": "{}"}
    await _refused(root, key, values[key], "Set the server address before saving payment settings")


async def test_trailing_slashes_are_stripped(with_server_address: ApiClient) -> None:
    root = with_server_address
    for key, value in (("OutProxyUrl", "http://proxy:8080/"), ("StripePriceId", "price_abc/"),
                       ("StripeWebhookSecret", "whsec_abc/")):
        assert (await root.put("/api/option/", {"key": key, "value": value}))["success"]
        assert await _value(key) == value.rstrip("/")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("StripeUnitPrice", "-1", "StripeUnitPrice must be at least 0"),
    ("MinTopUp", "0", "MinTopUp must be at least 1"),
    ("MinTopUp", "1.5", "MinTopUp must be an integer"),
    ("LinuxDoMinLevel", "5", "LinuxDoMinLevel must be between 0 and 4"),
    ("LinuxDoMinLevel", "-1", "LinuxDoMinLevel must be between 0 and 4"),
    ("DataExportInterval", "0", "DataExportInterval must be at least 1"),
    ("ChannelDisableThreshold", "-0.5", "ChannelDisableThreshold must be at least 0"),
    ("QuotaRemindThreshold", "-1", "QuotaRemindThreshold must be at least 0"),
    ("QuotaForNewUser", "-1", "QuotaForNewUser must be at least 0"),
    ("PreConsumedQuota", "-1", "PreConsumedQuota must be at least 0"),
    ("QuotaForInviter", "-5", "QuotaForInviter must be at least 0"),
    ("QuotaForInvitee", "abc", "QuotaForInvitee must be a number"),
])
async def test_numeric_limits(with_server_address: ApiClient, key: str, value: str, message: str) -> None:
    await _refused(with_server_address, key, value, message)


async def test_numeric_limits_accept_the_bounds(with_server_address: ApiClient) -> None:
    root = with_server_address
    for key, value in (("StripeUnitPrice", "0"), ("MinTopUp", "1"), ("LinuxDoMinLevel", "4"),
                       ("DataExportInterval", "1"), ("ChannelDisableThreshold", "0"), ("QuotaForNewUser", "0")):
        assert (await root.put("/api/option/", {"key": key, "value": value}))["success"], key
        assert await _value(key) == value


async def test_booleans_and_unknown_keys(root: ApiClient) -> None:
    await _refused(root, "RegisterEnabled", "yes", "RegisterEnabled must be true or false")
    await _refused(root, "NoSuchOption", "1", "Unknown option: NoSuchOption")
    body = await root.put("/api/option/", {"value": "1"})
    assert body == {"success": False, "message": "Invalid parameter: key", "data": None}


async def test_enabling_a_login_provider_needs_its_credentials(root: ApiClient) -> None:
    await _refused(root, "GitHubOAuthEnabled", "true", "Fill in GitHubClientId before enabling GitHubOAuthEnabled")
    await root.put("/api/option/", {"key": "GitHubClientId", "value": "cid"})
    await root.put("/api/option/", {"key": "GitHubClientSecret", "value": "secret"})
    assert (await root.put("/api/option/", {"key": "GitHubOAuthEnabled", "value": "true"}))["success"]
    assert (await root.get("/api/status"))["data"]["github_oauth"] is True


async def test_data_export_default_time(root: ApiClient) -> None:
    await _refused(root, "DataExportDefaultTime", "month", "DataExportDefaultTime must be hour, day or week")


async def test_messages_in_chinese(root: ApiClient) -> None:
    body = await root.put("/api/option/", {"key": "ModelRatio", "value": "{"},
                          headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "ModelRatio 不是合法的 JSON 字符串"


async def test_reset_model_ratio(root: ApiClient) -> None:
    from api.services.configuration.option_rules import DEFAULTS

    await root.put("/api/option/", {"key": "ModelRatio", "value": '{"m": 3}'})
    assert (await root.post("/api/option/rest_model_ratio"))["success"]
    assert await _value("ModelRatio") == DEFAULTS["ModelRatio"]


@pytest.mark.parametrize(("value", "problem"), [
    ('["gpt-5"]', "it must be a JSON object: model pattern → the fields to change"),
    ('{"gpt-*-mini": {}}', "'gpt-*-mini': a pattern is a model name, or a prefix ending in *"),
    ('{"gpt-5*": 128000}', "gpt-5*: the fields to change must be a JSON object"),
    ('{"gpt-5*": {"max_output": -1}}', "gpt-5*.max_output: a positive whole number of tokens, or null"),
    ('{"gpt-5*": {"output_param": "max_output_tokens"}}',
     "gpt-5*.output_param: max_tokens or max_completion_tokens"),
    ('{"kimi-k3*": {"reasoning": "deep"}}', "kimi-k3*.reasoning: one of none, effort, switch, claude-budget, "
                                             "claude-adaptive, gemini-budget, gemini-level"),
    ('{"gpt-5*": {"efforts": ["highest"]}}', "gpt-5*.efforts: a list of: none, minimal, low, medium, high, xhigh, max"),
    ('{"gpt-5*": {"thinks_by_default": "yes"}}', "gpt-5*.thinks_by_default: true or false"),
])
async def test_model_capabilities_are_checked_when_saved(root: ApiClient, value: str, problem: str) -> None:
    await _refused(root, "ModelCapabilities", value, f"Invalid ModelCapabilities: {problem}")


async def test_model_capabilities_unknown_field_json_and_chinese(root: ApiClient) -> None:
    from api.services.configuration.capabilities import Capability

    known = ", ".join(sorted(f for f in Capability.__dataclass_fields__ if f != "pattern"))
    await _refused(root, "ModelCapabilities", '{"gpt-5*": {"colour": "red"}}',
                   f"Invalid ModelCapabilities: gpt-5*.colour: unknown field (known: {known})")
    await _refused(root, "ModelCapabilities", "{", "ModelCapabilities is not a valid JSON string")
    body = await root.put("/api/option/", {"key": "ModelCapabilities", "value": '{"gpt-5*": {"max_output": 0}}'},
                          headers={"Accept-Language": "zh-CN"})
    assert body["message"] == "ModelCapabilities 无效：gpt-5*.max_output: a positive whole number of tokens, or null"


async def test_usable_model_capabilities_are_saved(root: ApiClient) -> None:
    value = ('{"my-reasoner*": {"output_param": "max_completion_tokens", "max_output": 32000, "reasoning": "effort", '
             '"efforts": ["low", "high"], "sampling": ["seed"]}}')
    assert (await root.put("/api/option/", {"key": "ModelCapabilities", "value": value}))["success"]
    assert await _value("ModelCapabilities") == value
    assert (await root.put("/api/option/", {"key": "ModelCapabilities", "value": "{}"}))["success"]
