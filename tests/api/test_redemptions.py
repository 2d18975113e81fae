"""Redemption codes: the admin catalogue, its rules, and redeeming exactly once."""
from __future__ import annotations

import asyncio
import re

import orjson
import pytest
from aiohttp.test_utils import TestClient

from api import keys
from api.services.billing.balances import user_quota_key
from api.services.passwords import sha256_hex
from models import Log, Redemption, User
from models.enums import LogType, RedemptionStatus, Role
from tests.helpers import ApiClient, both_databases, make_user


async def new_codes(admin: ApiClient, **fields) -> list[str]:
    body = await admin.post("/api/redemption/", {"name": "promo", "quota": 100000, "count": 1, **fields})
    assert body["success"], body
    return body["data"]


@both_databases
async def test_create_list_search_get(root: ApiClient) -> None:
    created = await new_codes(root, name="spring", quota=250000, count=3)
    assert len(created) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", k) for k in created)
    assert len(set(created)) == 3
    default = await root.post("/api/redemption/", {"name": "plain"})
    assert default["success"] and len(default["data"]) == 1
    assert (await Redemption.get(key=default["data"][0])).quota == 100000

    page = (await root.get("/api/redemption/?p=0&page_size=2"))["data"]
    assert page["total"] == 4 and page["page"] == 0 and page["page_size"] == 2
    assert [c["name"] for c in page["items"]] == ["plain", "spring"]
    first = (await root.get("/api/redemption/?p=1&page_size=2"))["data"]["items"]
    assert [c["name"] for c in first] == ["spring", "spring"]
    code = page["items"][1]
    assert code["status"] == 1 and code["used_user_id"] == 0 and code["quota"] == 250000

    by_name = (await root.get("/api/redemption/search?keyword=spr"))["data"]
    assert by_name["total"] == 3
    by_id = (await root.get(f"/api/redemption/search?keyword={code['id']}"))["data"]
    assert code["id"] in [c["id"] for c in by_id["items"]]
    got = (await root.get(f"/api/redemption/{code['id']}"))["data"]
    assert got["key"] == code["key"]
    assert (await root.get("/api/redemption/99999"))["message"] == "Redemption code not found"


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": ""}, "Please enter a name for the codes"),
    ({"name": "x" * 21}, "The name must be 1 to 20 characters long"),
    ({"count": 0}, "The count must be a positive integer"),
    ({"count": 101}, "At most 100 codes can be created at once"),
    ({"count": "a few"}, "Invalid parameter: count"),
    ({"quota": -5}, "The quota must be a positive integer"),
    ({"quota": 1.5}, "Invalid parameter: quota"),
])
async def test_create_rules(root: ApiClient, fields: dict, message: str) -> None:
    body = await root.post("/api/redemption/", {"name": "promo", "quota": 100000, "count": 1, **fields})
    assert body == {"success": False, "message": message, "data": None}
    assert await Redemption.all().count() == 0


async def test_count_up_to_the_maximum(root: ApiClient) -> None:
    assert len(await new_codes(root, count=100)) == 100


async def test_only_unused_codes_can_be_edited(root: ApiClient) -> None:
    unused, disabled, used = [await Redemption.get(key=k) for k in await new_codes(root, count=3)]
    await Redemption.filter(id=disabled.id).update(status=int(RedemptionStatus.DISABLED))
    await Redemption.filter(id=used.id).update(status=int(RedemptionStatus.USED), used_user_id=1)

    body = await root.put("/api/redemption/", {"id": unused.id, "name": "renamed", "quota": 42})
    assert body["success"] and body["data"]["name"] == "renamed" and body["data"]["quota"] == 42
    body = await root.put("/api/redemption/", {"id": disabled.id, "name": "nope"})
    assert body["message"] == "Only unused codes can be edited"
    body = await root.put("/api/redemption/", {"id": used.id, "quota": 10**9})
    assert body["message"] == "This code has been used and can no longer be changed"
    assert (await Redemption.get(id=used.id)).quota == 100000
    body = await root.put("/api/redemption/", {"id": unused.id, "name": ""})
    assert body["message"] == "Please enter a name for the codes"


async def test_status_only_unused_and_disabled(root: ApiClient) -> None:
    code, used = [await Redemption.get(key=k) for k in await new_codes(root, count=2)]
    await Redemption.filter(id=used.id).update(status=int(RedemptionStatus.USED))
    body = await root.put("/api/redemption/?status_only=true", {"id": code.id, "status": 2})
    assert body["success"] and body["data"]["status"] == 2
    body = await root.put("/api/redemption/?status_only=true", {"id": code.id, "status": 1})
    assert body["data"]["status"] == 1
    body = await root.put("/api/redemption/?status_only=true", {"id": code.id, "status": 3})
    assert body["message"] == "A code can only be set unused (1) or disabled (2)"
    for status in (1, 2):
        body = await root.put("/api/redemption/?status_only=true", {"id": used.id, "status": status})
        assert body["message"] == "This code has been used and can no longer be changed"
    assert (await Redemption.get(id=used.id)).status == RedemptionStatus.USED


async def test_delete(root: ApiClient) -> None:
    [key] = await new_codes(root)
    code = await Redemption.get(key=key)
    assert (await root.delete(f"/api/redemption/{code.id}/"))["success"]
    assert not await Redemption.filter(id=code.id).exists()
    assert (await root.delete(f"/api/redemption/{code.id}/"))["message"] == "Redemption code not found"


