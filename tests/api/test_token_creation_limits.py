"""Creating API keys (POST /api/token/) is bounded per user: TokenCreationsPerMinute a minute (429 in the
console's envelope) and MaxTokensPerUser held (a refusal naming the bound); both in English and Chinese, a
refused creation making nothing, other users unaffected."""
from __future__ import annotations

from api import keys
from api.services.configuration.option_rules import DEFAULTS
from models import Token
from tests.helpers import ApiClient

BODY = {"name": "k", "remain_quota": 0, "expired_time": -1, "unlimited_quota": True}
ZH = {"Accept-Language": "zh-CN"}


async def test_the_defaults() -> None:
    assert (DEFAULTS["TokenCreationsPerMinute"], DEFAULTS["MaxTokensPerUser"]) == ("30", "1000")


async def test_key_creation_is_rate_limited_per_user(client, login_as) -> None:
    await client.server.app[keys.OPTIONS].update("TokenCreationsPerMinute", "3")
    alice, user = await login_as("alice")
    for _ in range(3):
        assert (await alice.post("/api/token/", BODY))["success"]
    refused = await alice.post("/api/token/", BODY, expect_status=429)
    assert refused == {"success": False, "data": None,
                       "message": "At most 3 tokens may be created per minute: try again in a minute"}
    zh = await alice.post("/api/token/", BODY, headers=ZH, expect_status=429)
    assert zh["message"] == "每分钟最多创建 3 个令牌，请一分钟后再试"
    assert await Token.filter(user_id=user.id).count() == 3
    bob, _ = await login_as("bob")
    assert (await bob.post("/api/token/", BODY))["success"]  # the limit is each user's


async def test_a_user_holds_at_most_max_tokens(client, login_as) -> None:
    await client.server.app[keys.OPTIONS].update("MaxTokensPerUser", "5")
    alice, user = await login_as("alice")
    for i in range(4):
        await Token.create(user_id=user.id, key=f"{i}" * 48, name=f"old-{i}")
    assert (await alice.post("/api/token/", BODY))["success"]
    refused = await alice.post("/api/token/", BODY)
    assert refused == {"success": False, "data": None,
                       "message": "You already have 5 tokens, the most a user may hold: delete one to create another"}
    zh = await alice.post("/api/token/", BODY, headers=ZH)
    assert zh["message"] == "您已有 5 个令牌，已达上限，请删除不用的令牌后再创建"
    assert await Token.filter(user_id=user.id).count() == 5
    first = await Token.filter(user_id=user.id).first()
    assert first is not None
    assert (await alice.delete(f"/api/token/{first.id}"))["success"]
    assert (await alice.post("/api/token/", BODY))["success"]  # a place freed by a deletion
    other: ApiClient = (await login_as("bob"))[0]
    assert (await other.post("/api/token/", BODY))["success"]
