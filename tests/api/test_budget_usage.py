# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Limits over time made visible: after requests through the relay, the key views (/api/token/), the
admin's user views (/api/user/), the user's own /api/user/self/limits, new-api's /api/usage/token
and /v1/dashboard/billing/subscription say each limit's usage and reset, live from Redis, from the
database's windows while Redis lost the user's balance (one query for a page), each route behind its
role or key."""
from __future__ import annotations

import orjson
import pytest
from aiohttp.test_utils import TestClient

from api import keys
from api.services.budgets import usage as budget_usage
from api.services.budgets.limits import normalise
from api.services.budgets.usage import LimitUsage, binding
from api.services.budgets.windows import bounds
from models import Token, User
from models.enums import Role, TokenStatus
from tests.helpers import ApiClient, both_databases, make_user
from tests.relay.fakes import add_channel, drain, gateway, headers_for, make_key, relay_of, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "Write me a long story."}], "max_tokens": 20}
CHARGE = 20  # each request settles 13 + 7 = 20 quota, 20 tokens
KEY_LIMITS = [{"window": "day", "requests": 3}, {"window": "5h", "quota": 10**6, "soft": 80},
              {"window": "hour", "model": "gpt-5*", "requests": 9}]
USER_LIMITS = [{"window": "day", "requests": 5}]
GROUP_LIMITS = {"default": [{"window": "week", "tokens": 1000}]}


@pytest.fixture
async def browser(gateway: TestClient):
    """browser(username) → an ApiClient logged in, in its own browser (closed after the test)."""
    opened: list[TestClient] = []

    async def login(username: str, password: str = "password123") -> ApiClient:
        client = TestClient(gateway.server)
        opened.append(client)
        api = ApiClient(client)
        await api.login(username, password)
        return api

    yield login
    for client in opened:
        await client.close()


async def setup(gateway: TestClient, upstreams, browser) -> tuple[User, Token, ApiClient]:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelRatio", '{"gpt-4": 1}')
    await options.update("CompletionRatio", '{"gpt-4": 1}')
    await options.update("GroupLimits", orjson.dumps(GROUP_LIMITS).decode())
    await add_channel(gateway, await upstreams())
    user = await rich_user(limits=normalise(USER_LIMITS))
    token = await make_key(user, limits=normalise(KEY_LIMITS), name="limited")
    for _ in range(2):
        resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
        assert resp.status == 200, await resp.text()
    return user, token, await browser("alice")


def clock(gateway: TestClient) -> float:
    return relay_of(gateway).quota.clock()


def by_index(entries: list[LimitUsage]) -> dict[int, LimitUsage]:
    return {e["index"]: e for e in entries}


@both_databases
async def test_the_key_and_user_views_carry_each_limits_usage_and_reset(gateway, upstreams, browser) -> None:
    user, token, alice = await setup(gateway, upstreams, browser)
    now = clock(gateway)
    day_start, day_end = bounds("day", now)
    listed = await alice.get("/api/token/")
    [item] = listed["data"]["items"]
    entries = by_index(item["limit_usage"])
    assert entries[0] == {"index": 0, "owner": "key", "window": "day", "measure": "requests", "model": "",
                          "limit": 3, "used": 2, "soft": 0, "window_start": day_start, "resets_at": day_end}
    rolling = entries[1]
    assert (rolling["used"], rolling["limit"], rolling["soft"]) == (2 * CHARGE, 10**6, 80)
    assert rolling["window_start"] is not None and rolling["resets_at"] == rolling["window_start"] + 5 * 3600
    assert rolling["window_start"] <= now < rolling["resets_at"]
    assert (entries[2]["model"], entries[2]["used"], entries[2]["resets_at"]) == ("gpt-5*", 0, bounds("hour", now)[1])
    got = await alice.get(f"/api/token/{token.id}")
    assert got["data"]["limit_usage"] == item["limit_usage"]
    searched = await alice.get("/api/token/search?keyword=limited")
    assert searched["data"]["items"][0]["limit_usage"] == item["limit_usage"]

    own = (await alice.get("/api/user/self/limits"))["data"]
    assert own["group"] == "default" and own["time_zone"] == "UTC"
    assert [(e["owner"], e["index"], e["measure"], e["limit"], e["used"]) for e in own["items"]] == [
        ("user", 0, "requests", 5, 2), ("group", 0, "tokens", 1000, 2 * CHARGE)]
    assert own["items"][1]["resets_at"] == bounds("week", now)[1]

    root = await browser("root", "123456")
    managed = (await root.get(f"/api/user/{user.id}"))["data"]
    assert [(e["owner"], e["used"], e["resets_at"]) for e in managed["limit_usage"]] == [("user", 2, day_end)]
    page = (await root.get("/api/user/?p=0&page_size=100"))["data"]["items"]
    assert [u["limit_usage"] for u in page if u["id"] == user.id] == [managed["limit_usage"]]
    assert all(u["limit_usage"] == [] for u in page if u["id"] != user.id)


@both_databases
async def test_the_key_authenticated_reports_answer_the_limit_that_binds_first(gateway, upstreams, browser) -> None:
    _, token, _ = await setup(gateway, upstreams, browser)
    # Left: key day 1/3 requests, user day 3/5, group week 960/1000 tokens, 5h almost all: the key's day binds.
    body = await (await gateway.get("/api/usage/token", headers=headers_for(token))).json()
    assert body["success"] is True and body["code"] is True and body["message"] == "ok"
    data = body["data"]
    assert data["object"] == "token_usage" and data["name"] == "limited" and data["expires_at"] == 0
    bound = data["binding_limit"]
    assert (bound["owner"], bound["index"], bound["window"], bound["measure"]) == ("key", 0, "day", "requests")
    assert (bound["limit"], bound["used"], bound["remaining"], bound["resets_at"]) == (3, 2, 1, bounds("day",
                                                                                                       clock(gateway))[1])
    sub = await (await gateway.get("/v1/dashboard/billing/subscription", headers=headers_for(token))).json()
    assert sub["object"] == "billing_subscription" and sub["binding_limit"] == bound
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert resp.status == 200
    bound = (await (await gateway.get("/api/usage/token", headers=headers_for(token))).json())["data"]["binding_limit"]
    assert (bound["owner"], bound["used"], bound["remaining"]) == ("key", 3, 0)

    quiet = await make_key(await User.get(username="alice"), name="no limits of its own")
    bound = (await (await gateway.get("/api/usage/token", headers=headers_for(quiet))).json())["data"]["binding_limit"]
    assert (bound["owner"], bound["window"], bound["used"], bound["limit"]) == ("user", "day", 3, 5)
    lone = await make_key(await make_user("carol", group="solo"))
    sub = await (await gateway.get("/dashboard/billing/subscription", headers=headers_for(lone))).json()
    assert sub["binding_limit"] is None


async def test_a_quota_limit_on_the_subscription_is_in_its_unit(gateway, upstreams, browser) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("DisplayInCurrencyEnabled", "true")
    await options.update("QuotaPerUnit", "500000")
    user = await rich_user()
    token = await make_key(user, limits=normalise([{"window": "month", "quota": 250000}]))
    sub = await (await gateway.get("/v1/dashboard/billing/subscription", headers=headers_for(token))).json()
    assert (sub["binding_limit"]["limit"], sub["binding_limit"]["used"], sub["binding_limit"]["remaining"]) == (
        0.5, 0, 0.5)
    data = (await (await gateway.get("/api/usage/token", headers=headers_for(token))).json())["data"]
    assert data["binding_limit"]["limit"] == 250000  # new-api's route speaks quota units


@both_databases
async def test_without_the_balance_in_redis_the_windows_come_from_the_database_in_one_query(
        gateway, upstreams, browser, monkeypatch) -> None:
    user, token, alice = await setup(gateway, upstreams, browser)
    others = [await make_key(user, name=f"more {i}", limits=normalise([{"window": "day", "requests": 50}]))
              for i in range(3)]
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(others[0]))
    assert resp.status == 200
    assert await drain(gateway)  # the windows are in the database
    live = (await alice.get("/api/token/?p=0&size=10"))["data"]["items"]
    queries: list[list[int]] = []
    real = budget_usage._open_rows

    async def counted(user_ids, now):
        queries.append(list(user_ids))
        return await real(user_ids, now)

    monkeypatch.setattr(budget_usage, "_open_rows", counted)
    assert (await alice.get("/api/token/?p=0&size=10"))["data"]["items"] == live
    assert queries == []  # live: no query
    store = gateway.server.app[keys.STORE]
    async for key in store.redis.scan_iter(match=f"{store.prefix}{{u{user.id}}}:*"):
        await store.redis.delete(key)  # Redis lost the user's keys (this test's own prefix)
    from_db = (await alice.get("/api/token/?p=0&size=10"))["data"]["items"]
    assert queries == [[user.id]]  # one query for the page of four keys
    assert from_db == live
    used = {t["name"]: [e["used"] for e in t["limit_usage"]] for t in from_db}
    assert used == {"limited": [2, 2 * CHARGE, 0], "more 0": [1], "more 1": [0], "more 2": [0]}


async def test_each_route_checks_its_role_or_key(gateway, browser) -> None:
    alice_user = await rich_user(limits=normalise(USER_LIMITS))
    token = await make_key(alice_user, limits=normalise(KEY_LIMITS))
    bob_user = await make_user("bob")
    bob_token = await make_key(bob_user)
    anon = ApiClient(gateway)
    assert (await anon.get("/api/user/self/limits", expect_status=401))["success"] is False
    missing = await anon.get("/api/usage/token", expect_status=401)
    assert missing["success"] is False and "No API key" in missing["message"]
    wrong = await anon.get("/api/usage/token", headers={"Authorization": "Bearer sk-" + "x" * 48},
                           expect_status=401)
    assert wrong == {"success": False, "message": "Invalid API key", "data": None}
    await anon.get("/api/usage/token", headers={"Authorization": "Bearer sk-" + "é" * 10}, expect_status=401)
    await Token.filter(id=token.id).update(status=int(TokenStatus.DISABLED))
    read = await anon.get("/api/usage/token", headers=headers_for(token))  # a disabled key still reads its own
    assert read["data"]["binding_limit"]["owner"] == "key"
    await User.filter(id=alice_user.id).update(status=2)
    banned = await anon.get("/api/usage/token", headers=headers_for(token), expect_status=401)
    assert banned["success"] is False
    bob = await browser("bob")
    assert (await bob.get(f"/api/token/{token.id}"))["success"] is False  # not his key
    assert [t["id"] for t in (await bob.get("/api/token/"))["data"]["items"]] == [bob_token.id]
    assert (await bob.get(f"/api/user/{alice_user.id}", expect_status=None))["success"] is False  # an admin's view
    assert (await bob.get("/api/user/self/limits"))["data"]["items"] == []
    await User.filter(id=bob_user.id).update(role=int(Role.ADMIN))
    assert (await bob.get(f"/api/user/{alice_user.id}"))["data"]["limit_usage"][0]["limit"] == 5


def entry(limit: int, used: int, resets_at: int | None = 100) -> LimitUsage:
    return LimitUsage(index=0, owner="key", window="day", measure="requests", model="", limit=limit, used=used,
                      soft=0, window_start=None, resets_at=resets_at)


def test_the_binding_limit_is_the_least_room_relative_to_its_limit() -> None:
    assert binding([]) is None
    assert binding([entry(10, 5), entry(1000, 900), entry(4, 1)]) == entry(1000, 900)
    assert binding([entry(10, 12), entry(0, 0)]) in (entry(10, 12), entry(0, 0))  # both without room
    assert binding([entry(10, 10, 50), entry(5, 5, 500)]) == entry(5, 5, 500)  # full alike: the longer wait
    assert binding([entry(10, 5, None), entry(10, 5, 100)]) == entry(10, 5, None)