async def test_redemption_catalogue_is_admin_only(login_as, anon: ApiClient) -> None:
    user, _ = await login_as("alice")
    admin, _ = await login_as("boss", role=Role.ADMIN)
    [key] = await new_codes(admin)
    code = await Redemption.get(key=key)
    calls = [("GET", "/api/redemption/", None), ("GET", "/api/redemption/search?keyword=a", None),
             ("GET", f"/api/redemption/{code.id}", None), ("POST", "/api/redemption/", {"name": "x"}),
             ("PUT", "/api/redemption/", {"id": code.id, "name": "x"}),
             ("PUT", "/api/redemption/?status_only=true", {"id": code.id, "status": 2}),
             ("DELETE", f"/api/redemption/{code.id}/", None)]
    for method, path, payload in calls:
        body = await user.request(method, path, json=payload)
        assert body == {"success": False, "message": "You are not allowed to do this", "data": None}, path
        await anon.request(method, path, json=payload, expect_status=401)
    assert (await Redemption.get(id=code.id)).name == "promo" and await Redemption.all().count() == 1


@both_databases
async def test_redeem_credits_marks_and_logs(root: ApiClient, login_as, client) -> None:
    [key] = await new_codes(root, quota=300000)
    alice, user = await login_as("alice", quota=1000)
    store = client.app[keys.STORE]
    await store.redis.set(user_quota_key(store, user.id), 900)  # the relay's live balance (some spent)
    body = await alice.post("/api/user/topup", {"key": f"  {key} "})
    assert body == {"success": True, "message": "", "data": 300000}
    assert (await User.get(id=user.id)).quota == 301000
    assert int(await store.redis.get(user_quota_key(store, user.id))) == 300900
    code = await Redemption.get(key=key)
    assert code.status == RedemptionStatus.USED and code.used_user_id == user.id and code.redeemed_time > 0
    [entry] = await Log.filter(user_id=user.id)
    assert entry.type == LogType.TOPUP and entry.quota == 300000 and entry.username == "alice"
    assert "$0.600000" in entry.content and key not in entry.content
    assert orjson.loads(entry.other) == {"event": "redeemed", "params": {"id": code.id, "quota": 300000}}
    listing = (await root.get("/api/redemption/"))["data"]["items"]
    assert listing[0]["status"] == 3 and listing[0]["used_user_id"] == user.id


async def test_redeem_refusals(root: ApiClient, login_as) -> None:
    disabled_key, used_key = await new_codes(root, count=2)
    await Redemption.filter(key=disabled_key).update(status=int(RedemptionStatus.DISABLED))
    alice, user = await login_as("alice")
    assert (await alice.post("/api/user/topup", {"key": used_key}))["success"]
    cases = [({"key": ""}, "请输入兑换码！"), ({}, "请输入兑换码！"),
             ({"key": "0" * 32}, "无效的兑换码"), ({"key": "short"}, "无效的兑换码"),
             ({"key": disabled_key}, "该兑换码已被禁用"), ({"key": used_key}, "该兑换码已被使用")]
    for payload, message in cases:
        body = await alice.post("/api/user/topup", payload, headers={"Accept-Language": "zh-CN"})
        assert body == {"success": False, "message": message, "data": None}, payload
    assert (await User.get(id=user.id)).quota == 100000
    assert await Log.filter(user_id=user.id).count() == 1


async def test_redeem_attempts_are_rate_limited_per_user(root: ApiClient, login_as) -> None:
    alice, _ = await login_as("alice")
    bob, bob_user = await login_as("bob")
    for _ in range(10):
        assert (await alice.post("/api/user/topup", {"key": "f" * 32}))["message"] == "Invalid redemption code"
    body = await alice.post("/api/user/topup", {"key": "f" * 32}, expect_status=429)
    assert body["success"] is False
    [key] = await new_codes(root)
    assert (await alice.post("/api/user/topup", {"key": key}, expect_status=429))["success"] is False
    assert (await bob.post("/api/user/topup", {"key": key}))["data"] == 100000  # others are not affected


async def test_redeem_needs_a_login(anon: ApiClient) -> None:
    await anon.post("/api/user/topup", {"key": "a" * 32}, expect_status=401)


@both_databases
async def test_twenty_parallel_redemptions_credit_once(root: ApiClient, client) -> None:
    [key] = await new_codes(root, quota=777)
    users = [await make_user(f"racer{i}", access_token=sha256_hex(f"tok-{i}")) for i in range(20)]

    scripts = TestClient(client.server)  # access tokens, no cookie session

    async def attempt(i: int) -> dict:
        resp = await scripts.post("/api/user/topup", json={"key": key},
                                  headers={"Authorization": f"Bearer tok-{i}", "New-Api-User": str(users[i].id)})
        assert resp.status == 200
        return await resp.json()

    try:
        results = await asyncio.gather(*(attempt(i) for i in range(20)))
    finally:
        await scripts.session.close()  # not .close(): that would stop the shared server
    winners = [i for i, r in enumerate(results) if r["success"]]
    assert len(winners) == 1, results
    assert all(r["message"] == "This redemption code has already been used" for r in results if not r["success"])
    quotas = {u.id: u.quota for u in await User.filter(id__in=[u.id for u in users])}
    winner = users[winners[0]]
    assert quotas[winner.id] == 777 and sum(quotas.values()) == 777
    code = await Redemption.get(key=key)
    assert code.used_user_id == winner.id
    assert await Log.filter(type=int(LogType.TOPUP)).count() == 1
